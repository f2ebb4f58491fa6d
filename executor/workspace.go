package executor

import (
	"encoding/binary"
	"hash/fnv"
	"io/fs"
	"path/filepath"
	"strings"
)

// rollbackPrefix begins the names of a rollback's staging directories
// (checkpoints.StagePrefix), which are not the agent's changes.
const rollbackPrefix = ".sandox-rollback-"

// workspaceFingerprint digests the metadata of every entry below dir (path,
// type and mode, size, modification time), without reading any content.
// Two equal fingerprints mean, as far as metadata tells, an unchanged
// workspace; a write changes the file's mtime and so the fingerprint. Entries
// that cannot be read are skipped.
func workspaceFingerprint(dir string) uint64 {
	h := fnv.New64a()
	var buf [8]byte
	num := func(v uint64) {
		binary.LittleEndian.PutUint64(buf[:], v)
		h.Write(buf[:])
	}
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(dir, path)
		if rel == "." {
			return nil // its mtime moves with its entries, which are digested
		}
		if d.IsDir() && strings.HasPrefix(rel, rollbackPrefix) && !strings.Contains(rel, string(filepath.Separator)) {
			return filepath.SkipDir
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		h.Write([]byte(rel))
		h.Write([]byte{0})
		num(uint64(info.Mode()))
		num(uint64(info.Size()))
		num(uint64(info.ModTime().UnixNano()))
		return nil
	})
	return h.Sum64()
}

package checkpoints

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/sandox/sandox/schemas"
)

// StagePrefix begins the names of the directories a rollback stages its
// files in and moves the old workspace to, at the top of the workspace.
// A scan leaves them out, so a rollback that was cut short is in no
// checkpoint.
const StagePrefix = ".sandox-rollback-"

// spoolInMemory is the largest file a scan holds in memory while it
// hashes it; a larger one goes to a temporary file.
const spoolInMemory = 8 << 20

// blobSink stores the content r (of digest sum and size bytes) and
// returns the bytes it added to the store.
type blobSink func(ctx context.Context, sum string, size int64, r io.Reader) (int64, error)

// scanResult is what a scan of a workspace archive found.
type scanResult struct {
	files    []schemas.CheckpointFile
	bytes    int64
	newBytes int64
}

// scan reads the tar stream of a workspace archive (entries named after
// the workspace directory, then the paths below it) and returns its
// entries, sorted by path. When sink is not nil each regular file's
// content goes to it. Devices, pipes and sockets, the staging directories
// (StagePrefix) and a top-level lost+found are left out.
func scan(ctx context.Context, r io.Reader, sink blobSink) (scanResult, error) {
	var res scanResult
	tr := tar.NewReader(r)
	for {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return res, fmt.Errorf("read the workspace archive: %w", err)
		}
		rel, ok := relative(hdr.Name)
		if !ok {
			continue
		}
		f := schemas.CheckpointFile{Path: rel, Mode: uint32(hdr.Mode) & 0o7777, ModTime: hdr.ModTime.UTC()}
		switch hdr.Typeflag {
		case tar.TypeDir:
			f.Type = schemas.EntryDir
		case tar.TypeSymlink:
			f.Type, f.Link = schemas.EntrySymlink, hdr.Linkname
		case tar.TypeReg:
			f.Type, f.Size = schemas.EntryFile, hdr.Size
			sum, added, err := content(ctx, tr, hdr.Size, sink)
			if err != nil {
				return res, fmt.Errorf("%s: %w", rel, err)
			}
			f.SHA256 = sum
			res.bytes += hdr.Size
			res.newBytes += added
		default:
			continue
		}
		res.files = append(res.files, f)
	}
	slices.SortFunc(res.files, func(a, b schemas.CheckpointFile) int { return strings.Compare(a.Path, b.Path) })
	return res, nil
}

// relative strips the archive's first path element (the workspace
// directory) from name, and reports whether the entry belongs in a
// checkpoint.
func relative(name string) (string, bool) {
	name = strings.TrimPrefix(path.Clean("/"+name), "/")
	_, rel, ok := strings.Cut(name, "/")
	if !ok || rel == "" {
		return "", false // the workspace directory itself
	}
	top, _, _ := strings.Cut(rel, "/")
	if strings.HasPrefix(top, StagePrefix) || top == "lost+found" {
		return "", false
	}
	return rel, true
}

// content hashes the next size bytes of r and, when sink is set, stores
// them; it returns the hex digest and the bytes added to the store.
func content(ctx context.Context, r io.Reader, size int64, sink blobSink) (string, int64, error) {
	h := sha256.New()
	if sink == nil {
		if _, err := io.Copy(h, r); err != nil {
			return "", 0, err
		}
		return hex.EncodeToString(h.Sum(nil)), 0, nil
	}
	// The digest names the content, so the content is held until it is
	// known: in memory when small, else in a temporary file.
	var spool io.ReadSeeker
	if size <= spoolInMemory {
		var buf bytes.Buffer
		buf.Grow(int(size))
		if _, err := io.Copy(io.MultiWriter(&buf, h), r); err != nil {
			return "", 0, err
		}
		spool = bytes.NewReader(buf.Bytes())
	} else {
		tmp, err := os.CreateTemp("", "sandox-checkpoint-*")
		if err != nil {
			return "", 0, err
		}
		defer func() { tmp.Close(); os.Remove(tmp.Name()) }()
		if _, err := io.Copy(io.MultiWriter(tmp, h), r); err != nil {
			return "", 0, err
		}
		if _, err := tmp.Seek(0, io.SeekStart); err != nil {
			return "", 0, err
		}
		spool = tmp
	}
	sum := hex.EncodeToString(h.Sum(nil))
	added, err := sink(ctx, sum, size, spool)
	return sum, added, err
}

package filesystem

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Modes of what the tools create. The umask does not apply to files
// written through a temporary file, so these are the modes they get.
const (
	newFileMode fs.FileMode = 0o644
	newDirMode  fs.FileMode = 0o755
)

// replaceFile writes data to abs through a temporary file in the same
// directory, renamed over abs, so that no reader sees a half-written file
// and a full disk leaves the old content in place. A symbolic link is
// followed and its target replaced; an existing file keeps its mode and,
// where the platform allows, its owner. Missing parent directories are
// created. A file in a directory the process may not write to is
// rewritten in place instead. replaceFile reports whether abs is new.
// Errors come from the os package, unclassified.
func replaceFile(abs string, data []byte) (created bool, err error) {
	target := abs
	if resolved, err := filepath.EvalSymlinks(abs); err == nil {
		target = resolved
	}
	mode := newFileMode
	info, err := os.Stat(target)
	switch {
	case err == nil && info.IsDir():
		return false, &fs.PathError{Op: "write", Path: abs, Err: syscall.EISDIR}
	case err == nil:
		mode = info.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
	case errors.Is(err, fs.ErrNotExist):
		created = true
		if err := os.MkdirAll(filepath.Dir(target), newDirMode); err != nil {
			return false, err
		}
	default:
		return false, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(target), "."+filepath.Base(target)+".tmp-*")
	if errors.Is(err, fs.ErrPermission) && info != nil {
		// A writable file in a directory that is not: write in place.
		return false, os.WriteFile(target, data, mode)
	}
	if err != nil {
		return false, err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return false, err
	}
	if info != nil {
		keepOwner(tmp, info) // before Chmod: a chown clears setuid bits
	}
	if err = tmp.Chmod(mode); err != nil {
		return false, err
	}
	if err = tmp.Close(); err != nil {
		return false, err
	}
	if err = os.Rename(tmp.Name(), target); err != nil {
		return false, err
	}
	return created, nil
}

// createExclusive writes data to a new file abs, failing with fs.ErrExist
// when something is there already. Missing parent directories are created.
// A failed write removes the partial file.
func createExclusive(abs string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(abs), newDirMode); err != nil {
		return err
	}
	file, err := os.OpenFile(abs, os.O_WRONLY|os.O_CREATE|os.O_EXCL, newFileMode)
	if err != nil {
		return err
	}
	_, err = file.Write(data)
	if cerr := file.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(abs)
	}
	return err
}

package filesystem

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// copyStats counts what copyTree copied.
type copyStats struct {
	files, dirs, links, skipped int
	bytes                       int64
}

// String summarises the copy: "4 files, 2 directories, 1 symlink", leaving
// out counts of zero after the files.
func (s copyStats) String() string {
	parts := []string{plural(s.files, "file")}
	if s.dirs > 0 {
		parts = append(parts, plural(s.dirs, "directory"))
	}
	if s.links > 0 {
		parts = append(parts, plural(s.links, "symlink"))
	}
	out := strings.Join(parts, ", ")
	if s.skipped > 0 {
		out += fmt.Sprintf("; skipped %s (sockets, pipes or devices)", plural(s.skipped, "special file"))
	}
	return out
}

// copyTree copies src, a file, symbolic link or directory tree, to dst,
// which must not exist. Modes are kept; symbolic links inside are copied as
// links; sockets, pipes and devices are skipped and counted. The walk stops
// when ctx is done. Errors come from the os package, unclassified.
func copyTree(ctx context.Context, src, dst string) (copyStats, error) {
	var st copyStats
	type dirMode struct {
		path string
		mode fs.FileMode
	}
	var dirs []dirMode
	err := filepath.WalkDir(src, func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		info, err := de.Info()
		if err != nil {
			return err
		}
		switch mode := info.Mode(); {
		case mode.IsDir():
			// Owner-writable until the walk is done, so that a read-only
			// source directory can be filled.
			if err := os.Mkdir(target, 0o700); err != nil {
				return err
			}
			dirs = append(dirs, dirMode{target, mode & fs.ModePerm})
			st.dirs++
		case mode&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			if err := os.Symlink(link, target); err != nil {
				return err
			}
			st.links++
		case mode.IsRegular():
			if err := copyFile(p, target, info.Mode()); err != nil {
				return err
			}
			st.files++
			st.bytes += info.Size()
		default:
			st.skipped++
		}
		return nil
	})
	// Deepest first, so that a read-only parent is set last.
	for _, d := range slices.Backward(dirs) {
		if cerr := os.Chmod(d.path, d.mode); err == nil {
			err = cerr
		}
	}
	return st, err
}

// copyFile copies the regular file src to dst with mode, through a
// temporary file renamed into place, so that an existing dst is replaced
// whole or not at all.
func copyFile(src, dst string, mode fs.FileMode) (err error) {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err = io.Copy(tmp, in); err != nil {
		return err
	}
	if err = tmp.Chmod(mode & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), dst)
}

// replacing runs place, which creates dst. When something is at dst
// already (existed), it is a file place replaces atomically, or a directory
// (isDir) that is first moved aside, then removed when place succeeds or
// put back when it fails. Whatever a failed place left at a new or
// moved-aside dst is removed.
func replacing(dst string, existed, isDir bool, place func() error) error {
	if existed && !isDir {
		return place()
	}
	aside := ""
	if existed {
		aside = filepath.Join(filepath.Dir(dst), fmt.Sprintf(".%s.old-%d-%d", filepath.Base(dst), os.Getpid(), time.Now().UnixNano()))
		if err := os.Rename(dst, aside); err != nil {
			return err
		}
	}
	if err := place(); err != nil {
		os.RemoveAll(dst)
		if aside != "" {
			os.Rename(aside, dst)
		}
		return err
	}
	if aside != "" {
		return os.RemoveAll(aside)
	}
	return nil
}

// moveTree renames src to dst, falling back to copy and delete when they
// are on different filesystems.
func moveTree(ctx context.Context, src, dst string) error {
	err := os.Rename(src, dst)
	if !errors.Is(err, syscall.EXDEV) {
		return err
	}
	if _, err := copyTree(ctx, src, dst); err != nil {
		os.RemoveAll(dst)
		return err
	}
	return os.RemoveAll(src)
}

package limits

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"syscall"
	"time"
)

// ErrPartial says that a disk use figure is a lower bound: the walk of the
// workspace stopped early or skipped what it could not read.
var ErrPartial = errors.New("disk use is a lower bound")

// errStop ends a walk that ran past its bounds.
var errStop = errors.New("stop walking")

type inode struct{ dev, ino uint64 }

// walkUsage adds up the allocated bytes of the regular files under root,
// each hard-linked file once, visiting at most maxEntries entries for at
// most maxTime. A file or directory that vanishes during the walk is
// skipped; one that cannot be read makes the figure a lower bound.
func walkUsage(root string, maxEntries int, maxTime time.Duration) (int64, error) {
	deadline := time.Now().Add(maxTime)
	// WalkDir does not follow a symbolic link at its root.
	root, err := filepath.EvalSymlinks(root)
	if err != nil {
		return 0, fmt.Errorf("disk use: %w", err)
	}
	var (
		total    int64
		entries  int
		skipped  int
		stopped  string
		seen     = map[inode]bool{}
		notExist = func(err error) bool { return errors.Is(err, fs.ErrNotExist) }
	)
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == root {
				return err
			}
			if !notExist(err) {
				skipped++
			}
			return nil // WalkDir skips a directory it could not read
		}
		entries++
		if entries > maxEntries {
			stopped = fmt.Sprintf("more than %d entries", maxEntries)
			return errStop
		}
		if entries%256 == 0 && time.Now().After(deadline) {
			stopped = fmt.Sprintf("more than %v", maxTime)
			return errStop
		}
		if !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			if !notExist(err) {
				skipped++
			}
			return nil
		}
		st, ok := info.Sys().(*syscall.Stat_t)
		if !ok {
			total += info.Size()
			return nil
		}
		if st.Nlink > 1 {
			id := inode{uint64(st.Dev), uint64(st.Ino)}
			if seen[id] {
				return nil
			}
			seen[id] = true
		}
		total += int64(st.Blocks) * 512
		return nil
	})
	switch {
	case errors.Is(err, errStop):
		return total, fmt.Errorf("disk use of %s: walk stopped after %s: %w", root, stopped, ErrPartial)
	case err != nil:
		return 0, fmt.Errorf("disk use of %s: %w", root, err)
	case skipped > 0:
		return total, fmt.Errorf("disk use of %s: %d entries could not be read: %w", root, skipped, ErrPartial)
	}
	return total, nil
}

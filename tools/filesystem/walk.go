package filesystem

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
)

// errStop ends a walk early without error.
var errStop = errors.New("stop walking")

// walkTree calls visit for every entry below root, root excluded, in
// lexical order. p is the entry's path below root as given (a root that is
// a symbolic link to a directory is walked through), rel its
// slash-separated path relative to root. Entries whose names start with a
// dot are left out, directories with all they hold, unless hidden is true.
// A directory that cannot be read is counted in unreadable and skipped.
// visit may return fs.SkipDir, or errStop to end the walk. The walk stops
// when ctx is done.
func walkTree(ctx context.Context, root string, hidden bool, visit func(p, rel string, de fs.DirEntry) error) (unreadable int, err error) {
	walkRoot := root
	if resolved, err := filepath.EvalSymlinks(root); err == nil {
		walkRoot = resolved
	}
	err = filepath.WalkDir(walkRoot, func(p string, de fs.DirEntry, err error) error {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if err != nil {
			if p == walkRoot {
				return err
			}
			unreadable++
			if de != nil && de.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if p == walkRoot {
			return nil
		}
		if !hidden && strings.HasPrefix(de.Name(), ".") {
			if de.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		rel, err := filepath.Rel(walkRoot, p)
		if err != nil {
			return err
		}
		return visit(filepath.Join(root, rel), filepath.ToSlash(rel), de)
	})
	if errors.Is(err, errStop) {
		err = nil
	}
	return unreadable, err
}

package filesystem

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/tools"
)

// pathError is a failed tool call on one path. Its message reads
// `op "path": cause; hint`, or `op "path": at "other": cause; hint` when the
// cause hit another path (a parent, or a file inside a copied tree). It
// unwraps to the cause, which wraps the error class, so errors.Is matches
// tools.ErrNotFound, syscall.EISDIR and the like.
type pathError struct {
	op   string // the tool
	path string // as shown to the caller
	at   string // where the cause hit, when not at path
	err  error  // the cause
	hint string // what to do instead, for a model to read; may be empty
}

func (e *pathError) Error() string {
	s := fmt.Sprintf("%s %q: %v", e.op, e.path, e.err)
	if e.at != "" {
		s = fmt.Sprintf("%s %q: at %q: %v", e.op, e.path, e.at, e.err)
	}
	if e.hint != "" {
		s += "; " + e.hint
	}
	return s
}

func (e *pathError) Unwrap() error { return e.err }

// errAt builds the error of op on abs with cause and an optional hint.
func (d cwd) errAt(op, abs string, cause error, hint string) error {
	return &pathError{op: op, path: d.show(abs), err: cause, hint: hint}
}

// fail classifies an error from the os package and names op and the path:
//
//   - a missing path wraps tools.ErrNotFound;
//   - EACCES, EPERM and EROFS wrap schemas.CodeAccessDenied;
//   - a name too long wraps schemas.CodeInvalidArgs;
//   - ENOSPC and EDQUOT say the disk is full;
//   - anything else keeps its errno (syscall.EISDIR, syscall.ENOTDIR,
//     syscall.ENOTEMPTY, syscall.EEXIST, …) as the cause.
//
// When err is a *fs.PathError on another path than abs (a parent that is
// a file, a file deep inside a copied tree), the message names that path
// too.
func (d cwd) fail(op, abs string, err error) error {
	if err == nil {
		return nil
	}
	var pe *pathError
	if errors.As(err, &pe) {
		return err // already classified
	}
	cause, at := err, ""
	var pathErr *fs.PathError
	var linkErr *os.LinkError
	switch {
	case errors.As(err, &pathErr):
		cause = pathErr.Err
		if pathErr.Path != abs {
			at = d.show(pathErr.Path)
		}
	case errors.As(err, &linkErr):
		cause = linkErr.Err
	}
	return &pathError{op: op, path: d.show(abs), at: at, err: classify(cause)}
}

// classify wraps an errno in the tools error class it belongs to.
func classify(cause error) error {
	switch {
	case errors.Is(cause, fs.ErrNotExist):
		return tools.ErrNotFound
	case errors.Is(cause, fs.ErrPermission), errors.Is(cause, syscall.EROFS):
		return fmt.Errorf("%w: %w", schemas.CodeAccessDenied, cause)
	case errors.Is(cause, syscall.ENAMETOOLONG):
		return fmt.Errorf("%w: %w", schemas.CodeInvalidArgs, cause)
	case errors.Is(cause, syscall.ENOSPC), errors.Is(cause, syscall.EDQUOT):
		return fmt.Errorf("%w (the disk is full)", cause)
	}
	return cause
}

// isDirErr reports that abs is a directory where op wants a file.
func (d cwd) isDirErr(op, abs string) error {
	return d.errAt(op, abs, syscall.EISDIR, "use list_directory to see what it holds")
}

// notDirErr reports that abs, of mode m, is not the directory op wants.
func (d cwd) notDirErr(op, abs string, m fs.FileMode, hint string) error {
	return d.errAt(op, abs, fmt.Errorf("%w: it is a %s", syscall.ENOTDIR, kind(m)), hint)
}

// invalid reports arguments that cannot work on abs.
func (d cwd) invalid(op, abs, format string, args ...any) error {
	return d.errAt(op, abs, fmt.Errorf("%w: %s", schemas.CodeInvalidArgs, fmt.Sprintf(format, args...)), "")
}

// tooLargeErr reports a file of size bytes over limit.
func (d cwd) tooLargeErr(op, abs string, size, limit int64, hint string) error {
	cause := fmt.Errorf("%w: the file is %s, over the %s limit", tools.ErrTooLarge, byteSize(size), byteSize(limit))
	return d.errAt(op, abs, cause, hint)
}

package filesystem

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/sandox/sandox/schemas"
)

// cwd is the directory relative paths of one tool call resolve against.
type cwd string

// abs resolves p against d and cleans it. An empty p is an invalid
// argument; op names the tool for the error.
func (d cwd) abs(op, p string) (string, error) {
	if strings.TrimSpace(p) == "" {
		return "", fmt.Errorf("%s: path is empty: %w", op, schemas.CodeInvalidArgs)
	}
	if strings.ContainsRune(p, 0) {
		return "", fmt.Errorf("%s %q: path contains a NUL byte: %w", op, p, schemas.CodeInvalidArgs)
	}
	if filepath.IsAbs(p) {
		return filepath.Clean(p), nil
	}
	return filepath.Join(string(d), p), nil
}

// absOr resolves p like abs, with def standing in for an empty p.
func (d cwd) absOr(op, p, def string) (string, error) {
	if p == "" {
		p = def
	}
	return d.abs(op, p)
}

// show returns abs the way output and errors name it: relative to d when
// it lies below d, absolute otherwise.
func (d cwd) show(abs string) string {
	rel, err := filepath.Rel(string(d), abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return abs
	}
	return filepath.ToSlash(rel)
}

// within reports whether p is dir or lies below it. Both are clean and
// absolute.
func within(p, dir string) bool {
	if p == dir {
		return true
	}
	if dir == string(filepath.Separator) {
		return true
	}
	return strings.HasPrefix(p, dir+string(filepath.Separator))
}

package filesystem

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/sandox/sandox/tools"
)

// maxListEntries bounds the entries list_directory returns.
const maxListEntries = 1000

type listArgs struct {
	Path       string `json:"path,omitempty" jsonschema:"description=Directory to list. Default: the working directory."`
	Depth      int    `json:"depth,omitempty" jsonschema:"minimum=1,description=How many levels to descend: 1 (the default) lists only the directory's own entries."`
	ShowHidden bool   `json:"show_hidden,omitempty" jsonschema:"description=Include entries whose names start with a dot."`
}

// entry is one listed file in the structured result.
type entry struct {
	Path   string `json:"path"`
	Type   string `json:"type"`
	Size   int64  `json:"size"`
	Target string `json:"target,omitempty"`
}

// listing is the state of one list_directory walk.
type listing struct {
	d         cwd
	depth     int
	hidden    bool
	entries   []entry
	lines     []string
	skipped   int // hidden entries left out
	truncated bool
}

func (f *fsys) listDirectory() tools.Tool {
	const op = "list_directory"
	return tools.New(Family, op,
		"List a directory: one entry per line, sorted, directories marked with a trailing /, file sizes in bytes, symbolic links with their target. "+
			"depth descends into subdirectories; hidden entries only with show_hidden.",
		func(ctx context.Context, a listArgs) (tools.Result, error) {
			d := f.here()
			abs, err := d.absOr(op, a.Path, ".")
			if err != nil {
				return tools.Result{}, err
			}
			if err := d.checkDir(op, abs, "use stat_path or read_file"); err != nil {
				return tools.Result{}, err
			}
			l := &listing{d: d, depth: max(a.Depth, 1), hidden: a.ShowHidden, entries: []entry{}}
			if err := l.walk(ctx, abs, 1); err != nil {
				return tools.Result{}, d.fail(op, abs, err)
			}
			ret, _ := json.Marshal(struct {
				Path      string  `json:"path"`
				Entries   []entry `json:"entries"`
				Truncated bool    `json:"truncated"`
			}{d.show(abs), l.entries, l.truncated})
			return tools.Result{Stdout: l.text(d.show(abs)), Return: ret}, nil
		})
}

// walk lists dir, at the given level below the listed directory. Only a
// failure to read the listed directory itself is an error; a subdirectory
// that cannot be read is noted in its line.
func (l *listing) walk(ctx context.Context, dir string, level int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	des, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, de := range des {
		if len(l.entries) >= maxListEntries {
			l.truncated = true
			return nil
		}
		if !l.hidden && strings.HasPrefix(de.Name(), ".") {
			l.skipped++
			continue
		}
		p := filepath.Join(dir, de.Name())
		e, line := l.describe(p, de)
		l.entries = append(l.entries, e)
		l.lines = append(l.lines, line)
		if de.IsDir() && level < l.depth {
			at := len(l.lines) - 1
			if err := l.walk(ctx, p, level+1); err != nil {
				if ctx.Err() != nil {
					return err
				}
				l.lines[at] += fmt.Sprintf("  (cannot list: %v)", classify(unwrapPath(err)))
			}
		}
	}
	return nil
}

// describe returns the entry and the line of the file at p.
func (l *listing) describe(p string, de fs.DirEntry) (entry, string) {
	e := entry{Path: l.d.show(p), Type: kind(de.Type())}
	info, err := de.Info()
	if err != nil { // removed since the directory was read
		return e, e.Path + "  (gone)"
	}
	e.Type = kind(info.Mode())
	switch {
	case info.IsDir():
		return e, e.Path + "/"
	case info.Mode()&fs.ModeSymlink != 0:
		e.Target, _ = os.Readlink(p)
		return e, e.Path + " -> " + e.Target
	case info.Mode().IsRegular():
		e.Size = info.Size()
		return e, fmt.Sprintf("%s  (%s)", e.Path, byteSize(e.Size))
	}
	return e, fmt.Sprintf("%s  (%s)", e.Path, e.Type)
}

// text renders the listing of the directory shown as name.
func (l *listing) text(name string) string {
	var b strings.Builder
	for _, line := range l.lines {
		b.WriteString(line)
		b.WriteByte('\n')
	}
	if len(l.lines) == 0 {
		fmt.Fprintf(&b, "(%s is empty)\n", name)
	}
	if l.truncated {
		fmt.Fprintf(&b, "(stopped at %d entries; list a subdirectory or lower depth)\n", maxListEntries)
	}
	if l.skipped > 0 {
		fmt.Fprintf(&b, "(%s not shown; pass show_hidden: true to see them)\n", plural(l.skipped, "hidden entry"))
	}
	return b.String()
}

// unwrapPath returns the errno inside a *fs.PathError, or err.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

package filesystem

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/sandox/sandox/tools"
)

// defaultMaxResults bounds find_files and search_files output by default.
const defaultMaxResults = 200

type findArgs struct {
	Pattern       string `json:"pattern" jsonschema:"description=Glob to match. Without a slash it matches names at any depth (*.go). With a slash it matches the path below path where ** stands for any number of directories (src/**/test_*.py). Wildcards: * ? [abc]."`
	Path          string `json:"path,omitempty" jsonschema:"description=Directory to search under. Default: the working directory."`
	IncludeHidden bool   `json:"include_hidden,omitempty" jsonschema:"description=Also search names starting with a dot (.git and the like). A pattern that itself names a dot-file includes them anyway."`
	MaxResults    int    `json:"max_results,omitempty" jsonschema:"minimum=1,description=Most paths to return. Default: 200."`
}

func (f *fsys) findFiles() tools.Tool {
	const op = "find_files"
	return tools.New(Family, op,
		"Find files and directories by glob pattern under a directory; ** matches across directories. "+
			"Returns one path per line (directories end with /), sorted, at most max_results of them.",
		func(ctx context.Context, a findArgs) (tools.Result, error) {
			d := f.here()
			root, err := d.absOr(op, a.Path, ".")
			if err != nil {
				return tools.Result{}, err
			}
			g, err := compileGlob(a.Pattern)
			if err != nil {
				return tools.Result{}, d.invalid(op, root, "bad pattern %q: %v", a.Pattern, err)
			}
			if err := d.checkDir(op, root, "use stat_path to check a single file"); err != nil {
				return tools.Result{}, err
			}
			limit := a.MaxResults
			if limit <= 0 {
				limit = defaultMaxResults
			}
			var matches []string
			truncated := false
			prefix := g.prefix()
			start := filepath.Join(root, filepath.FromSlash(prefix))
			unreadable, err := walkTree(ctx, start, a.IncludeHidden || g.wantsHidden(), func(p, rel string, de fs.DirEntry) error {
				if !g.match(path.Join(prefix, rel)) {
					return nil
				}
				if len(matches) == limit {
					truncated = true
					return errStop
				}
				name := d.show(p)
				if de.IsDir() {
					name += "/"
				}
				matches = append(matches, name)
				return nil
			})
			noStart := start != root && (errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR))
			if err != nil && !noStart { // a missing literal prefix only means no match
				return tools.Result{}, d.fail(op, start, err)
			}
			ret, _ := json.Marshal(struct {
				Matches   []string `json:"matches"`
				Truncated bool     `json:"truncated"`
			}{append([]string{}, matches...), truncated})
			return tools.Result{Stdout: findText(a.Pattern, d.show(root), matches, truncated, unreadable), Return: ret}, nil
		})
}

// checkDir fails unless abs is a directory; hint follows the error.
func (d cwd) checkDir(op, abs, hint string) error {
	info, err := os.Stat(abs)
	if err != nil {
		return d.fail(op, abs, err)
	}
	if !info.IsDir() {
		return d.notDirErr(op, abs, info.Mode(), hint)
	}
	return nil
}

// findText renders find_files output with its notes.
func findText(pattern, root string, matches []string, truncated bool, unreadable int) string {
	var b strings.Builder
	for _, m := range matches {
		b.WriteString(m)
		b.WriteByte('\n')
	}
	if len(matches) == 0 {
		fmt.Fprintf(&b, "no paths match %q under %s\n", pattern, root)
	}
	if truncated {
		fmt.Fprintf(&b, "(showing the first %s; more exist: narrow the pattern or raise max_results)\n", plural(len(matches), "match"))
	}
	if unreadable > 0 {
		fmt.Fprintf(&b, "(%s could not be read)\n", plural(unreadable, "directory"))
	}
	return b.String()
}

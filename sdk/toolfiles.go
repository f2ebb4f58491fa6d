package sdk

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/sandox/sandox/schemas"
)

// moduleName is a tool module named alone, with or without ".py".
var moduleName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}(\.py)?$`)

// readTools sorts a tools list into tool files and tool families. An entry
// that is a bare module name ("web_tools.py", "web_tools") and no file at
// that path names a family, sent without ".py"; the orchestrator knows the
// built-in families and refuses a name that is none of them. Every other
// entry is a tool file, read from disk, that keeps its base name; a file
// named like a built-in family is refused by the orchestrator, which says
// so.
func readTools(entries []string) ([]schemas.ToolFile, []string, error) {
	var files []schemas.ToolFile
	var families []string
	var errs []error
	for _, p := range entries {
		data, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) && moduleName.MatchString(p) {
			families = append(families, strings.TrimSuffix(p, ".py"))
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("tool file: %w", err))
			continue
		}
		files = append(files, schemas.ToolFile{Name: filepath.Base(p), Content: data})
	}
	return files, families, errors.Join(errs...)
}

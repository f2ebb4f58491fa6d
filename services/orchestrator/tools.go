package orchestrator

import (
	"errors"
	"regexp"
	"sort"

	"github.com/sandox/sandox/schemas"
)

var toolFileName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}\.py$`)

// checkTools validates user tool files: Python files whose names are valid
// module names, within the size limit, each named once.
func (w *Worker) checkTools(files []schemas.ToolFile) error {
	var errs []error
	seen := map[string]bool{}
	for _, f := range files {
		switch {
		case !toolFileName.MatchString(f.Name):
			errs = append(errs, schemas.Errorf(schemas.CodeBadRequest, "tool file %q: want a Python module file name like my_tools.py", f.Name))
		case len(f.Content) > w.cfg.MaxToolFileBytes:
			errs = append(errs, schemas.Errorf(schemas.CodeBadRequest, "tool file %q: %d bytes, the limit is %d", f.Name, len(f.Content), w.cfg.MaxToolFileBytes))
		case seen[f.Name]:
			errs = append(errs, schemas.Errorf(schemas.CodeBadRequest, "tool file %q is given twice", f.Name))
		}
		seen[f.Name] = true
	}
	return errors.Join(errs...)
}

// mergeTools returns the group's tool files with the sandbox's laid over
// them: a sandbox file with the same name replaces the group's. The result
// is sorted by name.
func mergeTools(group, sandbox []schemas.ToolFile) []schemas.ToolFile {
	byName := map[string]schemas.ToolFile{}
	for _, f := range group {
		byName[f.Name] = f
	}
	for _, f := range sandbox {
		byName[f.Name] = f
	}
	out := make([]schemas.ToolFile, 0, len(byName))
	for _, f := range byName {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

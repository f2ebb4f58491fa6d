package images

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/tools/catalog"
)

var toolFileName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}\.py$`)

// CheckTools validates user tool files and the built-in families a spec
// names: Python files whose names are valid module names, within the size
// limit, each named once, none named like a built-in family; families that
// exist.
func CheckTools(files []schemas.ToolFile, families []string, maxFileBytes int) error {
	var errs []error
	seen := map[string]bool{}
	for _, f := range files {
		switch {
		case !toolFileName.MatchString(f.Name):
			errs = append(errs, schemas.Errorf(schemas.CodeBadRequest, "tool file %q: want a Python module file name like my_tools.py", f.Name))
		case isFamily(f.Name):
			errs = append(errs, schemas.Errorf(schemas.CodeBadRequest, "tool file %q: %s is a built-in tool family, selected by its name alone; a tool file cannot replace it, rename the file", f.Name, strings.TrimSuffix(f.Name, ".py")))
		case len(f.Content) > maxFileBytes:
			errs = append(errs, schemas.Errorf(schemas.CodeBadRequest, "tool file %q: %d bytes, the limit is %d", f.Name, len(f.Content), maxFileBytes))
		case seen[f.Name]:
			errs = append(errs, schemas.Errorf(schemas.CodeBadRequest, "tool file %q is given twice", f.Name))
		}
		seen[f.Name] = true
	}
	if _, err := catalog.Select(families); err != nil {
		// The SDK sends a bare name it found no file for as a family.
		errs = append(errs, fmt.Errorf("%w (any other name must be the path of a tool file of yours that exists)", err))
	}
	return errors.Join(errs...)
}

func isFamily(name string) bool {
	_, ok := catalog.Name(name)
	return ok
}

// ChooseFamilies returns the built-in families of a sandbox, sorted: those
// its group and it name, or catalog.Default when neither names one.
func ChooseFamilies(group, sandbox []string) ([]string, error) {
	return catalog.SelectNames(append(slices.Clone(group), sandbox...))
}

// MergeTools returns the group's tool files with the sandbox's laid over
// them: a sandbox file with the same name replaces the group's. The result
// is sorted by name.
func MergeTools(group, sandbox []schemas.ToolFile) []schemas.ToolFile {
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

// ToolModules is what a sandbox is expected to serve: its families and
// its tool files' modules, sorted.
func ToolModules(families []string, files []schemas.ToolFile) []string {
	out := slices.Clone(families)
	for _, f := range files {
		m := strings.TrimSuffix(f.Name, ".py")
		if !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	slices.Sort(out)
	return out
}

package builtin

import (
	"slices"
	"sort"
	"strings"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/tools"
)

// Name returns the family a tools entry names: "web_tools" for
// "web_tools" or "web_tools.py", when that is a built-in family.
func Name(entry string) (string, bool) {
	name := strings.TrimSuffix(entry, ".py")
	for _, m := range Modules() {
		if m.Name == name {
			return name, true
		}
	}
	return "", false
}

// Names returns the names of the built-in families, sorted.
func Names() []string {
	var out []string
	for _, m := range Modules() {
		out = append(out, m.Name)
	}
	sort.Strings(out)
	return out
}

// Select returns the families that names select, in the order of Modules,
// each once; the Default families when names is empty. A name may end in
// ".py". An unknown name is a *schemas.Error with CodeBadRequest that lists
// the built-in families.
func Select(names []string) ([]tools.Module, error) {
	if len(names) == 0 {
		names = Default
	}
	want := map[string]bool{}
	var unknown []string
	for _, n := range names {
		name, ok := Name(n)
		if !ok {
			unknown = append(unknown, n)
			continue
		}
		want[name] = true
	}
	if len(unknown) > 0 {
		return nil, schemas.Errorf(schemas.CodeBadRequest, "unknown tool family %s: the built-in families are %s", quoteAll(unknown), strings.Join(Names(), ", "))
	}
	var out []tools.Module
	for _, m := range Modules() {
		if want[m.Name] {
			out = append(out, m)
		}
	}
	return out, nil
}

// SelectNames is Select returning the families' names, sorted.
func SelectNames(names []string) ([]string, error) {
	mods, err := Select(names)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(mods))
	for i, m := range mods {
		out[i] = m.Name
	}
	sort.Strings(out)
	return out, nil
}

// Needs returns what the families need in their image together: each apt
// package once, sorted, and every file (a path given twice keeps the last).
func Needs(mods []tools.Module) tools.ImageNeeds {
	var n tools.ImageNeeds
	files := map[string]tools.ImageFile{}
	for _, m := range mods {
		n.Apt = append(n.Apt, m.Image.Apt...)
		for _, f := range m.Image.Files {
			files[f.Path] = f
		}
	}
	slices.Sort(n.Apt)
	n.Apt = slices.Compact(n.Apt)
	for _, f := range files {
		n.Files = append(n.Files, f)
	}
	sort.Slice(n.Files, func(i, j int) bool { return n.Files[i].Path < n.Files[j].Path })
	return n
}

func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = `"` + n + `"`
	}
	return strings.Join(q, ", ")
}

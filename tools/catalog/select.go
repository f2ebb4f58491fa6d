package catalog

import (
	"sort"
	"strings"

	"github.com/sandox/sandox/schemas"
)

// Name returns the built-in family a tools entry names: "web_tools" for
// "web_tools" or "web_tools.py".
func Name(entry string) (string, bool) { return Families().Name(entry) }

// Names returns the names of the built-in families, sorted.
func Names() []string { return Families().Names() }

// Select returns the built-in families that names select: see List.Select.
func Select(names []string) (List, error) { return Families().Select(names) }

// SelectNames returns the names of the built-in families that names
// select, sorted: see List.Select.
func SelectNames(names []string) ([]string, error) {
	l, err := Select(names)
	if err != nil {
		return nil, err
	}
	return l.Names(), nil
}

// Name returns the family of l a tools entry names: "web_tools" for
// "web_tools" or "web_tools.py", when l holds web_tools.
func (l List) Name(entry string) (string, bool) {
	name := strings.TrimSuffix(entry, ".py")
	for _, f := range l {
		if f.Name == name {
			return name, true
		}
	}
	return "", false
}

// Names returns the names of the families of l, sorted.
func (l List) Names() []string {
	out := make([]string, len(l))
	for i, f := range l {
		out[i] = f.Name
	}
	sort.Strings(out)
	return out
}

// Select returns the families of l that names select, in the order of l,
// each once; the Default families when names is empty. A name may end in
// ".py". An unknown name is a *schemas.Error of class
// schemas.CodeBadRequest that lists the families of l.
func (l List) Select(names []string) (List, error) {
	if len(names) == 0 {
		names = Default
	}
	want := map[string]bool{}
	var unknown []string
	for _, n := range names {
		name, ok := l.Name(n)
		if !ok {
			unknown = append(unknown, n)
			continue
		}
		want[name] = true
	}
	if len(unknown) > 0 {
		return nil, schemas.Errorf(schemas.CodeBadRequest, "unknown tool family %s: the built-in families are %s", quoteAll(unknown), strings.Join(l.Names(), ", "))
	}
	var out List
	for _, f := range l {
		if want[f.Name] {
			out = append(out, f)
		}
	}
	return out, nil
}

func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = `"` + n + `"`
	}
	return strings.Join(q, ", ")
}

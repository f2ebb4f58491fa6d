// Package builtin is the executor's map from a built-in tool family's name
// to the code that opens it (its Open). What each family is as data (its
// name, summary, image needs) is package catalog, which the orchestrator,
// the CLI and the SDKs read without linking any family's code; a test
// checks that every family of the catalog has an Open here and every Open
// a catalog entry.
//
// Built with the build tag nowebtools, the map leaves out the web family
// (web.go): the executor built so (the image's sandox-executor) links
// neither the browser driver nor the scraper, and hands a sandbox that
// names web_tools over to the full build (sandox-executor-full).
package builtin

import (
	"github.com/sandox/sandox/tools"
	"github.com/sandox/sandox/tools/catalog"
	"github.com/sandox/sandox/tools/database"
	"github.com/sandox/sandox/tools/filesystem"
	"github.com/sandox/sandox/tools/terminal"
)

// opens maps each family built into this binary to its Open. It is a
// func, not a package variable, so that a binary that imports this package
// without calling it links none of the families' code.
func opens() map[string]tools.OpenFunc {
	m := map[string]tools.OpenFunc{
		terminal.Family:   terminal.Open,
		filesystem.Family: filesystem.Open,
		database.Family:   database.Open,
	}
	addWeb(m)
	return m
}

// Family is a family of the catalog with the code that opens it.
type Family struct {
	catalog.Family
	Open tools.OpenFunc
}

// Families returns the families built into this binary, in the order of
// the catalog: all of them, or all but web_tools with the tag nowebtools.
func Families() catalog.List {
	var out catalog.List
	m := opens()
	for _, f := range catalog.Families() {
		if m[f.Name] != nil {
			out = append(out, f)
		}
	}
	return out
}

// Select returns the families built into this binary that names select,
// with their Open, in the order of the catalog, each once; the
// catalog.Default families when names is empty. A name may end in ".py".
// A name that is not built in is a *schemas.Error of class
// schemas.CodeBadRequest that lists the families that are.
func Select(names []string) ([]Family, error) {
	l, err := Families().Select(names)
	if err != nil {
		return nil, err
	}
	m := opens()
	out := make([]Family, len(l))
	for i, f := range l {
		out[i] = Family{Family: f, Open: m[f.Name]}
	}
	return out, nil
}

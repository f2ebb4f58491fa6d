package builtin

import (
	"github.com/sandox/sandox/tools"
	"github.com/sandox/sandox/tools/catalog"
)

// The functions below are the catalog's, named here until the orchestrator
// reads package catalog; nothing else uses them.

// Default is catalog.Default.
//
// Deprecated: use catalog.Default.
var Default = catalog.Default

// Name is catalog.Name.
//
// Deprecated: use catalog.Name.
func Name(entry string) (string, bool) { return catalog.Name(entry) }

// SelectNames is catalog.SelectNames.
//
// Deprecated: use catalog.SelectNames.
func SelectNames(names []string) ([]string, error) { return catalog.SelectNames(names) }

// Needs returns what fams need in their image together: see
// catalog.List.Needs.
//
// Deprecated: use catalog.Select and catalog.List.Needs.
func Needs(fams []Family) tools.ImageNeeds {
	l := make(catalog.List, len(fams))
	for i, f := range fams {
		l[i] = f.Family
	}
	return l.Needs()
}

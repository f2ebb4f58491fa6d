package main

import (
	"go/ast"
	"go/token"
	"sort"
)

// envRead is one place where Go code reads an environment variable.
type envRead struct {
	Name string
	File string
	Test bool
	pos  token.Pos
}

// reader is a call that reads environment variables: their names, and the
// default it falls back to, if the call has one.
type reader struct {
	keys     []string
	fallback ast.Expr
}

// envFuncs are the repository's own functions and function parameters
// that read the environment, by name: how many of their arguments are
// variable names (-1: all), whether the second is a default, and the
// suffixes they add to the name (services/search's secret reads KEY and
// KEY_FILE).
var envFuncs = map[string]struct {
	args     int
	fallback bool
	suffixes []string
}{
	"getenv":   {args: 1},
	"envOr":    {args: 1, fallback: true},
	"or":       {args: 1, fallback: true},
	"firstEnv": {args: -1},
	"secret":   {args: 1, suffixes: []string{"", "_FILE"}},
}

// envReader reports whether call reads the environment, and what.
func (s scope) envReader(call *ast.CallExpr) (reader, bool) {
	var r reader
	switch {
	case isPkgCall(s.file, call, "os", "Getenv"), isPkgCall(s.file, call, "os", "LookupEnv"):
		if len(call.Args) != 1 {
			return r, false
		}
		v, ok := s.eval(call.Args[0])
		if !ok || v.kind != kindString {
			return r, false
		}
		r.keys = []string{v.s}
		return r, true
	}
	id, ok := call.Fun.(*ast.Ident)
	if !ok {
		return r, false
	}
	fn, ok := envFuncs[id.Name]
	if !ok {
		return r, false
	}
	args := call.Args
	if fn.args >= 0 && len(args) > fn.args {
		args = args[:fn.args]
	}
	if fn.fallback && len(call.Args) > 1 {
		r.fallback = call.Args[1]
	}
	suffixes := fn.suffixes
	if suffixes == nil {
		suffixes = []string{""}
	}
	for _, a := range args {
		v, ok := s.eval(a)
		if !ok || v.kind != kindString {
			return reader{}, false
		}
		for _, suf := range suffixes {
			r.keys = append(r.keys, v.s+suf)
		}
	}
	return r, len(r.keys) > 0
}

// goEnvReads returns every read of an environment variable in the tree's
// Go code, tests included, ordered by name and file.
func goEnvReads(t *tree) []envRead {
	var out []envRead
	for _, p := range t.sortedPkgs() {
		for _, f := range p.files {
			s := scope{t: t, pkg: p, file: f}
			ast.Inspect(f.ast, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				if r, ok := s.envReader(call); ok {
					for _, k := range r.keys {
						out = append(out, envRead{Name: k, File: f.path, Test: f.test, pos: call.Pos()})
					}
				}
				return true
			})
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return out[i].File < out[j].File
	})
	return out
}

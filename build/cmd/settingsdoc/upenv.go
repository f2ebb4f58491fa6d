package main

import (
	"errors"
	"go/ast"
	"go/token"
	"regexp"
	"strconv"
	"strings"
)

// upDir is the package of the sandox command, whose `up` starts the
// control plane's containers.
const upDir = "services/cmd/sandox"

// upSettings is what `sandox up` gives the containers it starts, as read
// from its source: variables it sets to fixed values (or to one of its own
// flags), variables and prefixes it passes through from the operator's
// environment, and the flags in each container's command line.
type upSettings struct {
	fixed    map[string]string          // variable → "" or the up flag that sets it
	passed   map[string]bool            // variables passed through by name
	prefixes []string                   // prefixes passed through
	commands map[string]map[string]bool // binary → flags in its command line
}

var (
	envAssign = regexp.MustCompile(`^([A-Z][A-Z0-9_]*)=`)
	envPrefix = regexp.MustCompile(`^[A-Z][A-Z0-9_]*_$`)
	envName   = regexp.MustCompile(`^SANDOX_[A-Z0-9_]+$`)
)

// scanUp reads upSettings from the non-test files of upDir. It fails when
// it finds no variable set at all: the scan no longer matches how `sandox
// up` is written, and needs updating here.
func scanUp(t *tree) (upSettings, error) {
	u := upSettings{fixed: map[string]string{}, passed: map[string]bool{}, commands: map[string]map[string]bool{}}
	p := t.pkgs[upDir]
	if p == nil {
		return u, errors.New(upDir + ": no such package")
	}
	// The functions that read the operator's environment (os.Environ):
	// a prefix they are given, or test with strings.HasPrefix, passes
	// through.
	environ := map[string]bool{}
	for _, f := range p.files {
		for _, d := range f.ast.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && !f.test && fn.Body != nil && calls(f, fn.Body, "os", "Environ") {
				environ[fn.Name.Name] = true
			}
		}
	}
	for _, f := range p.files {
		if f.test {
			continue
		}
		for _, d := range f.ast.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Body != nil {
				u.scanFunc(f, fn, environ)
			}
		}
	}
	if len(u.fixed) == 0 {
		return u, errors.New(upDir + ": found no \"SANDOX_X=\" + value that sandox up sets; the scan in build/cmd/settingsdoc/upenv.go needs updating")
	}
	return u, nil
}

// scanFunc adds what one function of upDir sets or passes through.
func (u *upSettings) scanFunc(f *goFile, fn *ast.FuncDecl, environ map[string]bool) {
	flagVars := map[string]string{}  // variable → flag name of `sandox up`'s flags
	passArgs := map[token.Pos]bool{} // literals that name what passes through
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.BasicLit:
			// "SANDOX_X=value", "SANDOX_X=%d" (a format), or a map key
			// "SANDOX_X": a fixed setting, unless it passes through.
			s, ok := stringLit(n)
			if !ok || passArgs[n.Pos()] {
				return true
			}
			if m := envAssign.FindStringSubmatch(s); m != nil {
				if _, seen := u.fixed[m[1]]; !seen {
					u.fixed[m[1]] = ""
				}
			}
		case *ast.KeyValueExpr:
			if k, ok := stringLit(n.Key); ok && envName.MatchString(k) {
				if _, seen := u.fixed[k]; !seen {
					u.fixed[k] = upFlagIn(n.Value, flagVars)
				}
			}
		case *ast.AssignStmt:
			if len(n.Lhs) != 1 || len(n.Rhs) != 1 {
				return true
			}
			call, ok := n.Rhs[0].(*ast.CallExpr)
			if !ok || len(call.Args) == 0 {
				return true
			}
			if sel, ok := call.Fun.(*ast.SelectorExpr); ok && flagMethods[sel.Sel.Name].typ != "" {
				if id, ok := n.Lhs[0].(*ast.Ident); ok {
					if name, ok := stringLit(call.Args[0]); ok {
						flagVars[id.Name] = name
					}
				}
			}
		case *ast.CallExpr:
			id, isLocal := n.Fun.(*ast.Ident)
			if !(isLocal && environ[id.Name]) && !(environ[fn.Name.Name] && isPkgCall(f, n, "strings", "HasPrefix")) {
				return true
			}
			for _, a := range n.Args {
				s, ok := stringLit(a)
				if !ok {
					continue
				}
				if m := envAssign.FindStringSubmatch(s); m != nil && s == m[0] {
					u.passed[m[1]] = true
					passArgs[a.Pos()] = true
				} else if envPrefix.MatchString(s) {
					u.prefixes = append(u.prefixes, s)
				}
			}
		case *ast.BinaryExpr:
			if s, ok := stringLit(n.X); ok && n.Op == token.ADD {
				if m := envAssign.FindStringSubmatch(s); m != nil && s == m[0] {
					u.fixed[m[1]] = upFlagIn(n.Y, flagVars)
				}
			}
		case *ast.CompositeLit:
			u.addCommand(n)
		}
		return true
	})
}

// calls reports whether body calls pkg.name.
func calls(f *goFile, body ast.Node, pkg, name string) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		if c, ok := n.(*ast.CallExpr); ok && isPkgCall(f, c, pkg, name) {
			found = true
		}
		return !found
	})
	return found
}

// addCommand records a container's command line: a []string literal
// whose first element names a binary (sandox-nats) and whose other
// elements include its flags.
func (u upSettings) addCommand(lit *ast.CompositeLit) {
	arr, ok := lit.Type.(*ast.ArrayType)
	if !ok || len(lit.Elts) == 0 {
		return
	}
	if id, ok := arr.Elt.(*ast.Ident); !ok || id.Name != "string" {
		return
	}
	bin, ok := stringLit(lit.Elts[0])
	if !ok || !strings.HasPrefix(bin, "sandox-") {
		return
	}
	flags := u.commands[bin]
	if flags == nil {
		flags = map[string]bool{}
		u.commands[bin] = flags
	}
	for _, e := range lit.Elts[1:] {
		if s, ok := stringLit(e); ok && strings.HasPrefix(s, "-") {
			flags[strings.TrimLeft(s, "-")] = true
		}
	}
}

// upFlagIn returns the flag of `sandox up` that e dereferences, if any.
func upFlagIn(e ast.Expr, flagVars map[string]string) string {
	var name string
	ast.Inspect(e, func(n ast.Node) bool {
		if st, ok := n.(*ast.StarExpr); ok {
			if id, ok := st.X.(*ast.Ident); ok && flagVars[id.Name] != "" {
				name = flagVars[id.Name]
			}
		}
		return name == ""
	})
	return name
}

func stringLit(e ast.Expr) (string, bool) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	return s, err == nil
}

// started reports whether `sandox up` runs binary in a container.
func (u upSettings) started(binary string) bool {
	_, ok := u.commands[binary]
	return ok
}

// reach says how a user of `sandox up` sets a setting of a container it
// starts: the flag (if it is one, with "" for a variable) and the
// variable that sets it.
func (u upSettings) reach(binary, flag, env string) string {
	if flag != "" && u.commands[binary][flag] {
		return "fixed by `sandox up`"
	}
	if env != "" {
		if via, ok := u.fixed[env]; ok {
			if via != "" {
				return "`sandox up -" + via + "`"
			}
			return "fixed by `sandox up`"
		}
		if u.passed[env] {
			return "operator's environment"
		}
		for _, p := range u.prefixes {
			if strings.HasPrefix(env, p) {
				return "operator's environment (`" + p + "*`)"
			}
		}
	}
	return unreachable
}

// unreachable marks a setting that a user of `sandox up` cannot set.
const unreachable = "**not reachable**"

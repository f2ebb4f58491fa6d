package main

import (
	"fmt"
	"go/ast"
	"go/token"
	"regexp"
	"strings"
)

// flagSetting is one command-line flag as its command defines it.
type flagSetting struct {
	Dir     string // the command's directory (Python: its program name)
	Command string // the binary, and the subcommand when the FlagSet is one's
	Name    string
	Type    string
	Default string // rendered; "" when the flag has no default worth showing
	Env     string // the environment variable that sets its default, if any
	Usage   string
	File    string
	// span is the flag's definition in the source, to tell an
	// environment variable read as a flag's default from other reads.
	span [2]token.Pos
}

// flagMethods are the flag.FlagSet methods that define a flag, with the
// index of the name, default and usage arguments (-1: none).
var flagMethods = map[string]struct {
	typ              string
	name, def, usage int
}{
	"Bool": {"bool", 0, 1, 2}, "BoolVar": {"bool", 1, 2, 3},
	"Int": {"int", 0, 1, 2}, "IntVar": {"int", 1, 2, 3},
	"Int64": {"int64", 0, 1, 2}, "Int64Var": {"int64", 1, 2, 3},
	"Uint": {"uint", 0, 1, 2}, "UintVar": {"uint", 1, 2, 3},
	"Uint64": {"uint64", 0, 1, 2}, "Uint64Var": {"uint64", 1, 2, 3},
	"Float64": {"float", 0, 1, 2}, "Float64Var": {"float", 1, 2, 3},
	"String": {"string", 0, 1, 2}, "StringVar": {"string", 1, 2, 3},
	"Duration": {"duration", 0, 1, 2}, "DurationVar": {"duration", 1, 2, 3},
	"Func": {"value", 0, -1, 1}, "BoolFunc": {"bool", 0, -1, 1},
	"Var": {"value", 1, -1, 2}, "TextVar": {"value", 1, 3, 2},
}

// envInUsage finds "(env NAME)" in a flag's usage: the variable that sets
// the flag's default.
var envInUsage = regexp.MustCompile(`\s*\(env ([A-Z][A-Z0-9_]*)\)`)

// goFlags returns the flags that the main packages of the tree define on a
// flag.FlagSet (or on the flag package's own set).
func goFlags(t *tree) ([]flagSetting, error) {
	var out []flagSetting
	for _, p := range t.sortedPkgs() {
		if p.name != "main" {
			continue
		}
		binary := p.dir[strings.LastIndex(p.dir, "/")+1:]
		for _, f := range p.files {
			if f.test {
				continue
			}
			for _, decl := range f.ast.Decls {
				fn, ok := decl.(*ast.FuncDecl)
				if !ok || fn.Body == nil {
					continue
				}
				flags, err := funcFlags(scope{t: t, pkg: p, file: f, locals: locals(fn)}, binary, fn)
				if err != nil {
					return nil, err
				}
				out = append(out, flags...)
			}
		}
	}
	return out, nil
}

// locals returns the variables fn assigns from a call or a composite
// literal (cfg := orchestrator.DefaultConfig()), which flag defaults refer
// to.
func locals(fn *ast.FuncDecl) map[string]ast.Expr {
	out := map[string]ast.Expr{}
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		as, ok := n.(*ast.AssignStmt)
		if !ok || len(as.Lhs) != 1 || len(as.Rhs) != 1 {
			return true
		}
		id, ok := as.Lhs[0].(*ast.Ident)
		if !ok {
			return true
		}
		switch as.Rhs[0].(type) {
		case *ast.CallExpr, *ast.CompositeLit:
			out[id.Name] = as.Rhs[0]
		}
		return true
	})
	return out
}

// funcFlags returns the flags fn defines.
func funcFlags(s scope, binary string, fn *ast.FuncDecl) ([]flagSetting, error) {
	sets := map[string]string{} // variable → FlagSet name
	if _, ok := s.file.imports["flag"]; ok {
		sets["flag"] = binary
	}
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		as, ok := n.(*ast.AssignStmt)
		if !ok || len(as.Lhs) != 1 || len(as.Rhs) != 1 {
			return true
		}
		call, ok := as.Rhs[0].(*ast.CallExpr)
		if !ok || !isPkgCall(s.file, call, "flag", "NewFlagSet") || len(call.Args) == 0 {
			return true
		}
		if id, ok := as.Lhs[0].(*ast.Ident); ok {
			if v, ok := s.eval(call.Args[0]); ok {
				sets[id.Name] = v.s
			}
		}
		return true
	})
	// What the function reads: a flag whose usage names a variable must
	// read it, or hand the FlagSet to svcmain.EnvDefaults, which sets every flag
	// from the variable its usage names.
	read := map[string]bool{}
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		if call, ok := n.(*ast.CallExpr); ok {
			if isEnvDefaults(call) {
				read["*"] = true
			} else if r, ok := s.envReader(call); ok {
				for _, k := range r.keys {
					read[k] = true
				}
			}
		}
		return true
	})
	var out []flagSetting
	var err error
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || err != nil {
			return err == nil
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		recv, ok := sel.X.(*ast.Ident)
		if !ok {
			return true
		}
		set, ok := sets[recv.Name]
		m, isFlag := flagMethods[sel.Sel.Name]
		if !ok || !isFlag {
			return true
		}
		var f flagSetting
		if f, err = s.flag(call, m.typ, m.name, m.def, m.usage); err != nil {
			return false
		}
		if f.Env != "" && !read[f.Env] && !read["*"] {
			err = fmt.Errorf("%s: the usage of -%s names %s, which %s neither reads nor hands to svcmain.EnvDefaults", f.File, f.Name, f.Env, fn.Name.Name)
			return false
		}
		f.Dir, f.Command = s.pkg.dir, binary
		if set != binary {
			f.Command = binary + " " + set
		}
		out = append(out, f)
		return true
	})
	return out, err
}

// flag reads one flag definition.
func (s scope) flag(call *ast.CallExpr, typ string, name, def, usage int) (flagSetting, error) {
	pos := s.t.fset.Position(call.Pos())
	where := fmt.Sprintf("%s:%d", s.file.path, pos.Line)
	if name >= len(call.Args) || usage >= len(call.Args) {
		return flagSetting{}, fmt.Errorf("%s: a flag definition with too few arguments", where)
	}
	n, ok := s.eval(call.Args[name])
	if !ok || n.kind != kindString {
		return flagSetting{}, fmt.Errorf("%s: the flag's name is not a constant string", where)
	}
	f := flagSetting{Name: n.s, Type: typ, File: s.file.path, span: [2]token.Pos{call.Pos(), call.End()}}
	if def >= 0 {
		f.Default, f.Env = s.flagDefault(call.Args[def], typ)
	}
	f.Usage = s.text(call.Args[usage])
	if m := envInUsage.FindStringSubmatch(f.Usage); m != nil {
		if f.Env != "" && f.Env != m[1] {
			return flagSetting{}, fmt.Errorf("%s: -%s reads %s but its usage names %s", where, f.Name, f.Env, m[1])
		}
		f.Env = m[1]
		f.Usage = envInUsage.ReplaceAllString(f.Usage, "")
	}
	return f, nil
}

// flagDefault renders a flag's default and names the environment variable
// it falls back to: envOr("SANDOX_X", def) or os.Getenv("SANDOX_X").
func (s scope) flagDefault(e ast.Expr, typ string) (def, env string) {
	if call, ok := e.(*ast.CallExpr); ok {
		if r, ok := s.envReader(call); ok && len(r.keys) == 1 {
			env = r.keys[0]
			if r.fallback == nil {
				return "", env
			}
			e = r.fallback
		}
	}
	if v, ok := s.eval(e); ok {
		if v.kind == kindString && v.s == "" {
			return "", env
		}
		return v.render(), env
	}
	if sel, ok := e.(*ast.SelectorExpr); ok {
		if x, sc, found, ok := s.field(sel); ok && !found {
			return zeroValues[typ], env
		} else if ok {
			return "`" + sc.source(x) + "`", env
		}
	}
	return "`" + s.source(e) + "`", env
}

// zeroValues are the defaults of flags whose default is a field that
// DefaultConfig leaves at its zero value.
var zeroValues = map[string]string{
	"bool": "false", "int": "0", "int64": "0", "uint": "0", "uint64": "0", "float": "0", "duration": "0s",
}

// text renders a usage string: its constant parts as they are, any other
// part as source.
func (s scope) text(e ast.Expr) string {
	if v, ok := s.eval(e); ok && v.kind == kindString {
		return v.s
	}
	if b, ok := e.(*ast.BinaryExpr); ok && b.Op == token.ADD {
		return s.text(b.X) + s.text(b.Y)
	}
	return "`" + s.source(e) + "`"
}

// isEnvDefaults reports whether call is svcmain.EnvDefaults (or a local
// envDefaults), which sets every flag from the variable its usage names.
func isEnvDefaults(call *ast.CallExpr) bool {
	switch fn := call.Fun.(type) {
	case *ast.Ident:
		return fn.Name == "envDefaults" || fn.Name == "EnvDefaults"
	case *ast.SelectorExpr:
		return fn.Sel.Name == "EnvDefaults"
	}
	return false
}

// isPkgCall reports whether call is pkg.name(...) with pkg the import
// path's package.
func isPkgCall(f *goFile, call *ast.CallExpr, ipath, name string) bool {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != name {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	return ok && f.imports[id.Name] == ipath
}

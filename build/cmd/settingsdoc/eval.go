package main

import (
	"bytes"
	"go/ast"
	"go/printer"
	"go/token"
	"strconv"
	"time"
)

// valueKind says how a value of a default renders.
type valueKind int

const (
	kindString valueKind = iota
	kindInt
	kindDuration
	kindBool
)

// value is a constant the generator worked out from source: a flag's
// default or an environment variable's name.
type value struct {
	kind valueKind
	s    string
	i    int64
}

// render returns the value as the reference shows it.
func (v value) render() string {
	switch v.kind {
	case kindInt:
		return strconv.FormatInt(v.i, 10)
	case kindDuration:
		return time.Duration(v.i).String()
	case kindBool:
		return v.s
	}
	return strconv.Quote(v.s)
}

// externalConsts are the constants of other modules that defaults use.
var externalConsts = map[string]value{
	"github.com/nats-io/nats.go.DefaultURL": {kind: kindString, s: "nats://127.0.0.1:4222"},
}

var durationUnits = map[string]time.Duration{
	"Nanosecond": time.Nanosecond, "Microsecond": time.Microsecond, "Millisecond": time.Millisecond,
	"Second": time.Second, "Minute": time.Minute, "Hour": time.Hour,
}

// scope is where an expression is evaluated: a file of a package, and the
// local variables assigned from a DefaultConfig-like call in the function.
type scope struct {
	t      *tree
	pkg    *goPackage
	file   *goFile
	locals map[string]ast.Expr
}

// eval works out the constant value of e, following constants of the
// repository's packages, time units, and fields of the composite literal
// that a function such as DefaultConfig returns. ok is false when e is not
// such a constant (a host name, a call to a function of another module).
func (s scope) eval(e ast.Expr) (value, bool) {
	switch e := e.(type) {
	case *ast.BasicLit:
		switch e.Kind {
		case token.STRING:
			v, err := strconv.Unquote(e.Value)
			return value{kind: kindString, s: v}, err == nil
		case token.INT:
			n, err := strconv.ParseInt(e.Value, 0, 64)
			return value{kind: kindInt, i: n}, err == nil
		}
	case *ast.ParenExpr:
		return s.eval(e.X)
	case *ast.Ident:
		switch e.Name {
		case "true", "false":
			return value{kind: kindBool, s: e.Name}, true
		}
		if x, ok := s.locals[e.Name]; ok {
			return s.eval(x)
		}
		if x, ok := s.pkg.consts[e.Name]; ok {
			return s.eval(x)
		}
	case *ast.SelectorExpr:
		return s.evalSelector(e)
	case *ast.BinaryExpr:
		return s.evalBinary(e)
	case *ast.CallExpr:
		return s.evalCall(e)
	}
	return value{}, false
}

func (s scope) evalSelector(e *ast.SelectorExpr) (value, bool) {
	if id, ok := e.X.(*ast.Ident); ok {
		if ipath, ok := s.file.imports[id.Name]; ok {
			if ipath == "time" {
				if d, ok := durationUnits[e.Sel.Name]; ok {
					return value{kind: kindDuration, i: int64(d)}, true
				}
			}
			if v, ok := externalConsts[ipath+"."+e.Sel.Name]; ok {
				return v, true
			}
			if p := s.t.pkgByImport(ipath); p != nil {
				if x, ok := p.consts[e.Sel.Name]; ok {
					return s.in(p, x).eval(x)
				}
			}
			return value{}, false
		}
	}
	// A field of a composite literal: cfg.Events.MaxAge where cfg is
	// orchestrator.DefaultConfig().
	x, sc, found, ok := s.field(e)
	if !ok || !found {
		// A field the literal leaves out has its zero value, which the
		// caller types (flagDefault).
		return value{}, false
	}
	return sc.eval(x)
}

// field finds the expression that a composite literal gives field e.Sel of
// e.X. ok is false when e.X is not such a literal; found is false when the
// literal leaves the field out (its zero value).
func (s scope) field(e *ast.SelectorExpr) (x ast.Expr, sc scope, found, ok bool) {
	lit, sc, ok := s.literal(e.X)
	if !ok {
		return nil, s, false, false
	}
	for _, el := range lit.Elts {
		kv, isKV := el.(*ast.KeyValueExpr)
		if !isKV {
			continue
		}
		if k, isID := kv.Key.(*ast.Ident); isID && k.Name == e.Sel.Name {
			return kv.Value, sc, true, true
		}
	}
	return nil, sc, false, true
}

// literal returns the composite literal that e stands for: a local
// assigned from a call, a call to a function returning one, or a field of
// another literal.
func (s scope) literal(e ast.Expr) (*ast.CompositeLit, scope, bool) {
	switch e := e.(type) {
	case *ast.CompositeLit:
		return e, s, true
	case *ast.Ident:
		if x, ok := s.locals[e.Name]; ok {
			return s.literal(x)
		}
		if fn, ok := s.pkg.funcs[e.Name]; ok {
			return s.returned(fn)
		}
	case *ast.CallExpr:
		switch fn := e.Fun.(type) {
		case *ast.Ident:
			if d, ok := s.pkg.funcs[fn.Name]; ok {
				return s.returned(d)
			}
		case *ast.SelectorExpr:
			if id, ok := fn.X.(*ast.Ident); ok {
				if p := s.t.pkgByImport(s.file.imports[id.Name]); p != nil {
					if d, ok := p.funcs[fn.Sel.Name]; ok {
						return s.in(p, d).returned(d)
					}
				}
			}
		}
	case *ast.SelectorExpr:
		lit, sc, ok := s.literal(e.X)
		if !ok {
			return nil, s, false
		}
		for _, el := range lit.Elts {
			if kv, ok := el.(*ast.KeyValueExpr); ok {
				if k, ok := kv.Key.(*ast.Ident); ok && k.Name == e.Sel.Name {
					return sc.literal(kv.Value)
				}
			}
		}
	}
	return nil, s, false
}

// returned finds the composite literal that fn's last return statement
// returns.
func (s scope) returned(fn *ast.FuncDecl) (*ast.CompositeLit, scope, bool) {
	if fn.Body == nil || len(fn.Body.List) == 0 {
		return nil, s, false
	}
	ret, ok := fn.Body.List[len(fn.Body.List)-1].(*ast.ReturnStmt)
	if !ok || len(ret.Results) != 1 {
		return nil, s, false
	}
	sc := s
	sc.locals = nil
	return sc.literal(ret.Results[0])
}

// in returns the scope of node, a declaration of package p.
func (s scope) in(p *goPackage, node ast.Node) scope {
	for _, f := range p.files {
		if f.ast.Pos() <= node.Pos() && node.End() <= f.ast.End() {
			return scope{t: s.t, pkg: p, file: f}
		}
	}
	return scope{t: s.t, pkg: p, file: p.files[0]}
}

func (s scope) evalBinary(e *ast.BinaryExpr) (value, bool) {
	x, ok := s.eval(e.X)
	if !ok {
		return value{}, false
	}
	y, ok := s.eval(e.Y)
	if !ok {
		return value{}, false
	}
	if x.kind == kindString && y.kind == kindString && e.Op == token.ADD {
		return value{kind: kindString, s: x.s + y.s}, true
	}
	if x.kind == kindString || y.kind == kindString || x.kind == kindBool || y.kind == kindBool {
		return value{}, false
	}
	kind := kindInt
	if x.kind == kindDuration || y.kind == kindDuration {
		kind = kindDuration
	}
	switch e.Op {
	case token.MUL:
		return value{kind: kind, i: x.i * y.i}, true
	case token.ADD:
		return value{kind: kind, i: x.i + y.i}, true
	case token.SUB:
		return value{kind: kind, i: x.i - y.i}, true
	case token.SHL:
		return value{kind: kind, i: x.i << y.i}, true
	}
	return value{}, false
}

func (s scope) evalCall(e *ast.CallExpr) (value, bool) {
	// A conversion such as time.Duration(5) or int64(1 << 20).
	if len(e.Args) == 1 {
		if sel, ok := e.Fun.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok && s.file.imports[id.Name] == "time" && sel.Sel.Name == "Duration" {
				v, ok := s.eval(e.Args[0])
				v.kind = kindDuration
				return v, ok
			}
		}
		if id, ok := e.Fun.(*ast.Ident); ok && (id.Name == "int64" || id.Name == "int" || id.Name == "string") {
			return s.eval(e.Args[0])
		}
	}
	return value{}, false
}

// source returns e as Go source, for a default the generator cannot work
// out.
func (s scope) source(e ast.Expr) string {
	var b bytes.Buffer
	if err := printer.Fprint(&b, s.t.fset, e); err != nil {
		return "?"
	}
	return b.String()
}

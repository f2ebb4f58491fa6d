package main

import (
	"errors"
	"go/ast"
	"go/token"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// upDir is the package of the sandox command, whose `up` starts the
// control plane's containers.
const upDir = "services/cmd/sandox"

// upSettings is what `sandox up` gives each container it starts, by the
// binary the container runs, as read from its source.
type upSettings struct {
	containers map[string]*upContainer
}

// upContainer is what `sandox up` gives one container: variables it sets
// to fixed values (or to one of its own flags), variables and prefixes it
// passes through from the operator's environment, and the flags of its
// command line.
type upContainer struct {
	fixed    map[string]string // variable → "" or the `sandox up` flag that sets it
	passed   map[string]bool   // variables passed through by name
	prefixes []string          // prefixes passed through
	flags    map[string]bool
}

var (
	envAssign = regexp.MustCompile(`^([A-Z][A-Z0-9_]*)=`)
	envPrefix = regexp.MustCompile(`^[A-Z][A-Z0-9_]*_$`)
	envName   = regexp.MustCompile(`^SANDOX_[A-Z0-9_]+$`)
)

// upScan holds what scanUp knows while it reads the package.
type upScan struct {
	file     *goFile
	upFlags  []string            // the flags of `sandox up`, without dashes
	environ  map[string][]string // functions that read os.Environ → prefixes they test themselves
	settings upSettings
}

// scanUp reads upSettings from the non-test files of upDir: every
// composite literal with a Cmd field whose first element names a sandox
// binary is a container, and its other fields say what it gets, in any of
// the forms "SANDOX_X=" + value, "SANDOX_X=value", {Key: "SANDOX_X",
// Value: v}, a map key "SANDOX_X", a Pass list of prefixes, or a call to a
// function that passes the operator's variables through. It fails when it
// finds no container with a fixed setting: the scan no longer matches how
// `sandox up` is written, and needs updating here.
func scanUp(t *tree, flags []flagSetting) (upSettings, error) {
	u := upScan{environ: map[string][]string{}, settings: upSettings{containers: map[string]*upContainer{}}}
	for _, f := range flags {
		if f.Command == "sandox up" {
			u.upFlags = append(u.upFlags, f.Name)
		}
	}
	p := t.pkgs[upDir]
	if p == nil {
		return u.settings, errors.New(upDir + ": no such package")
	}
	for _, f := range p.files {
		for _, d := range f.ast.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && !f.test && fn.Body != nil && calls(f, fn.Body, "os", "Environ") {
				u.environ[fn.Name.Name] = ownPrefixes(f, fn.Body)
			}
		}
	}
	for _, f := range p.files {
		if f.test {
			continue
		}
		u.file = f
		ast.Inspect(f.ast, func(n ast.Node) bool {
			if lit, ok := n.(*ast.CompositeLit); ok {
				u.container(lit)
			}
			return true
		})
	}
	for _, c := range u.settings.containers {
		if len(c.fixed) > 0 {
			return u.settings, nil
		}
	}
	return u.settings, errors.New(upDir + ": found no container with a SANDOX_* setting that sandox up sets; the scan in build/cmd/settingsdoc/upenv.go needs updating")
}

// ownPrefixes returns the prefixes a function tests with
// strings.HasPrefix itself.
func ownPrefixes(f *goFile, body ast.Node) []string {
	var out []string
	ast.Inspect(body, func(n ast.Node) bool {
		if call, ok := n.(*ast.CallExpr); ok && isPkgCall(f, call, "strings", "HasPrefix") {
			for _, a := range call.Args {
				if s, ok := stringLit(a); ok && (envPrefix.MatchString(s) || envAssign.MatchString(s)) {
					out = append(out, s)
				}
			}
		}
		return true
	})
	return out
}

// container reads lit when it is a container: {Cmd: []string{"sandox-x",
// flags...}, ...}.
func (u *upScan) container(lit *ast.CompositeLit) {
	var cmd *ast.CompositeLit
	for _, el := range lit.Elts {
		if kv, ok := el.(*ast.KeyValueExpr); ok {
			if k, ok := kv.Key.(*ast.Ident); ok && k.Name == "Cmd" {
				cmd, _ = kv.Value.(*ast.CompositeLit)
			}
		}
	}
	if cmd == nil || len(cmd.Elts) == 0 {
		return
	}
	bin, ok := stringLit(cmd.Elts[0])
	if !ok || !strings.HasPrefix(bin, "sandox-") {
		return
	}
	c := u.settings.containers[bin]
	if c == nil {
		c = &upContainer{fixed: map[string]string{}, passed: map[string]bool{}, flags: map[string]bool{}}
		u.settings.containers[bin] = c
	}
	for _, e := range cmd.Elts[1:] {
		if s, ok := stringLit(e); ok && strings.HasPrefix(s, "-") {
			c.flags[strings.TrimLeft(s, "-")] = true
		}
	}
	for _, el := range lit.Elts {
		kv, ok := el.(*ast.KeyValueExpr)
		if !ok {
			continue
		}
		if k, ok := kv.Key.(*ast.Ident); ok && k.Name == "Pass" {
			ast.Inspect(kv.Value, func(n ast.Node) bool {
				if s, ok := stringLit(exprOf(n)); ok {
					c.pass(s)
				}
				return true
			})
			continue
		}
		u.settingsIn(c, kv.Value)
	}
}

// settingsIn adds what the expression e of a container's field sets or
// passes through.
func (u *upScan) settingsIn(c *upContainer, e ast.Expr) {
	passArgs := map[token.Pos]bool{}
	ast.Inspect(e, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			name := ""
			switch fn := n.Fun.(type) {
			case *ast.Ident:
				name = fn.Name
			case *ast.SelectorExpr:
				name = fn.Sel.Name
			}
			own, ok := u.environ[name]
			if !ok {
				return true
			}
			for _, p := range own {
				c.pass(p)
			}
			for _, a := range n.Args {
				if s, ok := stringLit(a); ok {
					c.pass(s)
					passArgs[a.Pos()] = true
				}
			}
		case *ast.BinaryExpr:
			if s, ok := stringLit(n.X); ok && n.Op == token.ADD {
				if m := envAssign.FindStringSubmatch(s); m != nil && s == m[0] {
					c.fixed[m[1]] = u.upFlagIn(n.Y)
					passArgs[n.X.Pos()] = true
				}
			}
		case *ast.BasicLit:
			// "SANDOX_X=value" or "SANDOX_X=%d" (a format).
			if s, ok := stringLit(n); ok && !passArgs[n.Pos()] {
				if m := envAssign.FindStringSubmatch(s); m != nil {
					if _, seen := c.fixed[m[1]]; !seen {
						c.fixed[m[1]] = ""
					}
				}
			}
		case *ast.KeyValueExpr:
			// A map key "SANDOX_X": v.
			if k, ok := stringLit(n.Key); ok && envName.MatchString(k) {
				c.fixed[k] = u.upFlagIn(n.Value)
			}
		case *ast.CompositeLit:
			// {Key: "SANDOX_X", Value: v}.
			var key string
			var value ast.Expr
			for _, el := range n.Elts {
				if kv, ok := el.(*ast.KeyValueExpr); ok {
					if id, ok := kv.Key.(*ast.Ident); ok {
						switch id.Name {
						case "Key", "Name":
							key, _ = stringLit(kv.Value)
						case "Value":
							value = kv.Value
						}
					}
				}
			}
			if envName.MatchString(key) {
				c.fixed[key] = u.upFlagIn(value)
			}
		}
		return true
	})
}

// pass records s, a prefix or "NAME=", as passed through.
func (c *upContainer) pass(s string) {
	if m := envAssign.FindStringSubmatch(s); m != nil && s == m[0] {
		c.passed[m[1]] = true
	} else if envPrefix.MatchString(s) && !slices.Contains(c.prefixes, s) {
		c.prefixes = append(c.prefixes, s)
	}
}

// upFlagIn returns the flag of `sandox up` that e's value comes from: a
// name in e that spells the flag (*pool, s.Pool), or "".
func (u *upScan) upFlagIn(e ast.Expr) string {
	if e == nil {
		return ""
	}
	var found string
	ast.Inspect(e, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok {
			for _, f := range u.upFlags {
				if strings.EqualFold(id.Name, strings.ReplaceAll(f, "-", "")) {
					found = f
				}
			}
		}
		return found == ""
	})
	return found
}

// exprOf returns n as an expression, or nil.
func exprOf(n ast.Node) ast.Expr {
	e, _ := n.(ast.Expr)
	return e
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
	_, ok := u.containers[binary]
	return ok
}

// reach says how a user of `sandox up` sets a setting of the container
// that runs binary: the flag (if it is one, "" for a variable) and the
// variable that sets it.
func (u upSettings) reach(binary, flag, env string) string {
	c := u.containers[binary]
	if c == nil {
		return unreachable
	}
	if flag != "" && c.flags[flag] {
		return "fixed by `sandox up`"
	}
	if env == "" {
		return unreachable
	}
	if via, ok := c.fixed[env]; ok {
		if via != "" {
			return "`sandox up -" + via + "`"
		}
		return "fixed by `sandox up`"
	}
	if c.passed[env] {
		return "operator's environment"
	}
	for _, p := range c.prefixes {
		if strings.HasPrefix(env, p) {
			return "operator's environment (`" + p + "*`)"
		}
	}
	return unreachable
}

// reachAny says how a user of `sandox up` sets variable env in each
// container that gets it, for a variable that several commands read:
// "fixed by `sandox up` (sandox-data, sandox-search)", or "—" for none.
func (u upSettings) reachAny(env string) string {
	byText := map[string][]string{}
	var texts []string
	for bin := range u.containers {
		r := u.reach(bin, "", env)
		if r == unreachable {
			continue
		}
		if byText[r] == nil {
			texts = append(texts, r)
		}
		byText[r] = append(byText[r], bin)
	}
	if len(texts) == 0 {
		return "—"
	}
	slices.Sort(texts)
	var out []string
	for _, t := range texts {
		bins := byText[t]
		slices.Sort(bins)
		out = append(out, t+" ("+strings.Join(bins, ", ")+")")
	}
	return strings.Join(out, "; ")
}

// unreachable marks a setting that a user of `sandox up` cannot set.
const unreachable = "**not reachable**"

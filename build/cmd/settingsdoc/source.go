package main

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// goPackage is one directory of parsed Go files.
type goPackage struct {
	dir   string // slash path relative to the repository root
	name  string
	files []*goFile
	// consts holds the package's constant declarations by name.
	consts map[string]ast.Expr
	// funcs holds the package's top-level functions by name.
	funcs map[string]*ast.FuncDecl
}

// goFile is one parsed Go file with its import names.
type goFile struct {
	path    string // slash path relative to the repository root
	test    bool
	ast     *ast.File
	imports map[string]string // local name → import path
}

// tree is the repository as the generator reads it: its Go packages by
// directory, and the paths of its Python and shell files.
type tree struct {
	root    string
	module  string
	fset    *token.FileSet
	pkgs    map[string]*goPackage
	python  []string
	scripts []string
}

// skipDir reports whether the walk leaves out a directory: version control,
// virtual environments (any directory with a pyvenv.cfg), installed
// packages, build output, caches and test data.
func skipDir(path, name string) bool {
	switch name {
	case ".git", ".venv", "venv", "node_modules", "site-packages", "dist", "bin", "testdata", ".cache", ".task", "__pycache__", ".pytest_cache":
		return true
	}
	_, err := os.Stat(filepath.Join(path, "pyvenv.cfg"))
	return err == nil
}

// loadTree parses every Go file under root and lists its Python and shell
// files.
func loadTree(root string) (*tree, error) {
	module, err := modulePath(filepath.Join(root, "go.mod"))
	if err != nil {
		return nil, err
	}
	t := &tree{root: root, module: module, fset: token.NewFileSet(), pkgs: map[string]*goPackage{}}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && skipDir(path, d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		switch {
		case strings.HasSuffix(rel, ".go"):
			return t.addGo(path, rel)
		case strings.HasSuffix(rel, ".py"):
			t.python = append(t.python, rel)
		case strings.HasSuffix(rel, ".sh"):
			t.scripts = append(t.scripts, rel)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(t.python)
	sort.Strings(t.scripts)
	return t, nil
}

func (t *tree) addGo(path, rel string) error {
	f, err := parser.ParseFile(t.fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		return fmt.Errorf("parse %s: %w", rel, err)
	}
	dir := filepath.ToSlash(filepath.Dir(rel))
	test := strings.HasSuffix(rel, "_test.go")
	key := dir
	if test && strings.HasSuffix(f.Name.Name, "_test") {
		key = dir + " (external test)"
	}
	p := t.pkgs[key]
	if p == nil {
		p = &goPackage{dir: dir, name: f.Name.Name, consts: map[string]ast.Expr{}, funcs: map[string]*ast.FuncDecl{}}
		t.pkgs[key] = p
	}
	gf := &goFile{path: rel, test: test, ast: f, imports: map[string]string{}}
	for _, im := range f.Imports {
		ipath := strings.Trim(im.Path.Value, `"`)
		name := importName(ipath)
		if im.Name != nil {
			name = im.Name.Name
		}
		gf.imports[name] = ipath
	}
	p.files = append(p.files, gf)
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.GenDecl:
			if d.Tok != token.CONST {
				continue
			}
			for _, spec := range d.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if i < len(vs.Values) {
						p.consts[n.Name] = vs.Values[i]
					}
				}
			}
		case *ast.FuncDecl:
			if d.Recv == nil {
				p.funcs[d.Name.Name] = d
			}
		}
	}
	return nil
}

// pkgByImport returns the repository's package with import path ipath, or
// nil for a package outside the module.
func (t *tree) pkgByImport(ipath string) *goPackage {
	if ipath != t.module && !strings.HasPrefix(ipath, t.module+"/") {
		return nil
	}
	return t.pkgs[strings.TrimPrefix(strings.TrimPrefix(ipath, t.module), "/")]
}

// sortedPkgs returns the packages in the order of their directories.
func (t *tree) sortedPkgs() []*goPackage {
	keys := make([]string, 0, len(t.pkgs))
	for k := range t.pkgs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]*goPackage, len(keys))
	for i, k := range keys {
		out[i] = t.pkgs[k]
	}
	return out
}

// modulePath reads the module line of a go.mod file.
func modulePath(gomod string) (string, error) {
	f, err := os.Open(gomod)
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
			return strings.TrimSpace(m), nil
		}
	}
	return "", fmt.Errorf("%s: no module line", gomod)
}

// importName guesses the package name of an import path without a local
// name: its last element without a major version, a ".go" suffix or a
// "go-" prefix (github.com/nats-io/nats.go is package nats).
func importName(ipath string) string {
	elems := strings.Split(ipath, "/")
	name := elems[len(elems)-1]
	if len(elems) > 1 && len(name) > 1 && name[0] == 'v' && strings.Trim(name[1:], "0123456789") == "" {
		name = elems[len(elems)-2]
	}
	name = strings.TrimSuffix(name, ".go")
	name = strings.TrimPrefix(name, "go-")
	return name
}

// Package docs holds the tests that keep the walk through the code
// (tutorial.md and the pages under tutorial/) true to the code: every
// package and component is covered, every snippet is still in its source
// file, and every path and symbol named in backticks exists.
package docs

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/require"
)

// root is the repository's top directory, seen from this package.
const root = ".."

// components are the parts of sandox that are not Go packages; the
// tutorial names each of them.
var components = []string{
	"sdk/python",
	"sdk/python/src/sandox",
	"sdk/python/src/sandox/aio",
	"sdk/python/scripts",
	"sdk/python/tests",
	"services/qdrantedge",
	"services/qdrantedge/src/qdrantedge",
	"build/neo4j",
	"build/scripts",
}

// componentFiles are the directories whose every source file the tutorial
// names (by its path, or by its base name in the component's section).
var componentFiles = []string{
	"sdk/python/src/sandox",
	"sdk/python/src/sandox/aio",
	"services/qdrantedge/src/qdrantedge",
	"build/neo4j",
	"build/scripts",
	"build",
}

// page is one markdown file of the tutorial.
type page struct {
	path  string // relative to the repository
	lines []string
}

// pages reads tutorial.md and every page under tutorial/.
func pages(t *testing.T) []page {
	t.Helper()
	names := []string{"tutorial.md"}
	more, err := filepath.Glob("tutorial/*.md")
	require.NoError(t, err)
	names = append(names, more...)
	var out []page
	for _, n := range names {
		data, err := os.ReadFile(n)
		require.NoError(t, err)
		out = append(out, page{path: "docs/" + filepath.ToSlash(n), lines: strings.Split(string(data), "\n")})
	}
	return out
}

// mention is a code span of prose (not of a fenced block), with where it
// is and the directories the headings above it name.
type mention struct {
	text  string
	where string   // docs/…:line
	dirs  []string // directories named by the enclosing headings, innermost first
}

// block is a fenced code block with the marker line above it.
type block struct {
	marker string // the marker's text, "" when there is none
	where  string
	text   string
}

var (
	codeSpan   = regexp.MustCompile("`([^`]+)`")
	heading    = regexp.MustCompile(`^(#+) `)
	markerLine = regexp.MustCompile(`^<!-- (snippet: \S+|illustration) -->$`)
	linkTarget = regexp.MustCompile(`\]\(([^)#\s]*)(#[^)\s]*)?\)`)
)

// scan splits a page into prose code spans, fenced blocks and link targets.
func scan(p page) (spans []mention, blocks []block, links []mention) {
	var heads []string // heads[i] is the directory named by the heading of level i+1, or ""
	var fence *block
	var body strings.Builder
	var carry, carryWhere string // a line whose code span is not closed yet
	for i, line := range p.lines {
		where := fmt.Sprintf("%s:%d", p.path, i+1)
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			if fence == nil {
				fence = &block{where: where}
				if i > 0 {
					if m := markerLine.FindStringSubmatch(strings.TrimSpace(p.lines[i-1])); m != nil {
						fence.marker = m[1]
					}
				}
				body.Reset()
				continue
			}
			fence.text = body.String()
			blocks = append(blocks, *fence)
			fence = nil
			continue
		}
		if fence != nil {
			body.WriteString(line + "\n")
			continue
		}
		if m := heading.FindStringSubmatch(line); m != nil {
			level := len(m[1])
			heads = append(heads[:min(level-1, len(heads))], make([]string, max(0, level-1-len(heads)))...)
			dir := ""
			for _, s := range codeSpan.FindAllStringSubmatch(line, -1) {
				if isDir(s[1]) {
					dir = s[1]
					break
				}
			}
			heads = append(heads, dir)
		}
		var dirs []string
		for j := len(heads) - 1; j >= 0; j-- {
			if heads[j] != "" {
				dirs = append(dirs, heads[j])
			}
		}
		// A code span may run on to the next line: keep the text until its
		// backticks pair up, so that spans are not paired across lines.
		if carry != "" {
			line, where = carry+" "+line, carryWhere
			carry = ""
		}
		if strings.Count(line, "`")%2 == 1 && i+1 < len(p.lines) && !heading.MatchString(line) {
			carry, carryWhere = line, where
			continue
		}
		for _, s := range codeSpan.FindAllStringSubmatch(line, -1) {
			spans = append(spans, mention{text: s[1], where: where, dirs: dirs})
		}
		for _, l := range linkTarget.FindAllStringSubmatch(line, -1) {
			links = append(links, mention{text: l[1] + l[2], where: where})
		}
	}
	return spans, blocks, links
}

// isDir says whether s names a directory of the repository.
func isDir(s string) bool {
	if !repoPath.MatchString(s) {
		return false
	}
	fi, err := os.Stat(filepath.Join(root, strings.TrimSuffix(s, "/")))
	return err == nil && fi.IsDir()
}

// goPackages returns the directory of every package of the module,
// relative to the repository's top, as go list ./... gives them.
func goPackages(t *testing.T) []string {
	t.Helper()
	cmd := exec.Command("go", "list", "-e", "-f", "{{.Dir}}", "./...")
	cmd.Dir = root
	out, err := cmd.Output()
	require.NoError(t, err, "go list ./...")
	top, err := filepath.Abs(root)
	require.NoError(t, err)
	var dirs []string
	for _, dir := range strings.Fields(string(out)) {
		rel, err := filepath.Rel(top, dir)
		require.NoError(t, err)
		dirs = append(dirs, filepath.ToSlash(rel))
	}
	return dirs
}

// allSpans gathers the prose code spans of every page.
func allSpans(t *testing.T) []mention {
	t.Helper()
	var out []mention
	for _, p := range pages(t) {
		s, _, _ := scan(p)
		out = append(out, s...)
	}
	return out
}

// TestTutorialCoversEveryPackage checks that every Go package of the
// module and every component that is not Go is named, by its path in
// backticks, somewhere in the tutorial, and that every source file of the
// non-Go components is named too.
func TestTutorialCoversEveryPackage(t *testing.T) {
	named := map[string]bool{}
	spans := allSpans(t)
	for _, s := range spans {
		named[strings.TrimSuffix(s.text, "/")] = true
	}
	pkgs := goPackages(t)
	require.Contains(t, pkgs, "services/orchestrator", "the package walk found no packages; is the test run from docs/?")
	for _, dir := range append(pkgs, components...) {
		if dir == "." {
			continue
		}
		if !named[dir] {
			t.Errorf("package or component %s is not named in the tutorial: add a section (or a marked subsection) to docs/tutorial/*.md that names `%s` and says what it does", dir, dir)
		}
	}
	for _, dir := range componentFiles {
		entries, err := os.ReadDir(filepath.Join(root, dir))
		require.NoError(t, err)
		for _, e := range entries {
			name := e.Name()
			if e.IsDir() || strings.HasSuffix(name, ".go") || name == "py.typed" || name == "__init__.py" {
				continue
			}
			path := dir + "/" + name
			if !named[path] && !namedIn(spans, name, dir) {
				t.Errorf("%s is not named in the tutorial: name it (`%s`, or `%s` under a heading that names `%s`) where its component is explained", path, path, name, dir)
			}
		}
	}
}

// namedIn says whether a span names file under a heading that names dir.
func namedIn(spans []mention, file, dir string) bool {
	for _, s := range spans {
		if s.text == file && slices.Contains(s.dirs, dir) {
			return true
		}
	}
	return false
}

// normalise collapses every run of white space to one space.
func normalise(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// elision is a snippet line that stands for lines left out.
func elision(line string) bool {
	l := strings.TrimSpace(line)
	return l == "…" || l == "..." || l == "// …" || l == "# …"
}

// TestTutorialSnippetsMatchTheCode checks every fenced block of the
// tutorial: a block must be marked, on the line above it, either
// <!-- snippet: path/to/file --> (its text is quoted from that file) or
// <!-- illustration --> (a listing, a command or a sketch that quotes no
// file). A snippet's parts, between lines that are only "…", must each
// appear in the file, in order, white space aside.
func TestTutorialSnippetsMatchTheCode(t *testing.T) {
	n := 0
	for _, p := range pages(t) {
		_, blocks, _ := scan(p)
		for _, b := range blocks {
			switch {
			case b.marker == "":
				t.Errorf("%s: a code block without a marker: put <!-- snippet: path/from/repo/root --> on the line above it when it quotes a file, or <!-- illustration --> when it does not", b.where)
			case b.marker == "illustration":
			default:
				n++
				if err := snippetError(b); err != nil {
					t.Error(err)
				}
			}
		}
	}
	require.NotZero(t, n, "the tutorial quotes no code")
}

// snippetError checks one snippet against the file its marker names and
// says what is wrong, or returns nil.
func snippetError(b block) error {
	path := strings.TrimPrefix(b.marker, "snippet: ")
	file := path
	if !filepath.IsAbs(file) { // absolute only in this package's own tests
		file = filepath.Join(root, path)
	}
	src, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("%s: the snippet's source %s cannot be read (%w): the file moved or was removed; point the marker at the file that holds the code now", b.where, path, err)
	}
	text := normalise(string(src))
	var parts []string
	var cur []string
	for _, line := range strings.Split(b.text, "\n") {
		if elision(line) {
			parts = append(parts, strings.Join(cur, "\n"))
			cur = nil
			continue
		}
		cur = append(cur, line)
	}
	parts = append(parts, strings.Join(cur, "\n"))
	at := 0
	for i, part := range parts {
		want := normalise(part)
		if want == "" {
			continue
		}
		k := strings.Index(text[at:], want)
		if k < 0 {
			return fmt.Errorf("%s: part %d of the snippet is no longer in %s (after its earlier parts):\n%s\nthe code changed: copy the current lines from %s into the snippet (lines that are only … stand for lines left out), or point the marker at the file that holds them now", b.where, i+1, path, part, path)
		}
		at += k + len(want)
	}
	return nil
}

// repoPath matches a code span that is a path in the repository: a
// top-level entry, then more elements.
var repoPath = regexp.MustCompile(`^(sdk|services|executor|schemas|tools|build|integration|docs|internal|\.ci)(/[A-Za-z0-9_.\-]+)*/?$`)

// fileName matches a bare file name with a source or doc extension.
var fileName = regexp.MustCompile(`^[A-Za-z0-9_.\-]+\.(go|py|md|sh|java|yaml|yml|toml|json|Dockerfile|xml)$`)

var topLevel = []string{"README.md", "Taskfile.yml", "compose.yaml", "compose.cluster.yaml", "go.mod", "go.sum"}

// TestTutorialPathsExist checks every path in backticks: a path from the
// repository's top must exist, and a bare file name must be a file of a
// directory that a heading above it names. Links to other pages must
// resolve too.
func TestTutorialPathsExist(t *testing.T) {
	for _, p := range pages(t) {
		spans, _, links := scan(p)
		for _, s := range spans {
			switch {
			case repoPath.MatchString(s.text):
				if _, err := os.Stat(filepath.Join(root, s.text)); err != nil {
					t.Errorf("%s: `%s` does not exist: write the path of the file or directory as it is now (from the repository's top)", s.where, s.text)
				}
			case slices.Contains(topLevel, s.text):
			case fileName.MatchString(s.text):
				found := false
				for _, d := range s.dirs {
					if _, err := os.Stat(filepath.Join(root, d, s.text)); err == nil {
						found = true
						break
					}
				}
				if !found {
					t.Errorf("%s: `%s` is no file of %v (the directories its headings name): write its path from the repository's top, or fix the name", s.where, s.text, s.dirs)
				}
			}
		}
		for _, l := range links {
			if strings.Contains(l.text, "://") || strings.HasPrefix(l.text, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(l.text, "#")
			target := filepath.Join(root, p.path)
			if file != "" {
				target = filepath.Join(filepath.Dir(target), file)
			}
			if _, err := os.Stat(target); err != nil {
				t.Errorf("%s: the link to %s leads nowhere: fix its target", l.where, l.text)
				continue
			}
			if anchor != "" && strings.HasSuffix(target, ".md") && !slices.Contains(anchors(t, target), anchor) {
				t.Errorf("%s: the link to %s names no heading of %s: link to a heading that is there (its GitHub anchor)", l.where, l.text, file)
			}
		}
	}
}

// anchors returns the GitHub anchors of the headings of a markdown file.
func anchors(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var out []string
	seen := map[string]int{}
	fenced := false
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
		}
		if fenced || !heading.MatchString(line) {
			continue
		}
		a := slug(strings.TrimLeft(line, "# "))
		if n := seen[a]; n > 0 {
			out = append(out, fmt.Sprintf("%s-%d", a, n))
		} else {
			out = append(out, a)
		}
		seen[a]++
	}
	return out
}

// slug is GitHub's anchor of a heading: lower case, punctuation other
// than '-' and '_' dropped, spaces made '-'.
func slug(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// decls indexes the module's Go declarations: for each package name, its
// top-level names; for each type name (in any package), its methods and
// fields.
type decls struct {
	pkg     map[string]map[string]bool
	members map[string]map[string]bool
}

// loadDecls parses every Go file of the module.
func loadDecls(t *testing.T) decls {
	t.Helper()
	d := decls{pkg: map[string]map[string]bool{}, members: map[string]map[string]bool{}}
	add := func(m map[string]map[string]bool, k, v string) {
		if m[k] == nil {
			m[k] = map[string]bool{}
		}
		m[k][v] = true
	}
	fset := token.NewFileSet()
	for _, dir := range goPackages(t) {
		files, err := filepath.Glob(filepath.Join(root, dir, "*.go"))
		require.NoError(t, err)
		for _, name := range files {
			f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
			require.NoError(t, err)
			pkg := f.Name.Name
			if pkg == "main" || strings.HasSuffix(pkg, "_test") {
				pkg = filepath.Base(dir)
			}
			for _, decl := range f.Decls {
				switch decl := decl.(type) {
				case *ast.FuncDecl:
					if decl.Recv == nil {
						add(d.pkg, pkg, decl.Name.Name)
						continue
					}
					typ := decl.Recv.List[0].Type
					for {
						switch x := typ.(type) {
						case *ast.StarExpr:
							typ = x.X
							continue
						case *ast.IndexExpr:
							typ = x.X
							continue
						case *ast.IndexListExpr:
							typ = x.X
							continue
						}
						break
					}
					if id, ok := typ.(*ast.Ident); ok {
						add(d.members, id.Name, decl.Name.Name)
					}
				case *ast.GenDecl:
					for _, spec := range decl.Specs {
						switch spec := spec.(type) {
						case *ast.TypeSpec:
							add(d.pkg, pkg, spec.Name.Name)
							add(d.members, spec.Name.Name, "")
							collectFields(spec.Name.Name, spec.Type, func(k, v string) { add(d.members, k, v) })
						case *ast.ValueSpec:
							for _, n := range spec.Names {
								add(d.pkg, pkg, n.Name)
							}
						}
					}
				}
			}
		}
	}
	return d
}

// collectFields records the fields of a struct type and the methods of an
// interface type as members of typ.
func collectFields(typ string, x ast.Expr, add func(k, v string)) {
	var list *ast.FieldList
	switch x := x.(type) {
	case *ast.StructType:
		list = x.Fields
	case *ast.InterfaceType:
		list = x.Methods
	default:
		return
	}
	for _, f := range list.List {
		for _, n := range f.Names {
			add(typ, n.Name)
		}
		if len(f.Names) == 0 { // embedded: its name is a member too
			switch e := f.Type.(type) {
			case *ast.Ident:
				add(typ, e.Name)
			case *ast.StarExpr:
				if id, ok := e.X.(*ast.Ident); ok {
					add(typ, id.Name)
				}
			case *ast.SelectorExpr:
				add(typ, e.Sel.Name)
			}
		}
	}
}

// sources is the text of every source file of the repository (Go,
// Python, Java, shell, Dockerfiles, YAML), for identifiers that are
// looked up by word.
func sources(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			n := d.Name()
			if path != root && (strings.HasPrefix(n, ".") && n != ".ci" || n == "node_modules" || n == "__pycache__") {
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(path) {
		case ".go", ".py", ".java", ".sh", ".yaml", ".yml", ".toml", ".Dockerfile", ".xml":
		default:
			if d.Name() != "Dockerfile" && d.Name() != "run" {
				return nil
			}
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		b.Write(data)
		b.WriteByte('\n')
		return nil
	})
	require.NoError(t, err)
	return b.String()
}

var (
	qualified  = regexp.MustCompile(`^\*?([a-z][a-z0-9]*)\.([A-Z][A-Za-z0-9_]*)(?:\.([A-Za-z_][A-Za-z0-9_]*))?(?:\(\))?$`)
	member     = regexp.MustCompile(`^\*?([A-Z][A-Za-z0-9_]*)\.([A-Za-z_][A-Za-z0-9_]*)(?:\(\))?$`)
	identifier = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)(?:\(\))?$`)
)

// TestTutorialSymbolsExist checks the Go and Python names in backticks:
// pkg.Name (a package of the module) must be declared in that package,
// pkg.Type.member and Type.member must be a method or field of that type,
// and a lone identifier in camelCase or snake_case must occur in the
// repository's sources.
func TestTutorialSymbolsExist(t *testing.T) {
	d := loadDecls(t)
	src := sources(t)
	words := map[string]bool{}
	for _, w := range strings.FieldsFunc(src, func(r rune) bool {
		return !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}) {
		words[w] = true
	}
	for _, s := range allSpans(t) {
		if m := qualified.FindStringSubmatch(s.text); m != nil && d.pkg[m[1]] != nil {
			if !d.pkg[m[1]][m[2]] {
				t.Errorf("%s: `%s`: package %s declares no %s: the name changed or moved; write the name the code uses now", s.where, s.text, m[1], m[2])
				continue
			}
			if m[3] != "" && !d.members[m[2]][m[3]] {
				t.Errorf("%s: `%s`: %s has no method or field %s: write the name the code uses now", s.where, s.text, m[2], m[3])
			}
			continue
		}
		if m := member.FindStringSubmatch(s.text); m != nil && d.members[m[1]] != nil {
			if !d.members[m[1]][m[2]] {
				t.Errorf("%s: `%s`: type %s has no method or field %s: write the name the code uses now", s.where, s.text, m[1], m[2])
			}
			continue
		}
		if m := identifier.FindStringSubmatch(s.text); m != nil && codeName(m[1]) && !words[m[1]] {
			t.Errorf("%s: `%s` occurs in no source file: the name changed or was removed; write the name the code uses now", s.where, s.text)
		}
	}
}

// codeName says whether an identifier is shaped like a name in code
// (camelCase, MixedCase or snake_case) rather than a plain word.
func codeName(s string) bool {
	if strings.Contains(strings.Trim(s, "_"), "_") {
		return strings.ToLower(s) == s // snake_case; SCREAMING_CASE is an environment variable or constant, checked as a word too
	}
	upper := 0
	for _, r := range s[1:] {
		if r >= 'A' && r <= 'Z' {
			upper++
		}
	}
	return upper > 0 && strings.ToUpper(s) != s
}

// TestScanAndChecks checks the scanner, the snippet check and the anchors
// on small inputs, so that a check that finds nothing cannot pass the
// tests above.
func TestScanAndChecks(t *testing.T) {
	p := page{path: "docs/x.md", lines: strings.Split("# `services/orchestrator`: the worker\n\nSee `worker.go` and [a](tutorial.md).\n\n<!-- snippet: schemas/subjects.go -->\n```go\nfunc ValidateID(id string) error {\n```\nA span `that runs\non` and `one.go`.\n", "\n")}
	spans, blocks, links := scan(p)
	require.Len(t, spans, 4)
	require.Equal(t, "that runs on", spans[2].text)
	require.Equal(t, "docs/x.md:9", spans[2].where)
	require.Equal(t, "one.go", spans[3].text)
	require.Equal(t, []string{"services/orchestrator"}, spans[1].dirs)
	require.Len(t, blocks, 1)
	require.Equal(t, "snippet: schemas/subjects.go", blocks[0].marker)
	require.Len(t, links, 1)

	// A snippet matches its file white space aside, part by part in order.
	src := filepath.Join(t.TempDir(), "x.go")
	require.NoError(t, os.WriteFile(src, []byte("package x\n\nfunc A(a, b int) int {\n\treturn a +\n\t\tb\n}\n\nfunc B() {}\n"), 0o644))
	marker := "snippet: " + src
	ok := block{marker: marker, where: "x", text: "func A(a, b int) int {\n  return a + b\n…\nfunc B() {}\n"}
	require.NoError(t, snippetError(ok))
	stale := block{marker: marker, where: "x", text: "func A(a int) int {\n"}
	require.ErrorContains(t, snippetError(stale), "part 1 of the snippet is no longer in "+src)
	outOfOrder := block{marker: marker, where: "x", text: "func B() {}\n…\nfunc A(a, b int) int {\n"}
	require.ErrorContains(t, snippetError(outOfOrder), "part 2")
	gone := block{marker: "snippet: schemas/nosuch.go", where: "x", text: "x\n"}
	require.ErrorContains(t, snippetError(gone), "cannot be read")

	require.Equal(t, "servicesauth-an-identity-for-every-party", slug("`services/auth`: an identity for every party"))
	require.Equal(t, "web-search-with-the-operators-keys", slug("web search with the operator's keys"))
}

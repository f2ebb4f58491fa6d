package docs

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// allPages reads every markdown page of docs/ (the tutorial's too) and the
// README.
func allPages(t *testing.T) []page {
	t.Helper()
	var out []page
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(path) != ".md" {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		out = append(out, page{path: "docs/" + filepath.ToSlash(path), lines: strings.Split(string(data), "\n")})
		return nil
	})
	require.NoError(t, err)
	data, err := os.ReadFile(filepath.Join(root, "README.md"))
	require.NoError(t, err)
	return append(out, page{path: "README.md", lines: strings.Split(string(data), "\n")})
}

// testName is a Go test, benchmark, example or fuzz function named in
// prose, with an optional subtest path.
var testName = regexp.MustCompile(`^(Test|Benchmark|Example|Fuzz)[A-Z_][A-Za-z0-9_]*`)

// TestDocsNameRealTests checks that every Go test a page names in
// backticks (`TestDiskLimit`, `TestPool/claim`) is a function of some
// _test.go file: a page that says a test proves something must name one
// that runs.
func TestDocsNameRealTests(t *testing.T) {
	for _, e := range unknownTests(allPages(t), testFuncs(t)) {
		t.Error(e)
	}
}

// unknownTests lists the tests the pages name that funcs lacks.
func unknownTests(pages []page, funcs map[string]bool) []string {
	var out []string
	for _, p := range pages {
		spans, _, _ := scan(p)
		for _, s := range spans {
			for _, word := range strings.FieldsFunc(s.text, func(r rune) bool { return strings.ContainsRune(" ,()|'\"/.", r) }) {
				name := testName.FindString(word)
				if name == "" || funcs[name] {
					continue
				}
				out = append(out, fmt.Sprintf("%s: `%s` names no test function of the repository: write the name of the test that runs now", s.where, name))
			}
		}
	}
	return out
}

// testFuncs returns the names of the functions declared in _test.go files.
func testFuncs(t *testing.T) map[string]bool {
	t.Helper()
	decl := regexp.MustCompile(`(?m)^func (?:\([^)]*\) )?((?:Test|Benchmark|Example|Fuzz)[A-Za-z0-9_]*)\(`)
	out := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (strings.HasPrefix(n, ".") || n == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range decl.FindAllStringSubmatch(string(data), -1) {
			out[m[1]] = true
		}
		return nil
	})
	require.NoError(t, err)
	return out
}

// notPaths are spans shaped like repository paths that name something
// else: MCP's methods.
var notPaths = []string{"tools/call", "tools/list"}

// TestDocsPathsExist checks that every repository path a page names in
// backticks exists. A path may end in a test (`integration/TestPoolClaim`)
// or a symbol (`services/data.planOf`): the path before it must exist.
func TestDocsPathsExist(t *testing.T) {
	for _, e := range missingPaths(allPages(t)) {
		t.Error(e)
	}
}

// missingPaths lists the repository paths the pages name that do not
// exist.
func missingPaths(pages []page) []string {
	symbol := regexp.MustCompile(`\.[A-Za-z_][A-Za-z0-9_]*$`)
	var out []string
	for _, p := range pages {
		spans, _, _ := scan(p)
		for _, s := range spans {
			if !repoPath.MatchString(s.text) || strings.ContainsAny(s.text, "<*{") || slices.Contains(notPaths, s.text) {
				continue
			}
			path := s.text
			if dir, last := filepath.Split(path); testName.MatchString(last) {
				path = dir
			} else if _, err := os.Stat(filepath.Join(root, path)); err != nil && !fileName.MatchString(last) {
				path = symbol.ReplaceAllString(path, "")
			}
			if _, err := os.Stat(filepath.Join(root, path)); err != nil {
				out = append(out, fmt.Sprintf("%s: `%s` does not exist: write the path of the file or directory as it is now (from the repository's top)", s.where, s.text))
			}
		}
	}
	return out
}

// TestReferenceChecksFail shows both checks catching what they are for.
func TestReferenceChecksFail(t *testing.T) {
	p := page{path: "docs/x.md", lines: []string{
		"Proved by `TestReal` and `TestGone/sub`, in `integration/TestAlsoGone`.",
		"See `services/data.planOf`, `services/nowhere/x.go` and `tools/call`.",
	}}
	assert.Equal(t, []string{
		"docs/x.md:1: `TestGone` names no test function of the repository: write the name of the test that runs now",
		"docs/x.md:1: `TestAlsoGone` names no test function of the repository: write the name of the test that runs now",
	}, unknownTests([]page{p}, map[string]bool{"TestReal": true}))
	assert.Equal(t, []string{
		"docs/x.md:2: `services/nowhere/x.go` does not exist: write the path of the file or directory as it is now (from the repository's top)",
	}, missingPaths([]page{p}))
}

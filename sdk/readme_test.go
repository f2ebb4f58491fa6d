package sdk_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// readmeProgram is the program the README shows: Example_readme's imports
// and body as package main.
func readmeProgram(t *testing.T) string {
	t.Helper()
	src, err := os.ReadFile("example_readme_test.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "example_readme_test.go", src, parser.ParseComments)
	require.NoError(t, err)
	var imports []string
	for _, spec := range f.Imports {
		imports = append(imports, string(src[fset.Position(spec.Pos()).Offset:fset.Position(spec.End()).Offset]))
	}
	var body string
	for _, d := range f.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Name.Name == "Example_readme" {
			body = string(src[fset.Position(fn.Body.Lbrace).Offset+1 : fset.Position(fn.Body.Rbrace).Offset])
		}
	}
	require.NotEmpty(t, body, "no Example_readme in example_readme_test.go")
	var b strings.Builder
	b.WriteString("package main\n\nimport (\n")
	for i, imp := range imports {
		// The standard library, a blank line, then the module's packages.
		if i > 0 && strings.Contains(imp, ".") && !strings.Contains(imports[i-1], ".") {
			b.WriteString("\n")
		}
		b.WriteString("\t" + imp + "\n")
	}
	b.WriteString(")\n\nfunc main() {" + body + "}\n")
	return b.String()
}

var readmeGoBlock = regexp.MustCompile("(?s)## Using it from Go\n.*?```go\n(.*?)```")

// TestREADMEShowsTheExample checks that the README's Go program is
// Example_readme as a main package, so that what the README shows
// compiles (go test compiles the example).
func TestREADMEShowsTheExample(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	m := readmeGoBlock.FindSubmatch(readme)
	require.NotNil(t, m, "README.md has no Go block under \"## Using it from Go\"")
	require.Equal(t, readmeProgram(t), string(m[1]), "README.md's Go program must be sdk/example_readme_test.go's Example_readme as package main; copy it over")
}

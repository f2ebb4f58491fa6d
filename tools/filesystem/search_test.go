package filesystem

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/tools"
	"github.com/stretchr/testify/require"
)

var searchTree = map[string]string{
	"main.go":         "package main\n\nfunc main() {\n\tTODO()\n}\n",
	"src/app.py":      "def app():\n    # todo: more\n    return 1+1\n",
	"src/lib/util.py": "TODO = 1\nx = (a+b)\n",
	"notes.txt":       "Nothing to do here.\r\nTODO: write notes\r\n",
	"bin.dat":         "TODO\x00\x01",
	".hidden/h.txt":   "TODO hidden\n",
}

func TestSearchFiles(t *testing.T) {
	tests := []struct {
		name string
		args args
		want string
	}{
		{"regular expression", args{"pattern": `TODO\b`},
			"main.go:4: \tTODO()\nnotes.txt:2: TODO: write notes\nsrc/lib/util.py:1: TODO = 1\n(skipped 1 binary file)\n"},
		{"case-insensitive", args{"pattern": "todo", "case_insensitive": true, "glob": "*.py"},
			"src/app.py:2:     # todo: more\nsrc/lib/util.py:1: TODO = 1\n"},
		{"fixed string", args{"pattern": "1+1", "fixed_string": true}, "src/app.py:3:     return 1+1\n(skipped 1 binary file)\n"},
		{"fixed string with brackets", args{"pattern": "(a+b)", "fixed_string": true}, "src/lib/util.py:2: x = (a+b)\n(skipped 1 binary file)\n"},
		{"path glob", args{"pattern": "TODO", "glob": "src/**/*.py"}, "src/lib/util.py:1: TODO = 1\n"},
		{"subdirectory", args{"pattern": "TODO", "path": "src"}, "src/lib/util.py:1: TODO = 1\n"},
		{"one file", args{"pattern": "^func", "path": "main.go"}, "main.go:3: func main() {\n"},
		{"hidden on request", args{"pattern": "hidden", "include_hidden": true}, ".hidden/h.txt:1: TODO hidden\n(skipped 1 binary file)\n"},
		{"hidden skipped", args{"pattern": "hidden"}, "no matches for \"hidden\" in .\n(skipped 1 binary file)\n"},
		{"a binary file named", args{"pattern": "TODO", "path": "bin.dat"}, "no matches for \"TODO\" in bin.dat\n(skipped 1 binary file)\n"},
		{"limit reached exactly", args{"pattern": "TODO", "glob": "*.go", "max_matches": 1, "path": "."},
			"main.go:4: \tTODO()\n"},
		{"truncated with more", args{"pattern": "main", "path": "main.go", "max_matches": 1},
			"main.go:1: package main\n(stopped after 1 match; narrow the search or raise max_matches)\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fx := newFixture(t, searchTree, 0)
			res := fx.mustCall(t, "search_files", tt.args)
			require.Equal(t, tt.want, res.Stdout)
		})
	}
}

func TestSearchFilesReturn(t *testing.T) {
	fx := newFixture(t, searchTree, 0)
	res := fx.mustCall(t, "search_files", args{"pattern": "return"})
	var got struct {
		Matches   []match `json:"matches"`
		Truncated bool    `json:"truncated"`
	}
	require.NoError(t, json.Unmarshal(res.Return, &got))
	want := match{Path: "src/app.py", Line: 3, Text: "    return 1+1"}
	require.Equal(t, []match{want}, got.Matches)
	require.False(t, got.Truncated)
}

func TestSearchFilesLongLine(t *testing.T) {
	long := strings.Repeat("é", 400) + "needle"
	fx := newFixture(t, map[string]string{"long.txt": long + "\n"}, 0)
	res := fx.mustCall(t, "search_files", args{"pattern": "needle"})
	checkOut(t, res.Stdout, "long.txt:1: ", "… [line is 806 bytes, cut]")
	require.LessOrEqual(t, len(res.Stdout), maxLineShown+100, "bytes of output, want the line cut near %d", maxLineShown)
}

func TestSearchFilesErrors(t *testing.T) {
	tests := []struct {
		name  string
		args  args
		class error
		want  []string
	}{
		{"bad regular expression", args{"pattern": "a("}, schemas.CodeInvalidArgs, []string{`bad regular expression "a("`, "missing closing )", "fixed_string"}},
		{"bad glob", args{"pattern": "a", "glob": "[x"}, schemas.CodeInvalidArgs, []string{`bad glob "[x"`}},
		{"empty pattern", args{"pattern": ""}, schemas.CodeInvalidArgs, []string{"pattern"}},
		{"missing path", args{"pattern": "a", "path": "nope"}, tools.ErrNotFound, []string{`search_files "nope"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fx := newFixture(t, searchTree, 0)
			_, err := fx.call(t, "search_files", tt.args)
			checkErr(t, err, tt.class, tt.want...)
		})
	}
}

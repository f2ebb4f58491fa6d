package filesystem

import (
	"encoding/json"
	"syscall"
	"testing"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/tools"
	"github.com/stretchr/testify/require"
)

var findTree = map[string]string{
	"main.go":                "",
	"README.md":              "",
	"src/app.go":             "",
	"src/app_test.go":        "",
	"src/lib/util.go":        "",
	"src/lib/deep/more.go":   "",
	"tests/test_app.py":      "",
	"tests/unit/test_lib.py": "",
	".env":                   "",
	".github/ci.yml":         "",
	"src/.cache/x.go":        "",
}

func TestFindFiles(t *testing.T) {
	tests := []struct {
		name string
		args args
		want string
	}{
		{"name at any depth", args{"pattern": "*.go"},
			"main.go\nsrc/app.go\nsrc/app_test.go\nsrc/lib/deep/more.go\nsrc/lib/util.go\n"},
		{"double star", args{"pattern": "src/**/*.go"},
			"src/app.go\nsrc/app_test.go\nsrc/lib/deep/more.go\nsrc/lib/util.go\n"},
		{"leading double star", args{"pattern": "**/test_*.py"}, "tests/test_app.py\ntests/unit/test_lib.py\n"},
		{"one level", args{"pattern": "src/*.go"}, "src/app.go\nsrc/app_test.go\n"},
		{"double star in the middle", args{"pattern": "src/**/deep/*.go"}, "src/lib/deep/more.go\n"},
		{"directories", args{"pattern": "src/*"}, "src/app.go\nsrc/app_test.go\nsrc/lib/\n"},
		{"under a root", args{"pattern": "*.go", "path": "src/lib"}, "src/lib/deep/more.go\nsrc/lib/util.go\n"},
		{"root-relative pattern under a root", args{"pattern": "deep/*.go", "path": "src/lib"}, "src/lib/deep/more.go\n"},
		{"hidden on request", args{"pattern": "*.go", "path": "src", "include_hidden": true},
			"src/.cache/x.go\nsrc/app.go\nsrc/app_test.go\nsrc/lib/deep/more.go\nsrc/lib/util.go\n"},
		{"pattern naming a dot-file", args{"pattern": ".env"}, ".env\n"},
		{"pattern naming a dot-directory", args{"pattern": ".github/*"}, ".github/ci.yml\n"},
		{"character class", args{"pattern": "[A-Z]*.md"}, "README.md\n"},
		{"no match", args{"pattern": "*.rs"}, "no paths match \"*.rs\" under .\n"},
		{"missing literal prefix", args{"pattern": "nope/**/*.go"}, "no paths match \"nope/**/*.go\" under .\n"},
		{"file as a literal prefix", args{"pattern": "main.go/x/*"}, "no paths match \"main.go/x/*\" under .\n"},
		{"truncated", args{"pattern": "*.go", "max_results": 2},
			"main.go\nsrc/app.go\n(showing the first 2 matches; more exist: narrow the pattern or raise max_results)\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fx := newFixture(t, findTree, 0)
			res := fx.mustCall(t, "find_files", tt.args)
			require.Equal(t, tt.want, res.Stdout)
		})
	}
}

func TestFindFilesReturn(t *testing.T) {
	fx := newFixture(t, findTree, 0)
	res := fx.mustCall(t, "find_files", args{"pattern": "*.py", "max_results": 1})
	var got struct {
		Matches   []string `json:"matches"`
		Truncated bool     `json:"truncated"`
	}
	require.NoError(t, json.Unmarshal(res.Return, &got))
	require.Equal(t, []string{"tests/test_app.py"}, got.Matches)
	require.True(t, got.Truncated)
}

func TestFindFilesErrors(t *testing.T) {
	tests := []struct {
		name  string
		args  args
		class error
		want  []string
	}{
		{"bad pattern", args{"pattern": "[a-"}, schemas.CodeInvalidArgs, []string{`bad pattern "[a-"`}},
		{"empty pattern", args{"pattern": ""}, schemas.CodeInvalidArgs, []string{"bad pattern"}},
		{"missing root", args{"pattern": "*", "path": "nope"}, tools.ErrNotFound, []string{`find_files "nope"`}},
		{"root is a file", args{"pattern": "*", "path": "main.go"}, syscall.ENOTDIR, []string{`"main.go"`}},
		{"max_results zero", args{"pattern": "*", "max_results": 0}, schemas.CodeInvalidArgs, []string{"max_results"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fx := newFixture(t, findTree, 0)
			_, err := fx.call(t, "find_files", tt.args)
			checkErr(t, err, tt.class, tt.want...)
		})
	}
}

func TestGlobMatch(t *testing.T) {
	tests := []struct {
		pattern, path string
		want          bool
	}{
		{"*.go", "a.go", true},
		{"*.go", "x/y/a.go", true},
		{"*.go", "a.golang", false},
		{"a/*.go", "a/b.go", true},
		{"a/*.go", "a/b/c.go", false},
		{"a/**/*.go", "a/b.go", true},
		{"a/**/*.go", "a/b/c/d.go", true},
		{"a/**", "a/b/c", true},
		{"a/**", "b/c", false},
		{"**/b", "b", true},
		{"**/b", "x/y/b", true},
		{"a/**/**/b", "a/b", true},
		{"./a/b", "a/b", true},
		{"/a/b", "a/b", true},
		{"a/?.go", "a/xy.go", false},
	}
	for _, tt := range tests {
		t.Run(tt.pattern+" "+tt.path, func(t *testing.T) {
			g, err := compileGlob(tt.pattern)
			require.NoError(t, err)
			require.Equal(t, tt.want, g.match(tt.path))
		})
	}
}

func TestGlobPrefix(t *testing.T) {
	tests := []struct{ pattern, want string }{
		{"*.go", ""},
		{"src/*.go", "src"},
		{"src/lib/**/*.go", "src/lib"},
		{"src/l?b/*.go", "src"},
		{"**/x", ""},
	}
	for _, tt := range tests {
		t.Run(tt.pattern, func(t *testing.T) {
			g, err := compileGlob(tt.pattern)
			require.NoError(t, err)
			require.Equal(t, tt.want, g.prefix())
		})
	}
}

func TestWalksFollowASymlinkedRoot(t *testing.T) {
	fx := newFixture(t, map[string]string{"real/a.go": "package a\n", "ln": "->real"}, 0)
	tests := []struct {
		tool string
		args args
		want string
	}{
		{"find_files", args{"pattern": "*.go", "path": "ln"}, "ln/a.go\n"},
		{"search_files", args{"pattern": "package", "path": "ln"}, "ln/a.go:1: package a\n"},
		{"list_directory", args{"path": "ln"}, "ln/a.go  (10 bytes)\n"},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			res := fx.mustCall(t, tt.tool, tt.args)
			require.Equal(t, tt.want, res.Stdout)
		})
	}
}

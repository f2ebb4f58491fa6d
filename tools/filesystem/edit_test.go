package filesystem

import (
	"os"
	"syscall"
	"testing"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/tools"
	"github.com/stretchr/testify/require"
)

func TestInsertLines(t *testing.T) {
	tests := []struct {
		name, file, content string
		line                int
		want, wantOut       string
	}{
		{"at the top", "a\nb\nc\n", "X\n", 1, "X\na\nb\nc\n", "inserted 1 line before line 1 of f.txt; the file now has 4 lines"},
		{"in the middle", "a\nb\nc\n", "X\nY\n", 3, "a\nb\nX\nY\nc\n", "inserted 2 lines before line 3"},
		{"at the end", "a\nb\nc\n", "X\n", 4, "a\nb\nc\nX\n", "now has 4 lines"},
		{"newline added", "a\nb\n", "X", 2, "a\nX\nb\n", "inserted 1 line"},
		{"after a last line without newline", "a\nb", "X\n", 3, "a\nb\nX\n", "now has 3 lines"},
		{"into an empty file", "", "X\n", 1, "X\n", "now has 1 line"},
		{"nothing", "a\n", "", 1, "a\n", "inserted 0 lines"},
		{"blank line", "a\nb\n", "\n", 2, "a\n\nb\n", "inserted 1 line"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fx := newFixture(t, map[string]string{"f.txt": tt.file}, 0)
			res := fx.mustCall(t, "insert_lines", args{"path": "f.txt", "line": tt.line, "content": tt.content})
			checkOut(t, res.Stdout, tt.wantOut)
			require.Equal(t, tt.want, readBack(t, fx.path("f.txt")))
		})
	}
}

func TestInsertLinesErrors(t *testing.T) {
	tests := []struct {
		name  string
		args  args
		class error
		want  []string
	}{
		{"past the end", args{"path": "f.txt", "line": 5, "content": "x"}, schemas.CodeInvalidArgs, []string{`insert_lines "f.txt"`, "line 5 is past the end", "has 3 lines", "use line 4"}},
		{"line zero", args{"path": "f.txt", "line": 0, "content": "x"}, schemas.CodeInvalidArgs, []string{"line"}},
		{"missing file", args{"path": "nope.txt", "line": 1, "content": "x"}, tools.ErrNotFound, []string{`"nope.txt"`}},
		{"directory", args{"path": "dir", "line": 1, "content": "x"}, syscall.EISDIR, []string{`"dir"`}},
		{"binary file", args{"path": "bin", "line": 1, "content": "x"}, schemas.CodeInvalidArgs, []string{"binary file"}},
		{"over the limit", args{"path": "big.txt", "line": 1, "content": "x"}, tools.ErrTooLarge, []string{"terminal"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fx := newFixture(t, map[string]string{"f.txt": "a\nb\nc\n", "dir/": "", "bin": "\x00", "big.txt": bigText(20)}, 64)
			_, err := fx.call(t, "insert_lines", tt.args)
			checkErr(t, err, tt.class, tt.want...)
			require.Equal(t, "a\nb\nc\n", readBack(t, fx.path("f.txt")), "f.txt: want it untouched")
		})
	}
}

func TestReplaceInFile(t *testing.T) {
	tests := []struct {
		name          string
		args          args
		want, wantOut string
	}{
		{"unique", args{"old_string": "beta", "new_string": "BETA"}, "alpha\nBETA\nalpha\n", "replaced 1 occurrence in f.txt (line 2)"},
		{"across lines", args{"old_string": "a\nbe", "new_string": "a\n\nbe"}, "alpha\n\nbeta\nalpha\n", "(line 1)"},
		{"all", args{"old_string": "alpha", "new_string": "x", "all": true}, "x\nbeta\nx\n", "replaced 2 occurrences in f.txt (lines 1, 3)"},
		{"delete", args{"old_string": "beta\n", "new_string": ""}, "alpha\nalpha\n", "replaced 1 occurrence"},
		{"all of a unique string", args{"old_string": "beta", "new_string": "b", "all": true}, "alpha\nb\nalpha\n", "replaced 1 occurrence"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fx := newFixture(t, map[string]string{"f.txt": "alpha\nbeta\nalpha\n"}, 0)
			require.NoError(t, os.Chmod(fx.path("f.txt"), 0o640))
			tt.args["path"] = "f.txt"
			res := fx.mustCall(t, "replace_in_file", tt.args)
			checkOut(t, res.Stdout, tt.wantOut)
			require.Equal(t, tt.want, readBack(t, fx.path("f.txt")))
			checkMode(t, fx.path("f.txt"), 0o640)
		})
	}
}

func TestReplaceInFileErrors(t *testing.T) {
	tests := []struct {
		name  string
		args  args
		class error
		want  []string
	}{
		{"not found", args{"path": "f.txt", "old_string": "gamma", "new_string": "x"}, schemas.CodeInvalidArgs, []string{`replace_in_file "f.txt"`, "occurs 0 times, want exactly 1"}},
		{"not unique", args{"path": "f.txt", "old_string": "alpha", "new_string": "x"}, schemas.CodeInvalidArgs, []string{"occurs 2 times (lines 1, 3), want exactly 1", "all: true"}},
		{"empty old_string", args{"path": "f.txt", "old_string": "", "new_string": "x"}, schemas.CodeInvalidArgs, []string{"old_string"}},
		{"no new_string", args{"path": "f.txt", "old_string": "beta"}, schemas.CodeInvalidArgs, []string{"new_string"}},
		{"missing file", args{"path": "nope.txt", "old_string": "a", "new_string": "b"}, tools.ErrNotFound, []string{`"nope.txt"`}},
		{"directory", args{"path": "dir", "old_string": "a", "new_string": "b"}, syscall.EISDIR, []string{`"dir"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fx := newFixture(t, map[string]string{"f.txt": "alpha\nbeta\nalpha\n", "dir/": ""}, 0)
			_, err := fx.call(t, "replace_in_file", tt.args)
			checkErr(t, err, tt.class, tt.want...)
			require.Equal(t, "alpha\nbeta\nalpha\n", readBack(t, fx.path("f.txt")), "f.txt: want it untouched")
		})
	}
}

func TestMatchLines(t *testing.T) {
	tests := []struct {
		name, data, old string
		want            []int
	}{
		{"none", "abc", "x", nil},
		{"first line", "abc\ndef", "b", []int{1}},
		{"several lines", "a\nb\na\n\na", "a", []int{1, 3, 5}},
		{"twice on a line", "aa\na", "a", []int{1, 1, 2}},
		{"non-overlapping", "aaaa", "aa", []int{1, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, matchLines([]byte(tt.data), []byte(tt.old)))
		})
	}
}

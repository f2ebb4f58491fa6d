package filesystem

import (
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/tools"
	"github.com/stretchr/testify/require"
)

func bigText(lines int) string {
	var b strings.Builder
	for i := 1; i <= lines; i++ {
		fmt.Fprintf(&b, "line %02d\n", i) // 8 bytes a line
	}
	return b.String()
}

func TestReadFile(t *testing.T) {
	fx := newFixture(t, map[string]string{
		"a.txt":     "one\ntwo\nthree\n",
		"noeol.txt": "x\ny",
		"empty.txt": "",
		"utf8.txt":  "héllo wörld\n",
		"bin.dat":   "\x00\x01\x02",
		"latin.txt": "caf\xe9\n",
		"big.txt":   bigText(20),
		"dir/":      "",
	}, 64)
	tests := []struct {
		name string
		args args
		want string
	}{
		{"whole file", args{"path": "a.txt"}, "one\ntwo\nthree\n"},
		{"absolute path", args{"path": fx.path("a.txt")}, "one\ntwo\nthree\n"},
		{"dot segments", args{"path": "./dir/../a.txt"}, "one\ntwo\nthree\n"},
		{"line range", args{"path": "a.txt", "start_line": 2, "end_line": 3}, "two\nthree\n"},
		{"start only", args{"path": "a.txt", "start_line": 2}, "two\nthree\n"},
		{"end only", args{"path": "a.txt", "end_line": 1}, "one\n"},
		{"end past the last line", args{"path": "a.txt", "start_line": 3, "end_line": 99}, "three\n"},
		{"line numbers", args{"path": "a.txt", "line_numbers": true}, "     1\tone\n     2\ttwo\n     3\tthree\n"},
		{"line numbers in a range", args{"path": "a.txt", "start_line": 2, "end_line": 2, "line_numbers": true}, "     2\ttwo\n"},
		{"last line without newline", args{"path": "noeol.txt", "start_line": 2}, "y"},
		{"empty file", args{"path": "empty.txt"}, ""},
		{"empty file from line 1", args{"path": "empty.txt", "start_line": 1}, ""},
		{"utf-8 text", args{"path": "utf8.txt"}, "héllo wörld\n"},
		{"binary as base64", args{"path": "bin.dat", "encoding": "base64"}, "AAEC"},
		{"text as base64", args{"path": "noeol.txt", "encoding": "base64"}, "eAp5"},
		{"range of a file over the limit", args{"path": "big.txt", "start_line": 19, "end_line": 20}, "line 19\nline 20\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := fx.mustCall(t, "read_file", tt.args)
			require.Equal(t, tt.want, res.Stdout)
		})
	}
}

func TestReadFileErrors(t *testing.T) {
	fx := newFixture(t, map[string]string{
		"a.txt":     "one\ntwo\nthree\n",
		"bin.dat":   "\x00\x01\x02",
		"latin.txt": "caf\xe9\n",
		"big.txt":   bigText(20),
		"dir/":      "",
	}, 64)
	tests := []struct {
		name  string
		args  args
		class error
		want  []string
	}{
		{"missing file", args{"path": "missing.txt"}, tools.ErrNotFound, []string{`read_file "missing.txt"`, "not found"}},
		{"missing parent", args{"path": "nope/a.txt"}, tools.ErrNotFound, []string{`"nope/a.txt"`}},
		{"directory", args{"path": "dir"}, syscall.EISDIR, []string{`"dir"`, "is a directory", "list_directory"}},
		{"file as a directory", args{"path": "a.txt/x"}, syscall.ENOTDIR, []string{`"a.txt/x"`, "not a directory"}},
		{"binary as text", args{"path": "bin.dat"}, schemas.CodeInvalidArgs, []string{`"bin.dat"`, "binary file", `encoding "base64"`}},
		{"invalid utf-8 as text", args{"path": "latin.txt"}, schemas.CodeInvalidArgs, []string{"binary file"}},
		{"start past the end", args{"path": "a.txt", "start_line": 5}, schemas.CodeInvalidArgs, []string{"start_line 5", "has 3 lines"}},
		{"end before start", args{"path": "a.txt", "start_line": 3, "end_line": 2}, schemas.CodeInvalidArgs, []string{"end_line 2 is before start_line 3"}},
		{"base64 with a range", args{"path": "a.txt", "encoding": "base64", "start_line": 1}, schemas.CodeInvalidArgs, []string{"whole file"}},
		{"unknown encoding", args{"path": "a.txt", "encoding": "hex"}, schemas.CodeInvalidArgs, []string{"encoding"}},
		{"argument of the wrong type", args{"path": "a.txt", "line_numbers": "yes"}, schemas.CodeInvalidArgs, []string{"line_numbers"}},
		{"empty path", args{"path": ""}, schemas.CodeInvalidArgs, []string{"path is empty"}},
		{"no path", args{}, schemas.CodeInvalidArgs, []string{"path"}},
		{"over the limit", args{"path": "big.txt"}, tools.ErrTooLarge, []string{`read_file "big.txt": too large: the file is 160 bytes, over the 64 bytes limit; read a line range with start_line and end_line`}},
		{"range over the limit", args{"path": "big.txt", "start_line": 1, "end_line": 10}, tools.ErrTooLarge, []string{"lines 1 to 9", "fewer lines"}},
		{"base64 over the limit", args{"path": "big.txt", "encoding": "base64"}, tools.ErrTooLarge, []string{"160 bytes"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := fx.call(t, "read_file", tt.args)
			checkErr(t, err, tt.class, tt.want...)
		})
	}
}

func TestIsBinary(t *testing.T) {
	tests := []struct {
		name      string
		head      string
		truncated bool
		want      bool
	}{
		{"ascii", "hello\n", false, false},
		{"utf-8", "naïve ☃\n", false, false},
		{"empty", "", false, false},
		{"nul byte", "ab\x00cd", false, true},
		{"invalid byte", "caf\xe9", false, true},
		{"rune cut by the sample", "ab\xe2\x98", true, false},
		{"rune cut at the real end", "ab\xe2\x98", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, isBinary([]byte(tt.head), tt.truncated))
		})
	}
}

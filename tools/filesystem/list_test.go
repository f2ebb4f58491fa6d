package filesystem

import (
	"encoding/json"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/tools"
	"github.com/stretchr/testify/require"
)

var listFiles = map[string]string{
	"b.txt":        "12345",
	"a/":           "",
	"a/deep/x.go":  "package x\n",
	"a/y.txt":      "",
	".env":         "SECRET=1\n",
	".git/config":  "",
	"ln":           "->b.txt",
	"empty/":       "",
	"z/z.txt":      "zz",
	"a/.hidden.md": "h",
}

func TestListDirectory(t *testing.T) {
	tests := []struct {
		name string
		args args
		want string
	}{
		{"working directory", args{},
			"a/\nb.txt  (5 bytes)\nempty/\nln -> b.txt\nz/\n(2 hidden entries not shown; pass show_hidden: true to see them)\n"},
		{"depth 2", args{"path": ".", "depth": 2},
			"a/\na/deep/\na/y.txt  (0 bytes)\nb.txt  (5 bytes)\nempty/\nln -> b.txt\nz/\nz/z.txt  (2 bytes)\n(3 hidden entries not shown; pass show_hidden: true to see them)\n"},
		{"hidden", args{"path": "a", "show_hidden": true},
			"a/.hidden.md  (1 byte)\na/deep/\na/y.txt  (0 bytes)\n"},
		{"subdirectory", args{"path": "z"}, "z/z.txt  (2 bytes)\n"},
		{"empty directory", args{"path": "empty"}, "(empty is empty)\n"},
		{"trailing slash", args{"path": "a/deep/"}, "a/deep/x.go  (10 bytes)\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fx := newFixture(t, listFiles, 0)
			res := fx.mustCall(t, "list_directory", tt.args)
			require.Equal(t, tt.want, res.Stdout)
		})
	}
}

func TestListDirectoryReturn(t *testing.T) {
	fx := newFixture(t, listFiles, 0)
	res := fx.mustCall(t, "list_directory", args{"path": fx.dir})
	var got struct {
		Path    string  `json:"path"`
		Entries []entry `json:"entries"`
	}
	require.NoError(t, json.Unmarshal(res.Return, &got), "return %s, want JSON", res.Return)
	want := []entry{
		{Path: "a", Type: "directory"},
		{Path: "b.txt", Type: "file", Size: 5},
		{Path: "empty", Type: "directory"},
		{Path: "ln", Type: "symlink", Target: "b.txt"},
		{Path: "z", Type: "directory"},
	}
	require.Equal(t, ".", got.Path)
	require.Len(t, got.Entries, len(want))
	for i := range want {
		require.Equal(t, want[i], got.Entries[i], "entry")
	}
}

func TestListDirectoryTruncates(t *testing.T) {
	files := map[string]string{}
	for i := range maxListEntries + 5 {
		files[time.Duration(i).String()+".txt"] = ""
	}
	fx := newFixture(t, files, 0)
	res := fx.mustCall(t, "list_directory", args{})
	checkOut(t, res.Stdout, "(stopped at 1000 entries; list a subdirectory or lower depth)")
}

func TestListDirectoryErrors(t *testing.T) {
	tests := []struct {
		name  string
		args  args
		class error
		want  []string
	}{
		{"missing", args{"path": "nope"}, tools.ErrNotFound, []string{`list_directory "nope"`}},
		{"a file", args{"path": "b.txt"}, syscall.ENOTDIR, []string{`"b.txt"`, "it is a file", "read_file"}},
		{"depth zero", args{"depth": 0}, schemas.CodeInvalidArgs, []string{"depth"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fx := newFixture(t, listFiles, 0)
			_, err := fx.call(t, "list_directory", tt.args)
			checkErr(t, err, tt.class, tt.want...)
		})
	}
}

func TestStatPath(t *testing.T) {
	tests := []struct {
		name string
		path string
		want []string
	}{
		{"file", "b.txt", []string{"path: b.txt\n", "type: file\n", "size: 5 bytes\n", "mode: -rw-r--r-- (0644)\n", "modified: 20"}},
		{"directory", "a", []string{"type: directory\n", "entries: 3\n", "mode: drwxr-xr-x (0755)"}},
		{"symlink", "ln", []string{"type: symlink\n", "target: b.txt (file)\n"}},
		{"broken symlink", "broken", []string{"type: symlink\n", "target: nowhere (broken)\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fx := newFixture(t, listFiles, 0)
			writeTree(t, fx.dir, map[string]string{"broken": "->nowhere"})
			res := fx.mustCall(t, "stat_path", args{"path": tt.path})
			checkOut(t, res.Stdout, tt.want...)
			var st status
			require.NoError(t, json.Unmarshal(res.Return, &st), "return %s, want JSON", res.Return)
			require.Equal(t, tt.path, st.Path)
		})
	}
}

func TestStatPathModTime(t *testing.T) {
	fx := newFixture(t, listFiles, 0)
	when := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
	require.NoError(t, os.Chtimes(fx.path("b.txt"), when, when))
	res := fx.mustCall(t, "stat_path", args{"path": "b.txt"})
	checkOut(t, res.Stdout, "modified: 2024-05-06T07:08:09Z")
}

func TestStatPathErrors(t *testing.T) {
	fx := newFixture(t, listFiles, 0)
	_, err := fx.call(t, "stat_path", args{"path": "nope/x"})
	checkErr(t, err, tools.ErrNotFound, `stat_path "nope/x"`, "not found")
}

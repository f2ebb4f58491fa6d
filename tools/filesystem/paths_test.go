package filesystem

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRelativePathsFollowDir(t *testing.T) {
	first, second := t.TempDir(), t.TempDir()
	writeTree(t, first, map[string]string{"f.txt": "first"})
	writeTree(t, second, map[string]string{"f.txt": "second", "sub/f.txt": "sub"})
	dir := first
	fx := &fixture{dir: first, tools: toolMap(Config{Dir: func() string { return dir }})}
	tests := []struct {
		name, dir, path, want string
	}{
		{"first directory", first, "f.txt", "first"},
		{"directory changed between calls", second, "f.txt", "second"},
		{"subdirectory", second, "sub/f.txt", "sub"},
		{"parent reference", filepath.Join(second, "sub"), "../f.txt", "second"},
		{"absolute path ignores the directory", second, filepath.Join(first, "f.txt"), "first"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir = tt.dir
			res := fx.mustCall(t, "read_file", args{"path": tt.path})
			require.Equal(t, tt.want, res.Stdout)
		})
	}
}

func TestDirDefaultsToWorkingDirectory(t *testing.T) {
	wd, err := os.Getwd()
	require.NoError(t, err)
	tests := []struct {
		name string
		cfg  Config
	}{
		{"nil Dir", Config{}},
		{"empty Dir", Config{Dir: func() string { return "" }}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fsys{cfg: tt.cfg}
			require.Equal(t, wd, string(f.here()))
		})
	}
}

func TestShow(t *testing.T) {
	d := cwd("/work/app")
	tests := []struct {
		abs, want string
	}{
		{"/work/app", "."},
		{"/work/app/a.txt", "a.txt"},
		{"/work/app/src/main.go", "src/main.go"},
		{"/work/application", "/work/application"},
		{"/work", "/work"},
		{"/etc/passwd", "/etc/passwd"},
		{"/work/app/..x", "..x"},
	}
	for _, tt := range tests {
		t.Run(tt.abs, func(t *testing.T) {
			require.Equal(t, tt.want, d.show(tt.abs))
		})
	}
}

func TestWithin(t *testing.T) {
	tests := []struct {
		p, dir string
		want   bool
	}{
		{"/a/b", "/a", true},
		{"/a", "/a", true},
		{"/ab", "/a", false},
		{"/a", "/a/b", false},
		{"/x", "/", true},
	}
	for _, tt := range tests {
		t.Run(tt.p+" in "+tt.dir, func(t *testing.T) {
			require.Equal(t, tt.want, within(tt.p, tt.dir))
		})
	}
}

package filesystem

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/sandox/sandox/schemas"
	"github.com/stretchr/testify/require"
)

func TestCreateFile(t *testing.T) {
	tests := []struct {
		name    string
		args    args
		file    string // checked after the call
		want    string
		wantOut string
	}{
		{"new file", args{"path": "new.txt", "content": "hi\n"}, "new.txt", "hi\n", "created new.txt (3 bytes)"},
		{"new file with parents", args{"path": "a/b/c.txt", "content": "x"}, "a/b/c.txt", "x", "created a/b/c.txt"},
		{"empty content", args{"path": "e.txt", "content": ""}, "e.txt", "", "created e.txt (0 bytes)"},
		{"overwrite asked", args{"path": "old.txt", "content": "new", "overwrite": true}, "old.txt", "new", "overwrote old.txt"},
		{"overwrite asked of a new file", args{"path": "n.txt", "content": "n", "overwrite": true}, "n.txt", "n", "created n.txt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fx := newFixture(t, map[string]string{"old.txt": "old"}, 0)
			res := fx.mustCall(t, "create_file", tt.args)
			checkOut(t, res.Stdout, tt.wantOut)
			require.Equal(t, tt.want, readBack(t, fx.path(tt.file)), "content")
			checkMode(t, fx.path(tt.file), 0o644)
		})
	}
}

func TestCreateFileErrors(t *testing.T) {
	tests := []struct {
		name  string
		args  args
		class error
		want  []string
	}{
		{"exists", args{"path": "old.txt", "content": "new"}, fs.ErrExist, []string{`create_file "old.txt"`, "exists", "overwrite: true"}},
		{"directory", args{"path": "dir", "content": "x"}, syscall.EISDIR, []string{`"dir"`}},
		{"directory with overwrite", args{"path": "dir", "content": "x", "overwrite": true}, syscall.EISDIR, []string{`"dir"`}},
		{"parent is a file", args{"path": "old.txt/x", "content": "x"}, syscall.ENOTDIR, []string{"not a directory"}},
		{"no content", args{"path": "x.txt"}, schemas.CodeInvalidArgs, []string{"content"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fx := newFixture(t, map[string]string{"old.txt": "old", "dir/": ""}, 0)
			_, err := fx.call(t, "create_file", tt.args)
			checkErr(t, err, tt.class, tt.want...)
			require.Equal(t, "old", readBack(t, fx.path("old.txt")), "old.txt: want it untouched")
		})
	}
}

func TestWriteFile(t *testing.T) {
	tests := []struct {
		name     string
		path     string
		mode     os.FileMode // of the existing file; 0: none
		wantMode os.FileMode
		wantOut  string
	}{
		{"new file", "new.txt", 0, 0o644, "new file"},
		{"new file with parents", "a/b/new.txt", 0, 0o644, "new file"},
		{"keeps a private mode", "f.txt", 0o600, 0o600, "replaced the existing file"},
		{"keeps an executable mode", "run.sh", 0o755, 0o755, "replaced the existing file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fx := newFixture(t, nil, 0)
			if tt.mode != 0 {
				require.NoError(t, os.WriteFile(fx.path(tt.path), []byte("old content that is longer"), tt.mode))
				require.NoError(t, os.Chmod(fx.path(tt.path), tt.mode))
			}
			res := fx.mustCall(t, "write_file", args{"path": tt.path, "content": "new\n"})
			checkOut(t, res.Stdout, "wrote 4 bytes to "+tt.path, tt.wantOut)
			require.Equal(t, "new\n", readBack(t, fx.path(tt.path)))
			checkMode(t, fx.path(tt.path), tt.wantMode)
			checkNoTempFiles(t, filepath.Dir(fx.path(tt.path)))
		})
	}
}

func TestWriteFileThroughSymlink(t *testing.T) {
	fx := newFixture(t, map[string]string{"real.txt": "old", "link.txt": "->real.txt"}, 0)
	fx.mustCall(t, "write_file", args{"path": "link.txt", "content": "new"})
	require.Equal(t, "new", readBack(t, fx.path("real.txt")), "target content")
	info, err := os.Lstat(fx.path("link.txt"))
	require.NoError(t, err)
	require.NotZero(t, info.Mode()&fs.ModeSymlink, "link.txt: want it still a symlink")
}

func TestWriteFileErrors(t *testing.T) {
	tests := []struct {
		name  string
		path  string
		class error
		want  []string
	}{
		{"directory", "dir", syscall.EISDIR, []string{`write_file "dir"`, "is a directory"}},
		{"parent is a file", "f.txt/x", syscall.ENOTDIR, []string{`"f.txt/x"`, "not a directory"}},
		{"empty path", " ", schemas.CodeInvalidArgs, []string{"path is empty"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fx := newFixture(t, map[string]string{"f.txt": "f", "dir/": ""}, 0)
			_, err := fx.call(t, "write_file", args{"path": tt.path, "content": "x"})
			checkErr(t, err, tt.class, tt.want...)
			checkNoTempFiles(t, fx.dir)
		})
	}
}

func TestAppendFile(t *testing.T) {
	tests := []struct {
		name, path, want, wantOut string
	}{
		{"existing file", "log.txt", "a\nb\n", "appended 2 bytes to log.txt; it is now 4 bytes"},
		{"new file", "new.txt", "b\n", "it is now 2 bytes"},
		{"new file with parents", "x/y/new.txt", "b\n", "appended 2 bytes to x/y/new.txt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fx := newFixture(t, map[string]string{"log.txt": "a\n"}, 0)
			res := fx.mustCall(t, "append_file", args{"path": tt.path, "content": "b\n"})
			checkOut(t, res.Stdout, tt.wantOut)
			require.Equal(t, tt.want, readBack(t, fx.path(tt.path)))
		})
	}
}

func TestAppendFileErrors(t *testing.T) {
	fx := newFixture(t, map[string]string{"dir/": ""}, 0)
	_, err := fx.call(t, "append_file", args{"path": "dir", "content": "x"})
	checkErr(t, err, syscall.EISDIR, `append_file "dir"`)
}

func TestAppendFileDiskFull(t *testing.T) {
	// /dev/full fails every write with ENOSPC: a real full disk.
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skipf("no /dev/full on this system: %v", err)
	}
	fx := newFixture(t, nil, 0)
	_, err := fx.call(t, "append_file", args{"path": "/dev/full", "content": "x"})
	checkErr(t, err, syscall.ENOSPC, `append_file "/dev/full"`, "no space left on device")
}

// checkNoTempFiles checks that a write left no temporary file in dir.
func checkNoTempFiles(t *testing.T, dir string) {
	t.Helper()
	des, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, de := range des {
		require.NotContains(t, de.Name(), ".tmp-", "temporary file left in %s", dir)
	}
}

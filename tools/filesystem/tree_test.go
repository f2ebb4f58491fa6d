package filesystem

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/tools"
	"github.com/stretchr/testify/require"
)

// treeFiles is the starting tree of the delete, move and copy tests.
var treeFiles = map[string]string{
	"f.txt":         "file",
	"g.txt":         "other",
	"empty/":        "",
	"full/a.txt":    "a",
	"full/sub/b.sh": "b",
	"full/link":     "->a.txt",
	"link.txt":      "->f.txt",
	"other/x.txt":   "x",
}

func TestDeletePath(t *testing.T) {
	tests := []struct {
		name    string
		args    args
		gone    string
		kept    string // must survive; "" for none
		wantOut string
	}{
		{"file", args{"path": "f.txt"}, "f.txt", "g.txt", "deleted file f.txt"},
		{"empty directory", args{"path": "empty"}, "empty", "", "deleted empty directory empty"},
		{"full directory, recursive", args{"path": "full", "recursive": true}, "full", "f.txt", "deleted directory full and everything in it"},
		{"symlink, not its target", args{"path": "link.txt"}, "link.txt", "f.txt", "deleted symlink link.txt"},
		{"absolute path", args{"path": "ABS/g.txt"}, "g.txt", "f.txt", "deleted file g.txt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fx := newFixture(t, treeFiles, 0)
			if p, ok := tt.args["path"].(string); ok && p == "ABS/g.txt" {
				tt.args["path"] = fx.path("g.txt")
			}
			res := fx.mustCall(t, "delete_path", tt.args)
			checkOut(t, res.Stdout, tt.wantOut)
			checkMissing(t, fx.path(tt.gone))
			if tt.kept != "" {
				readBack(t, fx.path(tt.kept))
			}
		})
	}
}

func TestDeletePathErrors(t *testing.T) {
	tests := []struct {
		name  string
		args  args
		class error
		want  []string
	}{
		{"non-empty directory", args{"path": "full"}, syscall.ENOTEMPTY, []string{`delete_path "full"`, "directory not empty", "3 entries", "recursive: true"}},
		{"missing", args{"path": "nope"}, tools.ErrNotFound, []string{`delete_path "nope"`, "not found"}},
		{"missing, recursive", args{"path": "nope", "recursive": true}, tools.ErrNotFound, []string{`"nope"`}},
		{"root", args{"path": "/", "recursive": true}, schemas.CodeInvalidArgs, []string{"root directory"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fx := newFixture(t, treeFiles, 0)
			_, err := fx.call(t, "delete_path", tt.args)
			checkErr(t, err, tt.class, tt.want...)
			readBack(t, fx.path("full/a.txt"))
		})
	}
}

func TestMakeDirectory(t *testing.T) {
	tests := []struct {
		name, path, wantOut string
	}{
		{"new", "new", "created directory new"},
		{"with parents", "a/b/c", "created directory a/b/c"},
		{"existing", "empty", "directory empty already exists"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fx := newFixture(t, treeFiles, 0)
			res := fx.mustCall(t, "make_directory", args{"path": tt.path})
			checkOut(t, res.Stdout, tt.wantOut)
			require.DirExists(t, fx.path(tt.path))
		})
	}
}

func TestMakeDirectoryErrors(t *testing.T) {
	tests := []struct {
		name, path string
		want       []string
	}{
		{"file in the way", "f.txt", []string{`make_directory "f.txt"`, "a file is in the way"}},
		{"file as a parent", "f.txt/sub", []string{`make_directory "f.txt/sub": at "f.txt": not a directory`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fx := newFixture(t, treeFiles, 0)
			_, err := fx.call(t, "make_directory", args{"path": tt.path})
			checkErr(t, err, syscall.ENOTDIR, tt.want...)
		})
	}
}

func TestMovePath(t *testing.T) {
	tests := []struct {
		name       string
		args       args
		gone, dest string
		want       string // content of dest, or of dest/a.txt for a directory
		wantOut    string
	}{
		{"rename a file", args{"source": "f.txt", "destination": "h.txt"}, "f.txt", "h.txt", "file", "moved file f.txt to h.txt"},
		{"into a new directory", args{"source": "f.txt", "destination": "new/dir/f.txt"}, "f.txt", "new/dir/f.txt", "file", "to new/dir/f.txt"},
		{"into a directory with /", args{"source": "f.txt", "destination": "other/"}, "f.txt", "other/f.txt", "file", "to other/f.txt"},
		{"over a file", args{"source": "f.txt", "destination": "g.txt", "overwrite": true}, "f.txt", "g.txt", "file", "moved file"},
		{"a directory", args{"source": "full", "destination": "moved"}, "full", "moved", "a", "moved directory full to moved"},
		{"a directory over a directory", args{"source": "full", "destination": "other", "overwrite": true}, "full", "other", "a", "moved directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fx := newFixture(t, treeFiles, 0)
			res := fx.mustCall(t, "move_path", tt.args)
			checkOut(t, res.Stdout, tt.wantOut)
			checkMissing(t, fx.path(tt.gone))
			dest := fx.path(tt.dest)
			if info, err := os.Stat(dest); err == nil && info.IsDir() {
				checkMissing(t, fx.path(tt.dest+"/x.txt")) // a replaced directory is gone whole
				dest += "/a.txt"
			}
			require.Equal(t, tt.want, readBack(t, dest))
		})
	}
}

func TestMovePathErrors(t *testing.T) {
	tests := []struct {
		name  string
		args  args
		class error
		want  []string
	}{
		{"destination exists", args{"source": "f.txt", "destination": "g.txt"}, fs.ErrExist, []string{`move_path "g.txt"`, "overwrite: true"}},
		{"file onto a directory", args{"source": "f.txt", "destination": "other", "overwrite": true}, syscall.EISDIR, []string{`"other"`, `end destination with "/"`}},
		{"directory onto a file", args{"source": "full", "destination": "f.txt", "overwrite": true}, syscall.ENOTDIR, []string{`"f.txt"`, "a file is in the way"}},
		{"directory into itself", args{"source": "full", "destination": "full/sub/full"}, schemas.CodeInvalidArgs, []string{"inside the source"}},
		{"onto its own parent", args{"source": "full/a.txt", "destination": "full", "overwrite": true}, schemas.CodeInvalidArgs, []string{"holds the source"}},
		{"same path", args{"source": "f.txt", "destination": "./f.txt"}, schemas.CodeInvalidArgs, []string{"the same"}},
		{"missing source", args{"source": "nope", "destination": "x"}, tools.ErrNotFound, []string{`move_path "nope"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fx := newFixture(t, treeFiles, 0)
			_, err := fx.call(t, "move_path", tt.args)
			checkErr(t, err, tt.class, tt.want...)
			readBack(t, fx.path("f.txt"))
			readBack(t, fx.path("full/a.txt"))
		})
	}
}

func TestCopyPath(t *testing.T) {
	fx := newFixture(t, treeFiles, 0)
	require.NoError(t, os.Chmod(fx.path("full/sub/b.sh"), 0o750))
	require.NoError(t, os.Chmod(fx.path("full/sub"), 0o555)) // read-only: the copy must still fill it
	t.Cleanup(func() { os.Chmod(fx.path("full/sub"), 0o755) })

	res := fx.mustCall(t, "copy_path", args{"source": "full", "destination": "copy"})
	checkOut(t, res.Stdout, "copied directory full to copy (2 files, 2 directories, 1 symlink)")
	t.Cleanup(func() { os.Chmod(fx.path("copy/sub"), 0o755) })
	tests := []struct {
		name, path, want string
		mode             os.FileMode
	}{
		{"file", "copy/a.txt", "a", 0o644},
		{"executable keeps its mode", "copy/sub/b.sh", "b", 0o750},
		{"symlink stays a link", "copy/link", "a", 0},
		{"read-only directory keeps its mode", "copy/sub", "", 0o555},
		{"source untouched", "full/a.txt", "a", 0o644},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			info, err := os.Lstat(fx.path(tt.path))
			require.NoError(t, err)
			switch {
			case info.Mode()&fs.ModeSymlink != 0:
				target, _ := os.Readlink(fx.path(tt.path))
				require.Equal(t, "a.txt", target, "link target")
			case !info.IsDir():
				require.Equal(t, tt.want, readBack(t, fx.path(tt.path)))
			}
			if tt.mode != 0 {
				checkMode(t, fx.path(tt.path), tt.mode)
			}
		})
	}
}

func TestCopyPathFile(t *testing.T) {
	tests := []struct {
		name       string
		args       args
		dest, want string
		wantOut    string
	}{
		{"new file", args{"source": "f.txt", "destination": "c.txt"}, "c.txt", "file", "copied file f.txt to c.txt (4 bytes)"},
		{"into a directory with /", args{"source": "f.txt", "destination": "other/"}, "other/f.txt", "file", "to other/f.txt"},
		{"over a file", args{"source": "f.txt", "destination": "g.txt", "overwrite": true}, "g.txt", "file", "copied file"},
		{"a symlink copies its target", args{"source": "link.txt", "destination": "c.txt"}, "c.txt", "file", "copied file f.txt to c.txt"},
		{"a directory over a directory", args{"source": "full", "destination": "other", "overwrite": true}, "other/a.txt", "a", "copied directory full to other"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fx := newFixture(t, treeFiles, 0)
			res := fx.mustCall(t, "copy_path", tt.args)
			checkOut(t, res.Stdout, tt.wantOut)
			require.Equal(t, tt.want, readBack(t, fx.path(tt.dest)))
			readBack(t, fx.path("f.txt"))
			if tt.args["overwrite"] == true && tt.dest == "other/a.txt" {
				checkMissing(t, fx.path("other/x.txt"))
			}
		})
	}
}

func TestCopyPathErrors(t *testing.T) {
	tests := []struct {
		name  string
		args  args
		class error
		want  []string
	}{
		{"destination exists", args{"source": "f.txt", "destination": "g.txt"}, fs.ErrExist, []string{`copy_path "g.txt"`, "overwrite: true"}},
		{"directory destination exists", args{"source": "full", "destination": "other"}, fs.ErrExist, []string{`"other"`}},
		{"directory into itself", args{"source": "full", "destination": "full/copy"}, schemas.CodeInvalidArgs, []string{"inside the source"}},
		{"missing source", args{"source": "nope", "destination": "x"}, tools.ErrNotFound, []string{`copy_path "nope"`}},
		{"no destination", args{"source": "f.txt"}, schemas.CodeInvalidArgs, []string{"destination"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fx := newFixture(t, treeFiles, 0)
			_, err := fx.call(t, "copy_path", tt.args)
			checkErr(t, err, tt.class, tt.want...)
			require.Equal(t, "other", readBack(t, fx.path("g.txt")), "g.txt: want it untouched")
		})
	}
}

func TestMovePathAcrossFilesystems(t *testing.T) {
	fx := newFixture(t, treeFiles, 0)
	other, err := os.MkdirTemp("/dev/shm", "sandox-fs-test-")
	if err != nil {
		t.Skipf("no second filesystem at /dev/shm: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(other) })
	probe := fx.path("probe")
	writeTree(t, fx.dir, map[string]string{"probe": ""})
	if err := os.Rename(probe, filepath.Join(other, "probe")); !errors.Is(err, syscall.EXDEV) {
		t.Skipf("/dev/shm is on the same filesystem as %s (rename: %v)", fx.dir, err)
	}
	dest := filepath.Join(other, "moved")
	res := fx.mustCall(t, "move_path", args{"source": "full", "destination": dest})
	checkOut(t, res.Stdout, "moved directory full to "+dest)
	checkMissing(t, fx.path("full"))
	require.Equal(t, "b", readBack(t, filepath.Join(dest, "sub/b.sh")))
	target, err := os.Readlink(filepath.Join(dest, "link"))
	require.NoError(t, err)
	require.Equal(t, "a.txt", target, "link target")
}

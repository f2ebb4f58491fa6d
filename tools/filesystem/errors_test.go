package filesystem

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
	"testing"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/tools"
	"github.com/stretchr/testify/require"
)

func TestFail(t *testing.T) {
	d := cwd("/work")
	tests := []struct {
		name  string
		err   error
		class error
		code  schemas.ErrorCode // checked when set
		want  string
	}{
		{"not found", &fs.PathError{Op: "open", Path: "/work/a.txt", Err: syscall.ENOENT},
			tools.ErrNotFound, "", `read_file "a.txt": not found`},
		{"permission denied", &fs.PathError{Op: "open", Path: "/work/a.txt", Err: syscall.EACCES},
			schemas.CodeAccessDenied, schemas.CodeAccessDenied, `read_file "a.txt": access denied: permission denied`},
		{"operation not permitted", &fs.PathError{Op: "chmod", Path: "/work/a.txt", Err: syscall.EPERM},
			schemas.CodeAccessDenied, schemas.CodeAccessDenied, `read_file "a.txt": access denied: operation not permitted`},
		{"read-only file system", &fs.PathError{Op: "open", Path: "/work/a.txt", Err: syscall.EROFS},
			schemas.CodeAccessDenied, schemas.CodeAccessDenied, `read_file "a.txt": access denied: read-only file system`},
		{"disk full", &fs.PathError{Op: "write", Path: "/work/a.txt", Err: syscall.ENOSPC},
			syscall.ENOSPC, "", `read_file "a.txt": no space left on device (the disk is full)`},
		{"quota", &fs.PathError{Op: "write", Path: "/work/a.txt", Err: syscall.EDQUOT},
			syscall.EDQUOT, "", `read_file "a.txt": disk quota exceeded (the disk is full)`},
		{"is a directory", &fs.PathError{Op: "read", Path: "/work/a.txt", Err: syscall.EISDIR},
			syscall.EISDIR, "", `read_file "a.txt": is a directory`},
		{"name too long", &fs.PathError{Op: "open", Path: "/work/a.txt", Err: syscall.ENAMETOOLONG},
			schemas.CodeInvalidArgs, schemas.CodeInvalidArgs, `read_file "a.txt": invalid arguments: file name too long`},
		{"on a parent", &fs.PathError{Op: "mkdir", Path: "/work/a", Err: syscall.ENOTDIR},
			syscall.ENOTDIR, "", `read_file "a.txt": at "a": not a directory`},
		{"outside the working directory", &fs.PathError{Op: "open", Path: "/etc/x", Err: syscall.ENOENT},
			tools.ErrNotFound, "", `read_file "a.txt": at "/etc/x": not found`},
		{"rename", &os.LinkError{Op: "rename", Old: "/work/b", New: "/work/a.txt", Err: syscall.EXDEV},
			syscall.EXDEV, "", `read_file "a.txt": invalid cross-device link`},
		{"plain", errors.New("boom"), nil, "", `read_file "a.txt": boom`},
		{"already classified", d.isDirErr("write_file", "/work/x"), syscall.EISDIR, "", `write_file "x": is a directory; use list_directory to see what it holds`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := d.fail("read_file", "/work/a.txt", tt.err)
			require.EqualError(t, err, tt.want)
			if tt.class != nil {
				require.ErrorIs(t, err, tt.class)
			}
			if tt.code != "" {
				require.Equal(t, tt.code, tools.ErrorCode(err), "error code")
			}
		})
	}
	require.NoError(t, d.fail("read_file", "/work/a.txt", nil), "want nil for no error")
}

func TestPermissionDenied(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("running as root, which reads any file whatever its mode; TestFail covers the classification of EACCES")
	}
	fx := newFixture(t, map[string]string{"secret.txt": "s"}, 0)
	require.NoError(t, os.Chmod(fx.path("secret.txt"), 0))
	_, err := fx.call(t, "read_file", args{"path": "secret.txt"})
	checkErr(t, err, schemas.CodeAccessDenied, `read_file "secret.txt"`, "permission denied")
}

func TestByteSize(t *testing.T) {
	tests := []struct {
		n    int64
		want string
	}{
		{0, "0 bytes"},
		{1, "1 byte"},
		{1023, "1023 bytes"},
		{1536, "1536 bytes (1.5 KiB)"},
		{10 << 20, "10485760 bytes (10.0 MiB)"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			require.Equal(t, tt.want, byteSize(tt.n))
		})
	}
}

func TestPlural(t *testing.T) {
	tests := []struct {
		n          int
		noun, want string
	}{
		{1, "line", "1 line"},
		{0, "line", "0 lines"},
		{2, "entry", "2 entries"},
		{3, "match", "3 matches"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			require.Equal(t, tt.want, plural(tt.n, tt.noun))
		})
	}
}

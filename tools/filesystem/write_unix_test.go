//go:build unix

package filesystem

import (
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestWriteFileKeepsOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("changing a file's owner needs root; the tool keeps owners only when it can")
	}
	const uid, gid = 4242, 4343
	tests := []struct {
		name string
		tool string
		args args
	}{
		{"write_file", "write_file", args{"path": "f.txt", "content": "new\n"}},
		{"replace_in_file", "replace_in_file", args{"path": "f.txt", "old_string": "old", "new_string": "new"}},
		{"insert_lines", "insert_lines", args{"path": "f.txt", "line": 1, "content": "top"}},
		{"upload_file", "upload_file", args{"path": "f.txt", "content_base64": "eA=="}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fx := newFixture(t, map[string]string{"f.txt": "old\n"}, 0)
			require.NoError(t, os.Chown(fx.path("f.txt"), uid, gid))
			fx.mustCall(t, tt.tool, tt.args)
			info, err := os.Stat(fx.path("f.txt"))
			require.NoError(t, err)
			st := info.Sys().(*syscall.Stat_t)
			require.Equal(t, uint32(uid), st.Uid, "owner uid")
			require.Equal(t, uint32(gid), st.Gid, "owner gid")
		})
	}
}

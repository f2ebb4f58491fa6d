package integration

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/sdk"
	"github.com/stretchr/testify/assert"
)

// TestFilesystemTools calls every filesystem tool in a real sandbox
// container, with its success path and its error paths.
func TestFilesystemTools(t *testing.T) {
	group := newGroup(t, sdk.GroupConfig{ID: "it-fs", ComputeResources: schemas.ComputeResources{Memory: "256MiB"}})
	sb := startSandbox(t, group, "it-fs-1", sdk.SandboxOptions{})

	obs := send(t, sb, `[
		{"tool": "filesystem_tools.make_directory", "args": {"path": "d/e"}},
		{"tool": "filesystem_tools.create_file", "args": {"path": "d/a.txt", "content": "alpha\nbeta\ngamma\n"}},
		{"tool": "filesystem_tools.append_file", "args": {"path": "d/a.txt", "content": "delta\n"}},
		{"tool": "filesystem_tools.insert_lines", "args": {"path": "d/a.txt", "line": 2, "content": "inserted\n"}},
		{"tool": "filesystem_tools.replace_in_file", "args": {"path": "d/a.txt", "old_string": "gamma", "new_string": "GAMMA"}},
		{"tool": "filesystem_tools.read_file", "args": {"path": "d/a.txt", "start_line": 2, "end_line": 4}},
		{"tool": "filesystem_tools.write_file", "args": {"path": "d/e/b.py", "content": "print('beta')\n"}},
		{"tool": "filesystem_tools.copy_path", "args": {"source": "d", "destination": "d2"}},
		{"tool": "filesystem_tools.move_path", "args": {"source": "d2/a.txt", "destination": "d2/moved.txt"}},
		{"tool": "filesystem_tools.list_directory", "args": {"path": ".", "depth": 3}},
		{"tool": "filesystem_tools.stat_path", "args": {"path": "d2/moved.txt"}},
		{"tool": "filesystem_tools.find_files", "args": {"pattern": "**/*.py"}},
		{"tool": "filesystem_tools.search_files", "args": {"pattern": "beta", "path": "d"}},
		{"tool": "filesystem_tools.download_file", "args": {"path": "d/e/b.py"}},
		{"tool": "filesystem_tools.upload_file", "args": {"path": "bin/blob", "content_base64": "AAEC/w=="}},
		{"tool": "filesystem_tools.read_file", "args": {"path": "bin/blob", "encoding": "base64"}},
		{"tool": "filesystem_tools.delete_path", "args": {"path": "d2", "recursive": true}}
	]`)
	for _, o := range obs {
		mustOK(t, o)
	}
	checks := []struct {
		i    int
		want string
	}{
		{5, "inserted"},
		{5, "GAMMA"},
		{9, "d2/"},
		{10, "moved.txt"},
		{11, "b.py"},
		{12, "a.txt:"},
		{13, base64.StdEncoding.EncodeToString([]byte("print('beta')\n"))},
		{15, "AAEC/w=="},
	}
	for _, c := range checks {
		assert.Contains(t, obs[c.i].Stdout, c.want, obs[c.i].Tool)
	}

	errs := send(t, sb, `[
		{"tool": "filesystem_tools.read_file", "args": {"path": "nope.txt"}},
		{"tool": "filesystem_tools.read_file", "args": {"path": "d"}},
		{"tool": "filesystem_tools.create_file", "args": {"path": "d/a.txt", "content": "again"}},
		{"tool": "filesystem_tools.replace_in_file", "args": {"path": "d/a.txt", "old_string": "a", "new_string": "b"}},
		{"tool": "filesystem_tools.replace_in_file", "args": {"path": "d/a.txt", "old_string": "zzz", "new_string": "b"}},
		{"tool": "filesystem_tools.delete_path", "args": {"path": "d"}},
		{"tool": "filesystem_tools.move_path", "args": {"source": "missing", "destination": "x"}},
		{"tool": "filesystem_tools.write_file", "args": {"path": "/etc/passwd", "content": "no"}},
		{"tool": "filesystem_tools.write_file", "args": {"path": "/opt/sandox/tools/x.py", "content": "no"}},
		{"tool": "filesystem_tools.list_directory", "args": {"path": "nope"}},
		{"tool": "filesystem_tools.read_file", "args": {}}
	]`)
	wantErr := []struct {
		code schemas.ErrorCode
		text string
	}{
		{schemas.CodeToolError, "not found"},
		{schemas.CodeToolError, "is a directory"},
		{schemas.CodeToolError, "exists"},
		{schemas.CodeInvalidArgs, "occurs 4 times"},
		{schemas.CodeInvalidArgs, "occurs 0 times"},
		{schemas.CodeToolError, "not empty"},
		{schemas.CodeToolError, "not found"},
		{schemas.CodeAccessDenied, "read-only file system"},
		{schemas.CodeAccessDenied, "/opt/sandox/tools/x.py"},
		{schemas.CodeToolError, "not found"},
		{schemas.CodeInvalidArgs, "path"},
	}
	for i, w := range wantErr {
		e := errs[i].Error
		if !assert.NotNil(t, e, "error case %d (%s)", i, errs[i].Tool) {
			continue
		}
		assert.Equal(t, w.code, e.Code, "error case %d (%s)", i, errs[i].Tool)
		assert.Contains(t, strings.ToLower(e.Message), strings.ToLower(w.text), "error case %d (%s)", i, errs[i].Tool)
	}
}

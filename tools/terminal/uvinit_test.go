package terminal

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestUVInitMakesAnApp checks the flow docs/tools/terminal.md shows:
// uv_init, then uv_run main.py in the new project, offline.
func TestUVInitMakesAnApp(t *testing.T) {
	if _, err := exec.LookPath("uv"); err != nil {
		t.Skip("uv is not on PATH (install it with: pip install uv); integration TestDocExamples runs this with the sandbox's uv")
	}
	work := t.TempDir()
	m := newTestManager(t, Config{
		Dir: work,
		Env: []string{"UV_CACHE_DIR=" + t.TempDir(), "UV_NO_CONFIG=1", "UV_OFFLINE=1"},
	})
	res := mustCall(t, m, "uv_init", map[string]any{"path": "proj", "timeout_seconds": waitLong.Seconds()})
	require.NotNil(t, res.ExitCode, "uv_init still running: %q", res.Stdout)
	require.Equal(t, 0, *res.ExitCode, "uv_init: %q", res.Stdout)
	_, err := os.Stat(filepath.Join(work, "proj", "main.py"))
	require.NoError(t, err, "uv_init must make a flat project with main.py")
	assert.NoDirExists(t, filepath.Join(work, "proj", "src"))

	res = mustCall(t, m, "uv_run", map[string]any{"command": "main.py", "args": []string{"--port", "8000"}, "path": "proj", "timeout_seconds": waitLong.Seconds()})
	require.NotNil(t, res.ExitCode, "uv_run still running: %q", res.Stdout)
	assert.Equal(t, 0, *res.ExitCode, "uv_run: %q", res.Stdout)
	assert.Contains(t, res.Stdout, "Hello from proj!")
}

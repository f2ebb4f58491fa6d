package terminal

import (
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/sandox/sandox/tools"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// waitLong is how long tests wait for something that should happen soon,
// generous for a loaded two-core machine.
const waitLong = 60 * time.Second

// newTestManager starts a manager in a temporary directory and closes it
// when the test ends.
func newTestManager(t *testing.T, cfg Config) *Manager {
	t.Helper()
	if cfg.Dir == "" {
		cfg.Dir = t.TempDir()
	}
	m := NewManager(cfg)
	t.Cleanup(func() {
		assert.NoError(t, m.Close(), "close")
	})
	return m
}

// call calls tool name of m with args, as the executor would.
func call(t *testing.T, m *Manager, name string, args any) (tools.Result, error) {
	t.Helper()
	raw, err := json.Marshal(args)
	require.NoError(t, err)
	for _, tool := range m.Tools() {
		if tool.Name == name {
			return tool.Call(t.Context(), raw)
		}
	}
	t.Fatalf("no tool %q", name)
	return tools.Result{}, nil
}

// mustCall is call that fails the test on an error.
func mustCall(t *testing.T, m *Manager, name string, args any) tools.Result {
	t.Helper()
	res, err := call(t, m, name, args)
	require.NoError(t, err, "%s %v", name, args)
	return res
}

// run runs command in session and requires it to finish with status 0.
func run(t *testing.T, m *Manager, session, command string) string {
	t.Helper()
	args := map[string]any{"command": command, "timeout_seconds": waitLong.Seconds()}
	if session != "" {
		args["session"] = session
	}
	res := mustCall(t, m, "run", args)
	requireExit(t, res, 0)
	return res.Stdout
}

// requireExit stops the test unless res finished with exit code want.
func requireExit(t *testing.T, res tools.Result, want int) {
	t.Helper()
	require.False(t, res.StillRunning, "still running, want exit %d; stdout %q, stderr %q", want, res.Stdout, res.Stderr)
	require.NotNil(t, res.ExitCode, "no exit code, want %d; stdout %q, stderr %q", want, res.Stdout, res.Stderr)
	require.Equal(t, want, *res.ExitCode, "exit code; stdout %q, stderr %q", res.Stdout, res.Stderr)
}

// exitCode shows a result's exit code for failure messages.
func exitCode(res tools.Result) string {
	if res.ExitCode == nil {
		return "none"
	}
	return strconv.Itoa(*res.ExitCode)
}

package terminal

import (
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/sandox/sandox/tools"
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
		if err := m.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return m
}

// call calls tool name of m with args, as the executor would.
func call(t *testing.T, m *Manager, name string, args any) (tools.Result, error) {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
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
	if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
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
	if res.StillRunning || res.ExitCode == nil || *res.ExitCode != 0 {
		t.Fatalf("run %q: got still running %v, exit %v, stdout %q, stderr %q; want exit 0", command, res.StillRunning, exitCode(res), res.Stdout, res.Stderr)
	}
	return res.Stdout
}

// exitCode shows a result's exit code for failure messages.
func exitCode(res tools.Result) string {
	if res.ExitCode == nil {
		return "none"
	}
	return strconv.Itoa(*res.ExitCode)
}

// waitUntil polls cond until it is true or waitLong passed.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitLong)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up after %s waiting for %s", waitLong, what)
		}
		time.Sleep(20 * time.Millisecond) // the poll interval, not a wait for the condition
	}
}

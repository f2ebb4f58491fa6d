package terminal

import "testing"

func TestScratch(t *testing.T) {
	m := newTestManager(t, Config{})
	show := func(tool string, args map[string]any) {
		res, err := call(t, m, tool, args)
		t.Logf("%s %v -> %q | %q still=%v exit=%s err=%v", tool, args, res.Stdout, res.Stderr, res.StillRunning, exitCode(res), err)
	}
	show("run", map[string]any{"command": "sleep 30", "timeout_seconds": 0.3})
	show("send_keys", map[string]any{"keys": []string{"Ctrl-Z"}})
	show("run", map[string]any{"command": "jobs; kill %1; sleep 0.2; jobs"})
	show("run", map[string]any{"command": "python3 -q", "timeout_seconds": 0.5})
	show("send_input", map[string]any{"text": "print(6*7)", "enter": true, "wait_seconds": 3})
	show("send_keys", map[string]any{"keys": []string{"Ctrl-D"}})
	show("run", map[string]any{"command": "git --version; ls --color=always / | head -3"})
	show("run", map[string]any{"command": "sleep 0.3 & wait; echo done"})
	show("run", map[string]any{"command": "set -e; false"})
	show("run", map[string]any{"command": "echo again; echo $TERM $PAGER"})
	show("list_sessions", map[string]any{})
}

package terminal

import (
	"encoding/json"
	"testing"
)

func TestScratch(t *testing.T) {
	m := newTestManager(t, Config{MaxOutput: 300})
	show := func(tool string, args map[string]any) {
		res, err := call(t, m, tool, args)
		t.Logf("%s %v -> %q | %q still=%v exit=%s err=%v ret=%s", tool, args, res.Stdout, res.Stderr, res.StillRunning, exitCode(res), err, res.Return)
	}
	show("run", map[string]any{"command": "for i in 1 2 3; do echo tick $i; sleep 1; done", "timeout_seconds": 1.5})
	show("wait", map[string]any{"timeout_seconds": 10})
	show("run", map[string]any{"command": "seq 1 1000"})
	show("run", map[string]any{"command": "sleep 5", "timeout_seconds": 0.1, "session": "build"})
	show("list_sessions", map[string]any{})
	show("change_directory", map[string]any{"path": "/nope"})
	for _, tl := range m.Tools()[:2] {
		b, _ := json.Marshal(tl.Describe())
		t.Logf("%s", b)
	}
}

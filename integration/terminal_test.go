package integration

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/sdk"
)

// TestTerminalTools runs the terminal tools in a real sandbox container.
func TestTerminalTools(t *testing.T) {
	group := newGroup(t, sdk.GroupConfig{ID: "it-term", ComputeResources: schemas.ComputeResources{CPU: "1", Memory: "512MiB"}})
	sb := startSandbox(t, group, "it-term-1", sdk.SandboxOptions{})

	t.Run("cwd, variables and functions persist across actions", func(t *testing.T) {
		obs := send(t, sb, `[
			{"tool": "terminal_tools.run", "args": {"command": "mkdir -p proj/sub && export GREETING=hi && shout() { echo \"$1\" | tr a-z A-Z; }"}},
			{"tool": "terminal_tools.change_directory", "args": {"path": "proj/sub"}},
			{"tool": "terminal_tools.run", "args": {"command": "pwd; echo $GREETING; shout quiet"}},
			{"tool": "filesystem_tools.write_file", "args": {"path": "here.txt", "content": "relative to the shell's cwd"}},
			{"tool": "terminal_tools.run", "args": {"command": "cat /workspace/proj/sub/here.txt"}}
		]`)
		for _, o := range obs {
			mustOK(t, o)
		}
		if got := obs[2].Stdout; !strings.Contains(got, "/workspace/proj/sub") || !strings.Contains(got, "hi") || !strings.Contains(got, "QUIET") {
			t.Fatalf("got %q, want the cwd, the variable and the function to persist", got)
		}
		if !strings.Contains(obs[4].Stdout, "relative to the shell's cwd") {
			t.Fatalf("got %q, want the file written relative to the shell's cwd", obs[4].Stdout)
		}
		obs = send(t, sb, `{"terminal_tools.change_directory": {"args": {"path": "/workspace"}}, "terminal_tools.run": {"args": {"command": "exit_code_test() { return 3; }; exit_code_test"}}}`)
		if e := obs[1].ExitCode; e == nil || *e != 3 {
			t.Fatalf("got exit code %v, want 3", e)
		}
	})

	t.Run("a long command returns still running, then its output and exit code", func(t *testing.T) {
		obs := send(t, sb, `{"terminal_tools.run": {"args": {"command": "for i in $(seq 1 30); do echo tick $i; sleep 1; done; exit 7", "timeout_seconds": 2}}}`)
		if !obs[0].TerminalStillRunning || obs[0].ExitCode != nil || !strings.Contains(obs[0].Stdout, "tick 1") {
			t.Fatalf("got %+v, want terminal_still_running with the first ticks", obs[0])
		}
		obs = send(t, sb, `{"terminal_tools.read_output": {"args": {"wait_seconds": 2}}}`)
		mustOK(t, obs[0])
		if !obs[0].TerminalStillRunning || !strings.Contains(obs[0].Stdout, "tick") || strings.Contains(obs[0].Stdout, "tick 1\n") {
			t.Fatalf("got %+v, want only new ticks while it still runs", obs[0])
		}
		busy := send(t, sb, `{"terminal_tools.run": {"args": {"command": "echo no"}}}`)
		if busy[0].Error == nil {
			t.Fatalf("got %+v, want run refused while a command runs", busy[0])
		}
		obs = send(t, sb, `{"terminal_tools.wait": {"args": {"timeout_seconds": 60}}}`)
		mustOK(t, obs[0])
		if obs[0].TerminalStillRunning || obs[0].ExitCode == nil || *obs[0].ExitCode != 7 || !strings.Contains(obs[0].Stdout, "tick 30") {
			t.Fatalf("got %+v, want the last ticks and exit code 7", obs[0])
		}
	})

	t.Run("Ctrl-C stops a running program", func(t *testing.T) {
		obs := send(t, sb, `[
			{"tool": "terminal_tools.run", "args": {"command": "sleep 300", "timeout_seconds": 1}},
			{"tool": "terminal_tools.send_keys", "args": {"keys": ["Ctrl-C"], "wait_seconds": 5}},
			{"tool": "terminal_tools.run", "args": {"command": "echo back"}}
		]`)
		if !obs[0].TerminalStillRunning {
			t.Fatalf("got %+v, want sleep still running", obs[0])
		}
		mustOK(t, obs[1])
		mustOK(t, obs[2])
		if !strings.Contains(obs[2].Stdout, "back") {
			t.Fatalf("got %q, want the session usable after Ctrl-C", obs[2].Stdout)
		}
	})

	t.Run("interactive input to a program that prompts", func(t *testing.T) {
		obs := send(t, sb, `[
			{"tool": "terminal_tools.run", "args": {"command": "read -p 'name? ' n; echo hello $n", "timeout_seconds": 1}},
			{"tool": "terminal_tools.send_input", "args": {"text": "Ada", "enter": true, "wait_seconds": 5}}
		]`)
		if !obs[0].TerminalStillRunning || !strings.Contains(obs[0].Stdout, "name?") {
			t.Fatalf("got %+v, want the prompt while it waits", obs[0])
		}
		mustOK(t, obs[1])
		if !strings.Contains(obs[1].Stdout, "hello Ada") {
			t.Fatalf("got %q, want the answer", obs[1].Stdout)
		}
	})

	t.Run("a background server survives and answers later", func(t *testing.T) {
		obs := send(t, sb, `[
			{"tool": "terminal_tools.run", "args": {"command": "mkdir -p site && echo served > site/index.html && (cd site && python3 -m http.server 8765 --bind 127.0.0.1 >/tmp/http.log 2>&1 &)"}},
			{"tool": "terminal_tools.run", "args": {"command": "for i in $(seq 50); do python3 -c 'import urllib.request;print(urllib.request.urlopen(\"http://127.0.0.1:8765/\").read().decode())' 2>/dev/null && break; sleep 0.2; done"}},
			{"tool": "terminal_tools.run", "args": {"command": "echo the shell is free"}}
		]`)
		for _, o := range obs {
			mustOK(t, o)
		}
		if !strings.Contains(obs[1].Stdout, "served") || !strings.Contains(obs[2].Stdout, "the shell is free") {
			t.Fatalf("got %q / %q, want the server's page and a free shell", obs[1].Stdout, obs[2].Stdout)
		}
	})

	t.Run("named sessions are independent", func(t *testing.T) {
		obs := send(t, sb, `[
			{"tool": "terminal_tools.run", "args": {"session": "other", "command": "cd /tmp && export WHO=other"}},
			{"tool": "terminal_tools.run", "args": {"command": "echo \"$PWD ${WHO:-none}\""}},
			{"tool": "terminal_tools.run", "args": {"session": "other", "command": "echo \"$PWD $WHO\""}}
		]`)
		if !strings.Contains(obs[1].Stdout, "/workspace none") || !strings.Contains(obs[2].Stdout, "/tmp other") {
			t.Fatalf("got %q and %q, want separate state", obs[1].Stdout, obs[2].Stdout)
		}
	})

	t.Run("uv: project, package from a local wheel directory, uv run", func(t *testing.T) {
		name, wheel := makeWheel(t, "sandox_demo_pkg", "0.1.0")
		obs := send(t, sb, fmt.Sprintf(`[
			{"tool": "filesystem_tools.upload_file", "args": {"path": "/workspace/wheels/%s", "content_base64": "%s"}},
			{"tool": "terminal_tools.run", "args": {"command": "export UV_FIND_LINKS=/workspace/wheels UV_OFFLINE=1 UV_NO_INDEX=1"}},
			{"tool": "terminal_tools.uv_init", "args": {"path": "/workspace/app"}},
			{"tool": "terminal_tools.uv_add", "args": {"packages": ["sandox_demo_pkg"], "path": "/workspace/app"}},
			{"tool": "filesystem_tools.write_file", "args": {"path": "/workspace/app/use_it.py", "content": "import sandox_demo_pkg\nprint(sandox_demo_pkg.hello())\n"}},
			{"tool": "terminal_tools.uv_run", "args": {"command": "use_it.py", "path": "/workspace/app"}},
			{"tool": "terminal_tools.run_python", "args": {"script_path": "/workspace/app/use_it.py"}}
		]`, name, base64.StdEncoding.EncodeToString(wheel)))
		for i, o := range obs[:6] {
			if o.Error != nil || (o.ExitCode != nil && *o.ExitCode != 0) {
				t.Fatalf("action %d (%s): got %+v, want success", i, o.Tool, o)
			}
		}
		if !strings.Contains(obs[5].Stdout, "hello from sandox_demo_pkg") {
			t.Fatalf("got %q, want the package's output through uv run", obs[5].Stdout)
		}
		// Plain python3 has no such package: the script fails, its error is captured.
		if obs[6].ExitCode == nil || *obs[6].ExitCode == 0 || !strings.Contains(obs[6].Stdout, "ModuleNotFoundError") {
			t.Fatalf("got %+v, want python3 to fail with ModuleNotFoundError outside the uv env", obs[6])
		}
	})
}

package integration

import (
	"encoding/base64"
	"fmt"
	"testing"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/sdk"
	"github.com/stretchr/testify/require"
)

// TestTerminalTools runs the terminal tools in a real sandbox container.
func TestTerminalTools(t *testing.T) {
	// Its own group: it runs beside the other parallel tests (doc.go).
	t.Parallel()
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
		got := obs[2].Stdout
		require.Contains(t, got, "/workspace/proj/sub", "want the cwd, the variable and the function to persist")
		require.Contains(t, got, "hi", "want the cwd, the variable and the function to persist")
		require.Contains(t, got, "QUIET", "want the cwd, the variable and the function to persist")
		require.Contains(t, obs[4].Stdout, "relative to the shell's cwd", "want the file written relative to the shell's cwd")
		obs = send(t, sb, `{"terminal_tools.change_directory": {"args": {"path": "/workspace"}}, "terminal_tools.run": {"args": {"command": "exit_code_test() { return 3; }; exit_code_test"}}}`)
		e := obs[1].ExitCode
		require.NotNil(t, e, "exit code, want 3")
		require.Equal(t, 3, *e, "exit code")
	})

	t.Run("a long command returns still running, then its output and exit code", func(t *testing.T) {
		// 24 ticks a quarter second apart: still running after the run's
		// 1 s and read_output's 1 s, done well within wait's 60 s.
		obs := send(t, sb, `{"terminal_tools.run": {"args": {"command": "for i in $(seq 1 24); do echo tick $i; sleep 0.25; done; exit 7", "timeout_seconds": 1}}}`)
		require.True(t, obs[0].TerminalStillRunning, "%+v, want terminal_still_running", obs[0])
		require.Nil(t, obs[0].ExitCode, "exit code while running")
		require.Contains(t, obs[0].Stdout, "tick 1", "want the first ticks")
		obs = send(t, sb, `{"terminal_tools.read_output": {"args": {"wait_seconds": 1}}}`)
		mustOK(t, obs[0])
		require.True(t, obs[0].TerminalStillRunning, "%+v, want it still running", obs[0])
		require.Contains(t, obs[0].Stdout, "tick", "want new ticks")
		require.NotContains(t, obs[0].Stdout, "tick 1\n", "want only new ticks")
		busy := send(t, sb, `{"terminal_tools.run": {"args": {"command": "echo no"}}}`)
		require.NotNil(t, busy[0].Error, "%+v, want run refused while a command runs", busy[0])
		obs = send(t, sb, `{"terminal_tools.wait": {"args": {"timeout_seconds": 60}}}`)
		mustOK(t, obs[0])
		require.False(t, obs[0].TerminalStillRunning, "%+v, want it finished", obs[0])
		require.NotNil(t, obs[0].ExitCode, "%+v, want exit code 7", obs[0])
		require.Equal(t, 7, *obs[0].ExitCode, "exit code")
		require.Contains(t, obs[0].Stdout, "tick 24", "want the last ticks")
	})

	t.Run("Ctrl-C stops a running program", func(t *testing.T) {
		obs := send(t, sb, `[
			{"tool": "terminal_tools.run", "args": {"command": "sleep 300", "timeout_seconds": 1}},
			{"tool": "terminal_tools.send_keys", "args": {"keys": ["Ctrl-C"], "wait_seconds": 5}},
			{"tool": "terminal_tools.run", "args": {"command": "echo back"}}
		]`)
		require.True(t, obs[0].TerminalStillRunning, "%+v, want sleep still running", obs[0])
		mustOK(t, obs[1])
		mustOK(t, obs[2])
		require.Contains(t, obs[2].Stdout, "back", "want the session usable after Ctrl-C")
	})

	t.Run("interactive input to a program that prompts", func(t *testing.T) {
		obs := send(t, sb, `[
			{"tool": "terminal_tools.run", "args": {"command": "read -p 'name? ' n; echo hello $n", "timeout_seconds": 1}},
			{"tool": "terminal_tools.send_input", "args": {"text": "Ada", "enter": true, "wait_seconds": 5}}
		]`)
		require.True(t, obs[0].TerminalStillRunning, "%+v, want it waiting for input", obs[0])
		require.Contains(t, obs[0].Stdout, "name?", "want the prompt while it waits")
		mustOK(t, obs[1])
		require.Contains(t, obs[1].Stdout, "hello Ada", "want the answer")
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
		require.Contains(t, obs[1].Stdout, "served", "want the server's page")
		require.Contains(t, obs[2].Stdout, "the shell is free", "want a free shell")
	})

	t.Run("named sessions are independent", func(t *testing.T) {
		obs := send(t, sb, `[
			{"tool": "terminal_tools.run", "args": {"session": "other", "command": "cd /tmp && export WHO=other"}},
			{"tool": "terminal_tools.run", "args": {"command": "echo \"$PWD ${WHO:-none}\""}},
			{"tool": "terminal_tools.run", "args": {"session": "other", "command": "echo \"$PWD $WHO\""}}
		]`)
		require.Contains(t, obs[1].Stdout, "/workspace none", "want separate state")
		require.Contains(t, obs[2].Stdout, "/tmp other", "want separate state")
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
			require.Nil(t, o.Error, "action %d (%s): %+v", i, o.Tool, o)
			if o.ExitCode != nil {
				require.Equal(t, 0, *o.ExitCode, "action %d (%s): %+v", i, o.Tool, o)
			}
		}
		require.Contains(t, obs[5].Stdout, "hello from sandox_demo_pkg", "want the package's output through uv run")
		// Plain python3 has no such package: the script fails, its error is captured.
		require.NotNil(t, obs[6].ExitCode, "%+v, want python3 to fail outside the uv env", obs[6])
		require.NotEqual(t, 0, *obs[6].ExitCode, "%+v, want python3 to fail outside the uv env", obs[6])
		require.Contains(t, obs[6].Stdout, "ModuleNotFoundError")
	})
}

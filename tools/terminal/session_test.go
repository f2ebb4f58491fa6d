package terminal

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sandox/sandox/internal/poll"
	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/tools"
	"github.com/stretchr/testify/require"
)

func TestStatePersists(t *testing.T) {
	tests := []struct {
		name   string
		setup  string
		check  string
		want   string
		inDirs []string // directories to create first, under the session's start dir
	}{
		{"working directory", "cd sub", "basename \"$PWD\"", "sub\n", []string{"sub"}},
		{"exported variable", "export GREETING=hello", "echo $GREETING", "hello\n", nil},
		{"shell variable", "count=41; count=$((count+1))", "echo $count", "42\n", nil},
		{"shell function", "greet() { echo \"hi $1\"; }", "greet bob", "hi bob\n", nil},
		{"alias", "alias ll='echo listing'", "ll", "listing\n", nil},
		{"activated venv", "mkdir -p v/bin && printf 'export VIRTUAL_ENV=%s/v\\nPATH=\"$VIRTUAL_ENV/bin:$PATH\"\\n' \"$PWD\" > v/bin/activate && . v/bin/activate", "basename \"$VIRTUAL_ENV\"", "v\n", nil},
		{"previous exit status", "(exit 7)", "echo $?", "7\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, d := range tt.inDirs {
				require.NoError(t, os.Mkdir(filepath.Join(dir, d), 0o755))
			}
			m := newTestManager(t, Config{Dir: dir})
			res := mustCall(t, m, "run", map[string]any{"command": tt.setup, "timeout_seconds": waitLong.Seconds()})
			require.False(t, res.StillRunning, "setup %q still running", tt.setup)
			require.Equal(t, tt.want, run(t, m, "", tt.check))
		})
	}
}

func TestExitCodesAndOutput(t *testing.T) {
	m := newTestManager(t, Config{})
	tests := []struct {
		name, command, want string
		code                int
	}{
		{"success", "echo ok", "ok\n", 0},
		{"failure", "false", "", 1},
		{"explicit status", "(exit 3)", "", 3},
		{"status of the last command", "echo one; (exit 4)", "one\n", 4},
		{"syntax error", "if then fi", "bash: line 1: syntax error near unexpected token `then'\nbash: line 1: `if then fi'\n", 2},
		{"unclosed quote", "echo \"unclosed", "bash: line 1: unexpected EOF while looking for matching `\"'\n", 2},
		{"command not found", "no-such-command-xyz", "bash: no-such-command-xyz: command not found\n", 127},
		{"stderr is merged", "echo out; echo err >&2", "out\nerr\n", 0},
		{"no trailing newline", "printf abc", "abc", 0},
		{"multi-line", "for i in 1 2 3\ndo\n  echo \"n=$i\"\ndone", "n=1\nn=2\nn=3\n", 0},
		{"heredoc", "cat <<'EOF'\nline one\n  $HOME stays\nEOF\necho after", "line one\n  $HOME stays\nafter\n", 0},
		{"heredoc to a file", "cat > f.txt <<EOF\nx=$((1+2))\nEOF\ncat f.txt", "x=3\n", 0},
		{"line longer than the terminal's input buffer", "echo " + strings.Repeat("a", 10000), strings.Repeat("a", 10000) + "\n", 0},
		{"reads stdin from a heredoc", "read -r x <<< 'piped'; echo \"got $x\"", "got piped\n", 0},
		{"utf-8", "echo 'héllo wörld ✓'", "héllo wörld ✓\n", 0},
		{"ansi colours stripped", `printf '\033[31mred\033[0m plain\n'`, "red plain\n", 0},
		{"carriage return overwrites", `printf '10%%\r20%%\r30%%\n'`, "30%\n", 0},
		{"crlf", `printf 'a\r\nb\r\n'`, "a\nb\n", 0},
		{"osc title stripped", `printf '\033]0;title\007text\n'`, "text\n", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := mustCall(t, m, "run", map[string]any{"command": tt.command, "timeout_seconds": waitLong.Seconds()})
			requireExit(t, res, tt.code)
			require.Equal(t, tt.want, res.Stdout, "stdout")
			require.Empty(t, res.Stderr, "stderr, want none")
		})
	}
}

func TestRawOutput(t *testing.T) {
	m := newTestManager(t, Config{})
	res := mustCall(t, m, "run", map[string]any{"command": `printf '\033[31mred\033[0m\n'`, "raw": true})
	require.Equal(t, "\x1b[31mred\x1b[0m\r\n", res.Stdout)
}

func TestSoftTimeout(t *testing.T) {
	m := newTestManager(t, Config{})
	res := mustCall(t, m, "run", map[string]any{
		"command":         "for i in 1 2 3 4 5; do echo tick $i; sleep 1; done",
		"timeout_seconds": 1,
	})
	require.True(t, res.StillRunning, "exit %s; want still running", exitCode(res))
	require.Nil(t, res.ExitCode, "want no exit code while running")
	require.Contains(t, res.Stderr, "still running", "stderr, want a still-running note")
	seen := res.Stdout

	t.Run("run refused while busy", func(t *testing.T) {
		_, err := call(t, m, "run", map[string]any{"command": "echo hi"})
		require.ErrorIs(t, err, ErrBusy, "want ErrBusy")
		for _, hint := range []string{"terminal_tools.wait", "terminal_tools.interrupt", "another session"} {
			require.ErrorContains(t, err, hint)
		}
	})
	t.Run("other sessions are free", func(t *testing.T) {
		require.Equal(t, "free\n", run(t, m, "other", "echo free"))
	})
	t.Run("read_output returns new output", func(t *testing.T) {
		res := mustCall(t, m, "read_output", map[string]any{})
		seen += res.Stdout
		require.True(t, res.StillRunning || res.ExitCode != nil, "got neither still running nor an exit code")
	})
	t.Run("wait returns the rest and the exit code", func(t *testing.T) {
		res := mustCall(t, m, "wait", map[string]any{"timeout_seconds": waitLong.Seconds()})
		seen += res.Stdout
		requireExit(t, res, 0)
		require.Equal(t, "tick 1\ntick 2\ntick 3\ntick 4\ntick 5\n", seen, "all output")
	})
	t.Run("read_output after the end", func(t *testing.T) {
		res := mustCall(t, m, "read_output", map[string]any{"wait_seconds": 0.1})
		require.Empty(t, res.Stdout, "want no output")
		requireExit(t, res, 0)
	})
}

func TestInterrupt(t *testing.T) {
	const sleepThenEcho = "echo started; sleep 30; echo not reached"
	tests := []struct {
		name    string
		command string
		tool    string
		args    map[string]any
		want    int
	}{
		{"interrupt", sleepThenEcho, "interrupt", map[string]any{"wait_seconds": waitLong.Seconds()}, 130},
		{"send_keys Ctrl-C", sleepThenEcho, "send_keys", map[string]any{"keys": []string{"Ctrl-C"}, "wait_seconds": waitLong.Seconds()}, 130},
		{"interrupt a shell loop", "while :; do :; done; echo not reached", "interrupt", map[string]any{"wait_seconds": waitLong.Seconds()}, 130},
		{"interrupt with force", "sleep 30", "interrupt", map[string]any{"force": true, "wait_seconds": waitLong.Seconds()}, 137},
		{"force ignores SIGINT traps", "trap '' INT; sleep 30", "interrupt", map[string]any{"force": true, "wait_seconds": waitLong.Seconds()}, 137},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newTestManager(t, Config{})
			res := mustCall(t, m, "run", map[string]any{"command": tt.command, "timeout_seconds": 0.2})
			require.True(t, res.StillRunning, "%q, exit %s; want sleep still running", res.Stdout, exitCode(res))
			res = mustCall(t, m, tt.tool, tt.args)
			requireExit(t, res, tt.want)
			require.NotContains(t, res.Stdout, "not reached", "want the rest of the command skipped")
			require.Equal(t, "back\n", run(t, m, "", "echo back"), "after the interrupt")
		})
	}
}

func TestInterruptIdle(t *testing.T) {
	m := newTestManager(t, Config{})
	run(t, m, "", "true")
	res := mustCall(t, m, "interrupt", map[string]any{})
	require.Contains(t, res.Stderr, "nothing is running", "stderr, want a note that nothing runs")
}

func TestInteractiveInput(t *testing.T) {
	tests := []struct {
		name    string
		command string
		prompt  string
		tool    string
		args    map[string]any
		want    string
	}{
		{"read with enter", "read -p 'name? ' n; echo hello $n", "name? ", "send_input", map[string]any{"text": "Alice", "enter": true}, "hello Alice\n"},
		{"read with newline", "read -p 'name? ' n; echo hello $n", "name? ", "send_input", map[string]any{"text": "Bob\n"}, "hello Bob\n"},
		{"python input", "python3 -c 'print(\"hi \" + input(\"who? \"))'", "who? ", "send_input", map[string]any{"text": "Carol", "enter": true}, "hi Carol\n"},
		{"cat until Ctrl-D", "cat", "", "send_keys", map[string]any{"keys": []string{"x", "y", "Enter", "Ctrl-D"}}, "xy\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newTestManager(t, Config{})
			res := mustCall(t, m, "run", map[string]any{"command": tt.command, "timeout_seconds": 0.5})
			out := res.Stdout
			poll.Until(t, waitLong, "the prompt", func() bool {
				if strings.Contains(out, tt.prompt) {
					return true
				}
				out += mustCall(t, m, "read_output", map[string]any{"wait_seconds": 0.2}).Stdout
				return false
			})
			args := map[string]any{"wait_seconds": waitLong.Seconds()}
			for k, v := range tt.args {
				args[k] = v
			}
			res = mustCall(t, m, tt.tool, args)
			requireExit(t, res, 0)
			require.Equal(t, tt.want, strings.TrimPrefix(out+res.Stdout, tt.prompt))
		})
	}
}

func TestInputNeedsARunningCommand(t *testing.T) {
	m := newTestManager(t, Config{})
	run(t, m, "", "true")
	_, err := call(t, m, "send_input", map[string]any{"text": "x"})
	require.ErrorIs(t, err, tools.ErrNotFound, "want ErrNotFound")
	_, err = call(t, m, "send_keys", map[string]any{"keys": []string{"Hyper-Q"}})
	require.ErrorIs(t, err, schemas.CodeInvalidArgs, "want invalid_args for an unknown key")
}

func TestBackgroundServerSurvives(t *testing.T) {
	m := newTestManager(t, Config{})
	port := freePort(t)
	res := mustCall(t, m, "run", map[string]any{"command": fmt.Sprintf("python3 -m http.server %d --bind 127.0.0.1 &", port), "timeout_seconds": waitLong.Seconds()})
	requireExit(t, res, 0)
	url := fmt.Sprintf("http://127.0.0.1:%d/", port)
	poll.Until(t, waitLong, "the server to answer 200", func() bool {
		out := run(t, m, "", "python3 -c 'import sys, urllib.request as u; print(\"status=%d\" % u.urlopen(sys.argv[1]).status)' "+url+" 2>/dev/null || true")
		return strings.Contains(out, "status=200\n")
	})
	require.Contains(t, run(t, m, "", "sleep 100 & echo next"), "next\n", "want the session free after a background sleep")
}

func TestSessionsAreIndependent(t *testing.T) {
	m := newTestManager(t, Config{})
	start := m.Dir()
	run(t, m, "a", "export ONLY_A=1; cd /")
	require.Equal(t, "unset\n"+start+"\n", run(t, m, "b", "echo ${ONLY_A:-unset}; pwd"), "want session b untouched by a")
	require.Equal(t, "1\n/\n", run(t, m, "a", "echo $ONLY_A; pwd"), "want session a's state")
	list := mustCall(t, m, "list_sessions", map[string]any{})
	for _, name := range []string{"a\t", "b\t"} {
		require.Contains(t, list.Stdout, name, "want session listed")
	}
	mustCall(t, m, "close_session", map[string]any{"session": "b"})
	list = mustCall(t, m, "list_sessions", map[string]any{})
	require.NotContains(t, list.Stdout, "b\t", "want b gone")
	_, err := call(t, m, "close_session", map[string]any{"session": "b"})
	require.ErrorIs(t, err, tools.ErrNotFound, "closing b twice")
	_, err = call(t, m, "read_output", map[string]any{"session": "nope"})
	require.ErrorIs(t, err, tools.ErrNotFound, "an unknown session")
}

func TestShellExit(t *testing.T) {
	m := newTestManager(t, Config{})
	run(t, m, "", "export GONE=1")
	res := mustCall(t, m, "run", map[string]any{"command": "echo bye; exit 5", "timeout_seconds": waitLong.Seconds()})
	require.NotNil(t, res.ExitCode, "want exit 5")
	require.Equal(t, 5, *res.ExitCode, "exit code")
	require.Contains(t, res.Stdout, "bye")
	require.Contains(t, res.Stderr, "exited", "stderr, want a note that the shell exited")
	res = mustCall(t, m, "run", map[string]any{"command": "echo ${GONE:-fresh}"})
	require.Equal(t, "fresh\n", res.Stdout, "want a fresh shell")
	require.Contains(t, res.Stderr, "fresh one", "want a note about the fresh shell")
}

func TestChangeDirectory(t *testing.T) {
	m := newTestManager(t, Config{})
	start := m.Dir()
	require.NoError(t, os.Mkdir(filepath.Join(start, "my dir"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(start, "file"), nil, 0o644))
	tests := []struct {
		name, path, wantDir string
		wantErr             error
	}{
		{"relative with a space", "my dir", filepath.Join(start, "my dir"), nil},
		{"parent", "..", start, nil},
		{"absolute", "/", "/", nil},
		{"previous", "-", start, nil},
		{"missing", "no/such/dir", start, tools.ErrNotFound},
		{"a file", "file", start, schemas.CodeInvalidArgs},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := call(t, m, "change_directory", map[string]any{"path": tt.path})
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				require.ErrorContains(t, err, strconv.Quote(tt.path), "want the error to name the path")
			} else {
				require.NoError(t, err)
				require.Equal(t, tt.wantDir+"\n", res.Stdout)
			}
			require.Equal(t, tt.wantDir, m.Dir(), "Dir")
			require.Equal(t, tt.wantDir+"\n", mustCall(t, m, "get_cwd", map[string]any{}).Stdout, "get_cwd")
		})
	}
}

func TestLongOutputTruncation(t *testing.T) {
	const maxOut = 4096
	m := newTestManager(t, Config{MaxOutput: maxOut})
	var want strings.Builder
	for i := 1; i <= 100000; i++ {
		fmt.Fprintf(&want, "%d\n", i)
	}
	res := mustCall(t, m, "run", map[string]any{"command": "seq 1 100000", "timeout_seconds": waitLong.Seconds()})
	requireExit(t, res, 0)
	require.LessOrEqual(t, len(res.Stdout), maxOut+200, "bytes, want at most about %d", maxOut)
	head, tail, ok := strings.Cut(res.Stdout, "[... ")
	require.True(t, ok, "%q: want a truncation marker", res.Stdout)
	require.True(t, strings.HasPrefix(head, "1\n2\n3\n"), "%q: want the head", res.Stdout)
	require.True(t, strings.HasSuffix(tail, "\n100000\n"), "%q: want the tail", res.Stdout)
	var gap, from int64
	_, err := fmt.Sscanf(tail, "%d bytes truncated; read the rest with terminal_tools.read_output offset=%d", &gap, &from)
	require.NoError(t, err, "marker %q", tail[:80])
	require.Contains(t, res.Stderr, fmt.Sprintf("from offset %d to ", from), "stderr, want a note with offset %d", from)

	// read from the cut to the end page by page, following the notes
	var rest strings.Builder
	next := regexp.MustCompile(`read_output offset=(\d+)`)
	for off, pages := from, 0; ; pages++ {
		require.LessOrEqual(t, pages, 1000, "more than 1000 pages, want the end")
		page := mustCall(t, m, "read_output", map[string]any{"offset": off})
		require.NotEmpty(t, page.Stdout, "an empty page at offset %d", off)
		rest.WriteString(page.Stdout)
		match := next.FindStringSubmatch(page.Stderr)
		if match == nil {
			break
		}
		n, _ := strconv.ParseInt(match[1], 10, 64)
		require.Greater(t, n, off, "next offset after, want progress")
		off = n
	}
	// Not require.Equal: a diff of two 600 KB strings buries the message.
	if got := head + rest.String(); got != want.String() {
		t.Fatalf("got %d bytes reassembled, want %d; they differ", len(got), want.Len())
	}
}

func TestCloseKillsEverything(t *testing.T) {
	before := runtime.NumGoroutine()
	m := NewManager(Config{Dir: t.TempDir()})
	out := run(t, m, "", "sleep 1000 & echo $!")
	bg, err := strconv.Atoi(strings.TrimSpace(out))
	require.NoError(t, err, "%q, want a pid", out)
	mustCall(t, m, "run", map[string]any{"command": "sleep 1000", "session": "busy", "timeout_seconds": 0.1})
	require.NoError(t, m.Close(), "close")
	poll.Until(t, waitLong, "the background sleep to die", func() bool { return !processAlive(bg) })
	poll.Until(t, waitLong, "the goroutines to end", func() bool { return runtime.NumGoroutine() <= before })
	_, err = call(t, m, "run", map[string]any{"command": "true"})
	require.Error(t, err, "running after Close")
}

// processAlive reports whether pid runs and is no zombie.
func processAlive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(stat), ')')
	return i < 0 || !strings.HasPrefix(string(stat[i+1:]), " Z")
}

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func TestCancelledContextReturnsOutputSoFar(t *testing.T) {
	m := newTestManager(t, Config{})
	var runTool tools.Tool
	for _, tool := range m.Tools() {
		if tool.Name == "run" {
			runTool = tool
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	printed := func() bool {
		m.mu.Lock()
		s := m.sessions[DefaultSession]
		m.mu.Unlock()
		if s == nil {
			return false
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.cur != nil && s.out.end() > s.cur.start
	}
	stopped := make(chan struct{})
	go func() {
		// cancel once the command has printed, as a caller giving up would
		defer close(stopped)
		defer cancel()
		for deadline := time.Now().Add(waitLong); !printed() && time.Now().Before(deadline); {
			time.Sleep(20 * time.Millisecond) // poll interval
		}
	}()
	defer func() { <-stopped }()
	res, err := runTool.Call(ctx, []byte(`{"command": "echo begun; sleep 30", "timeout_seconds": 600}`))
	require.NoError(t, err)
	require.True(t, res.StillRunning, "%q: want the output so far and still running", res.Stdout)
	require.Equal(t, "begun\n", res.Stdout, "want the output so far")
}

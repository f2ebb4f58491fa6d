package python

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sandox/sandox/internal/poll"
	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/tools"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644))
	}
	return dir
}

// startHost serves files and closes the host at the end of the test. Import
// errors are the caller's to check.
func startHost(t *testing.T, files map[string]string, cfg Config) (*Host, error) {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	cfg.Dir = writeFiles(t, files)
	h, err := Start(t.Context(), cfg)
	require.NotNil(t, h, "no host: %v", err)
	t.Cleanup(func() {
		assert.NoError(t, h.Close(), "close")
	})
	return h, err
}

func find(t *testing.T, h *Host, name string) tools.Tool {
	t.Helper()
	for _, tool := range h.Tools() {
		if tool.FullName() == name {
			return tool
		}
	}
	t.Fatalf("got no tool %s", name)
	return tools.Tool{}
}

func call(t *testing.T, h *Host, name, args string) (tools.Result, error) {
	t.Helper()
	return find(t, h, name).Call(t.Context(), json.RawMessage(args))
}

func TestStartFindsTools(t *testing.T) {
	h, err := startHost(t, toolFiles, Config{})
	var ie *ImportError
	require.ErrorAs(t, err, &ie)
	require.Equal(t, "broken.py", ie.File)
	assert.Contains(t, ie.Message, "SyntaxError")
	assert.ErrorContains(t, err, "broken.py")
	assert.Contains(t, ie.Traceback, "def oops(:", "want the SyntaxError with its traceback")
	var got []string
	for _, tool := range h.Tools() {
		got = append(got, tool.FullName())
		assert.Equal(t, "python", tool.Source, "source of %s", tool.FullName())
	}
	sort.Strings(got)
	want := []string{"basic.child", "basic.count", "basic.cwd", "basic.die", "basic.echo", "basic.fail",
		"basic.greet", "basic.nothing", "basic.point", "basic.segfault", "basic.slow", "basic.warn",
		"calc.quadruple", "lib_math.double"}
	require.Equal(t, want, got, "tools")
	assert.Equal(t, "Greet someone.", find(t, h, "basic.greet").Description, "description: want the docstring")
}

func TestCall(t *testing.T) {
	h, _ := startHost(t, toolFiles, Config{})
	tests := []struct {
		name, tool, args string
		wantStdout       string
		wantStderr       []string // substrings
		wantReturn       string   // JSON; "" for none
		wantCode         schemas.ErrorCode
		wantErr          string // substring
	}{
		{name: "prints and returns a dict", tool: "basic.greet", args: `{"name":"Ada"}`,
			wantStdout: "hello Ada\n", wantReturn: `{"greeted":"Ada"}`},
		{name: "exception", tool: "basic.fail", args: `{}`, wantStdout: "trying\n",
			wantStderr: []string{"Traceback (most recent call last)", `raise ValueError("bad value")`, "ValueError: bad value"},
			wantCode:   schemas.CodeToolError, wantErr: "ValueError: bad value"},
		{name: "missing argument", tool: "basic.greet", args: `{}`,
			wantCode: schemas.CodeInvalidArgs, wantErr: "missing a required argument: 'name'"},
		{name: "unknown argument", tool: "basic.greet", args: `{"name":"Ada","colour":"red"}`,
			wantCode: schemas.CodeInvalidArgs, wantErr: "unexpected keyword argument 'colour'"},
		{name: "args not an object", tool: "basic.greet", args: `["Ada"]`,
			wantCode: schemas.CodeInvalidArgs, wantErr: "JSON object"},
		{name: "null args", tool: "basic.nothing", args: `null`},
		{name: "child process output", tool: "basic.child", args: `{}`, wantStdout: "before\nfrom-child\nafter\n"},
		{name: "stderr", tool: "basic.warn", args: `{}`, wantStderr: []string{"careful\nraw fd\n"}},
		{name: "non-JSON return", tool: "basic.point", args: `{}`, wantReturn: `"Point(1, 2)"`},
		{name: "None returns nothing", tool: "basic.nothing", args: `{}`},
		{name: "tool file importing another", tool: "calc.quadruple", args: `{"x":3}`, wantReturn: `12`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := call(t, h, tt.tool, tt.args)
			if tt.wantCode == "" {
				require.NoError(t, err)
			}
			if tt.wantCode != "" {
				require.Equal(t, tt.wantCode, tools.ErrorCode(err), "error code of %v", err)
				require.ErrorContains(t, err, tt.wantErr)
			}
			assert.Equal(t, tt.wantStdout, res.Stdout, "stdout")
			for _, s := range tt.wantStderr {
				assert.Contains(t, res.Stderr, s, "stderr")
			}
			if len(tt.wantStderr) == 0 {
				assert.Empty(t, res.Stderr, "stderr")
			}
			assert.Equal(t, tt.wantReturn, string(res.Return), "return %s", res.Return)
		})
	}
}

func TestExceptionMessageIsTheWireMessage(t *testing.T) {
	h, _ := startHost(t, toolFiles, Config{})
	_, err := call(t, h, "basic.fail", `{}`)
	var we *schemas.Error
	require.ErrorAs(t, err, &we)
	require.Equal(t, "ValueError: bad value", we.Message)
}

func TestTimeoutRestartsHost(t *testing.T) {
	h, _ := startHost(t, toolFiles, Config{})
	for want := 1; want <= 2; want++ {
		res, err := call(t, h, "basic.count", `{}`)
		require.NoError(t, err)
		require.Equal(t, strconv.Itoa(want), string(res.Return))
	}
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	res, err := find(t, h, "basic.slow").Call(ctx, json.RawMessage(`{"seconds": 60}`))
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Equal(t, schemas.CodeTimeout, tools.ErrorCode(err), "error code of %v", err)
	assert.Equal(t, "sleeping\n", res.Stdout, "stdout: want the output captured before the timeout")
	// A new host imported the files again.
	res, err = call(t, h, "basic.count", `{}`)
	require.NoError(t, err)
	require.Equal(t, "1", string(res.Return), "want 1 from a fresh host")
}

func TestHostDeathRestartsHost(t *testing.T) {
	h, _ := startHost(t, toolFiles, Config{})
	tests := []struct {
		name, tool, args      string
		wantState, wantStdout string
		wantStderr            string
	}{
		{name: "os._exit", tool: "basic.die", args: `{"code": 3}`,
			wantState: "exit status 3", wantStdout: "exiting\n"},
		{name: "segfault", tool: "basic.segfault", args: `{}`,
			wantState: "signal: segmentation fault", wantStderr: "Fatal Python error: Segmentation fault"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := call(t, h, tt.tool, tt.args)
			require.Equal(t, schemas.CodeToolError, tools.ErrorCode(err), "error code of %v", err)
			require.ErrorContains(t, err, "python tool host died ("+tt.wantState+")")
			assert.Equal(t, tt.wantStdout, res.Stdout, "stdout")
			assert.Contains(t, res.Stderr, tt.wantStderr, "stderr")
			res, err = call(t, h, "basic.greet", `{"name":"again"}`)
			require.NoError(t, err, "want the next call served by a new host")
			require.Equal(t, "hello again\n", res.Stdout, "want the next call served by a new host")
		})
	}
}

func TestWorkDir(t *testing.T) {
	var dir atomic.Value
	h, _ := startHost(t, toolFiles, Config{WorkDir: func() string { return dir.Load().(string) }})
	for _, name := range []string{"one", "two"} {
		t.Run(name, func(t *testing.T) {
			want := t.TempDir()
			dir.Store(want)
			res, err := call(t, h, "basic.cwd", `{}`)
			require.NoError(t, err)
			var got string
			require.NoError(t, json.Unmarshal(res.Return, &got))
			require.True(t, sameDir(got, want), "got %q, want %q", got, want)
		})
	}
	t.Run("missing", func(t *testing.T) {
		dir.Store(filepath.Join(t.TempDir(), "gone"))
		_, err := call(t, h, "basic.cwd", `{}`)
		require.ErrorIs(t, err, tools.ErrNotFound)
	})
}

func sameDir(a, b string) bool {
	ia, errA := os.Stat(a)
	ib, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(ia, ib)
}

func TestConcurrentCallsAreSerialized(t *testing.T) {
	h, _ := startHost(t, toolFiles, Config{})
	echo := find(t, h, "basic.echo")
	var wg sync.WaitGroup
	for i := range 8 {
		tag := fmt.Sprintf("call-%d", i)
		wg.Go(func() {
			res, err := echo.Call(t.Context(), json.RawMessage(`{"tag":"`+tag+`"}`))
			// assert, not require: this runs off the test's goroutine.
			assert.NoError(t, err)
			assert.Equal(t, tag+"\n"+tag+"\n", res.Stdout)
			assert.Equal(t, `"`+tag+`"`, string(res.Return), "return")
		})
	}
	wg.Wait()
}

func TestClose(t *testing.T) {
	h, _ := startHost(t, toolFiles, Config{})
	greet := find(t, h, "basic.greet")
	require.NoError(t, h.Close(), "want a clean close")
	assert.NoDirExists(t, h.scriptDir, "want the host files removed")
	_, err := greet.Call(t.Context(), json.RawMessage(`{"name":"x"}`))
	require.ErrorIs(t, err, ErrClosed)
	require.Equal(t, schemas.CodeUnavailable, tools.ErrorCode(err), "error code of %v", err)
}

func TestStartFails(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	tests := []struct {
		name    string
		cfg     Config
		wantErr string
	}{
		{"no directory", Config{}, "no tool directory"},
		{"missing directory", Config{Dir: filepath.Join(t.TempDir(), "gone")}, "no such file"},
		{"no interpreter", Config{Dir: t.TempDir(), Python: "no-such-python"}, "no-such-python"},
		{"interpreter exits", Config{Dir: t.TempDir(), Python: "false"}, "exited before it was ready (exit status 1)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := Start(t.Context(), tt.cfg)
			require.Nil(t, h, "want no host")
			require.ErrorContains(t, err, tt.wantErr)
		})
	}
}

func TestCloseDuringCall(t *testing.T) {
	h, _ := startHost(t, toolFiles, Config{})
	slow := find(t, h, "basic.slow")
	done := make(chan error, 1)
	go func() {
		_, err := slow.Call(t.Context(), json.RawMessage(`{"seconds": 60}`))
		done <- err
	}()
	poll.Until(t, 10*time.Second, "the call to be inside the function", func() bool {
		h.mu.Lock()
		p := h.proc
		h.mu.Unlock()
		if p == nil {
			return false
		}
		stdout, _ := p.capture.read()
		return stdout == "sleeping\n"
	})
	require.NoError(t, h.Close(), "want a clean close")
	require.ErrorIs(t, <-done, ErrClosed)
}

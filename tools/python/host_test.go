package python

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/tools"
)

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
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
	if h == nil {
		t.Fatalf("got no host: %v", err)
	}
	t.Cleanup(func() {
		if err := h.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
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
	if !errors.As(err, &ie) || ie.File != "broken.py" {
		t.Fatalf("got %v, want an ImportError for broken.py", err)
	}
	if !strings.Contains(ie.Message, "SyntaxError") || !strings.Contains(err.Error(), "broken.py") ||
		!strings.Contains(ie.Traceback, "def oops(:") {
		t.Errorf("got %q, want the SyntaxError with its traceback", err)
	}
	var got []string
	for _, tool := range h.Tools() {
		got = append(got, tool.FullName())
		if tool.Source != "python" {
			t.Errorf("%s: got source %q, want python", tool.FullName(), tool.Source)
		}
	}
	sort.Strings(got)
	want := []string{"basic.child", "basic.count", "basic.cwd", "basic.die", "basic.echo", "basic.fail",
		"basic.greet", "basic.nothing", "basic.point", "basic.segfault", "basic.slow", "basic.warn",
		"calc.quadruple", "lib_math.double"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("got tools %v, want %v", got, want)
	}
	if d := find(t, h, "basic.greet").Description; d != "Greet someone." {
		t.Errorf("got description %q, want the docstring", d)
	}
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
			if tt.wantCode == "" && err != nil {
				t.Fatalf("got %v, want no error", err)
			}
			if tt.wantCode != "" {
				if got := tools.ErrorCode(err); got != tt.wantCode {
					t.Fatalf("got code %q (%v), want %q", got, err, tt.wantCode)
				}
				if !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got %q, want it to contain %q", err, tt.wantErr)
				}
			}
			if res.Stdout != tt.wantStdout {
				t.Errorf("got stdout %q, want %q", res.Stdout, tt.wantStdout)
			}
			for _, s := range tt.wantStderr {
				if !strings.Contains(res.Stderr, s) {
					t.Errorf("got stderr %q, want it to contain %q", res.Stderr, s)
				}
			}
			if len(tt.wantStderr) == 0 && res.Stderr != "" {
				t.Errorf("got stderr %q, want none", res.Stderr)
			}
			if string(res.Return) != tt.wantReturn {
				t.Errorf("got return %s, want %s", res.Return, tt.wantReturn)
			}
		})
	}
}

func TestExceptionMessageIsTheWireMessage(t *testing.T) {
	h, _ := startHost(t, toolFiles, Config{})
	_, err := call(t, h, "basic.fail", `{}`)
	var we *schemas.Error
	if !errors.As(err, &we) || we.Message != "ValueError: bad value" {
		t.Fatalf("got %#v, want a *schemas.Error with message %q", err, "ValueError: bad value")
	}
}

func TestTimeoutRestartsHost(t *testing.T) {
	h, _ := startHost(t, toolFiles, Config{})
	for want := 1; want <= 2; want++ {
		if res, err := call(t, h, "basic.count", `{}`); err != nil || string(res.Return) != strconv.Itoa(want) {
			t.Fatalf("got %s, %v; want %d", res.Return, err, want)
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	res, err := find(t, h, "basic.slow").Call(ctx, json.RawMessage(`{"seconds": 60}`))
	if !errors.Is(err, context.DeadlineExceeded) || tools.ErrorCode(err) != schemas.CodeTimeout {
		t.Fatalf("got %v, want a timeout", err)
	}
	if res.Stdout != "sleeping\n" {
		t.Errorf("got stdout %q, want the output captured before the timeout", res.Stdout)
	}
	// A new host imported the files again.
	if res, err := call(t, h, "basic.count", `{}`); err != nil || string(res.Return) != "1" {
		t.Fatalf("got %s, %v; want 1 from a fresh host", res.Return, err)
	}
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
			if tools.ErrorCode(err) != schemas.CodeToolError ||
				!strings.Contains(err.Error(), "python tool host died ("+tt.wantState+")") {
				t.Fatalf("got %v, want a tool_error saying the host died (%s)", err, tt.wantState)
			}
			if res.Stdout != tt.wantStdout || !strings.Contains(res.Stderr, tt.wantStderr) {
				t.Errorf("got stdout %q, stderr %q; want %q, %q", res.Stdout, res.Stderr, tt.wantStdout, tt.wantStderr)
			}
			if res, err := call(t, h, "basic.greet", `{"name":"again"}`); err != nil || res.Stdout != "hello again\n" {
				t.Fatalf("got %q, %v; want the next call served by a new host", res.Stdout, err)
			}
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
			var got string
			if err == nil {
				err = json.Unmarshal(res.Return, &got)
			}
			if err != nil || !sameDir(got, want) {
				t.Fatalf("got %q, %v; want %q", got, err, want)
			}
		})
	}
	t.Run("missing", func(t *testing.T) {
		dir.Store(filepath.Join(t.TempDir(), "gone"))
		_, err := call(t, h, "basic.cwd", `{}`)
		if !errors.Is(err, tools.ErrNotFound) {
			t.Fatalf("got %v, want ErrNotFound", err)
		}
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
			if want := tag + "\n" + tag + "\n"; err != nil || res.Stdout != want {
				t.Errorf("got %q, %v; want %q", res.Stdout, err, want)
			}
			if want := `"` + tag + `"`; string(res.Return) != want {
				t.Errorf("got return %s, want %s", res.Return, want)
			}
		})
	}
	wg.Wait()
}

func TestClose(t *testing.T) {
	h, _ := startHost(t, toolFiles, Config{})
	greet := find(t, h, "basic.greet")
	if err := h.Close(); err != nil {
		t.Fatalf("got %v, want a clean close", err)
	}
	if _, err := os.Stat(h.scriptDir); !os.IsNotExist(err) {
		t.Errorf("got %v, want the host files removed", err)
	}
	_, err := greet.Call(t.Context(), json.RawMessage(`{"name":"x"}`))
	if !errors.Is(err, ErrClosed) || tools.ErrorCode(err) != schemas.CodeUnavailable {
		t.Fatalf("got %v, want ErrClosed", err)
	}
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
			if h != nil || err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("got %v, %v; want no host and an error containing %q", h, err, tt.wantErr)
			}
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
	waitFor(t, func() bool { // the call is inside the function
		h.mu.Lock()
		p := h.proc
		h.mu.Unlock()
		if p == nil {
			return false
		}
		stdout, _ := p.capture.read()
		return stdout == "sleeping\n"
	})
	if err := h.Close(); err != nil {
		t.Fatalf("got %v, want a clean close", err)
	}
	if err := <-done; !errors.Is(err, ErrClosed) {
		t.Fatalf("got %v, want ErrClosed", err)
	}
}

// waitFor polls cond until it holds, failing the test after ten seconds.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in 10s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

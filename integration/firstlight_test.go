package integration

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/sdk"
	"github.com/sandox/sandox/services/auth"
)

const userTools = `"""User tools for the first-light test."""
import sys


def greet(name: str, excited: bool = False) -> dict:
    """Greet someone."""
    print("hello " + name + ("!" if excited else ""))
    print("to stderr", file=sys.stderr)
    return {"greeted": name}


def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b
`

// TestFirstLight walks the whole path: SDK -> JetStream -> orchestrator ->
// dynamically built sandbox image -> executor -> observations.
func TestFirstLight(t *testing.T) {
	ctx := t.Context()
	toolFile := writeFile(t, "first_tools.py", userTools)
	group := newGroup(t, sdk.GroupConfig{
		ID:               "it-first",
		ComputeResources: schemas.ComputeResources{CPU: "1", Memory: "256MiB"},
		Tools:            []string{toolFile},
	})
	sb := startSandbox(t, group, "it-first-1", sdk.SandboxOptions{})
	st := sb.Status()
	if st.State != schemas.StateRunning || !strings.HasPrefix(st.Image, "sandox/sandbox-tools:") {
		t.Fatalf("got status %+v, want a running sandbox on a tools image", st)
	}

	t.Run("sync batch keeps order across built-in and user tools", func(t *testing.T) {
		obs := send(t, sb, `{
			"filesystem_tools.write_file": {"description": "write", "args": {"path": "a.txt", "content": "one two three\n"}},
			"first_tools.greet": {"description": "user tool", "args": {"name": "Ada", "excited": true}},
			"terminal_tools.run": {"description": "shell", "args": {"command": "cat a.txt; id -u; echo $PWD"}},
			"addUse": {"description": "bare name with Use", "args": {"a": 2, "b": 40}}
		}`)
		if len(obs) != 4 {
			t.Fatalf("got %d observations, want 4", len(obs))
		}
		wantTools := []string{"filesystem_tools.write_file", "first_tools.greet", "terminal_tools.run", "first_tools.add"}
		for i, w := range wantTools {
			mustOK(t, obs[i])
			if obs[i].Tool != w {
				t.Errorf("observation %d: got tool %q, want %q", i, obs[i].Tool, w)
			}
		}
		if obs[1].Stdout != "hello Ada!\n" || !strings.Contains(obs[1].Stderr, "to stderr") || string(obs[1].Return) != `{"greeted":"Ada"}` {
			t.Errorf("got greet %+v, want its stdout, stderr and return value", obs[1])
		}
		if out := obs[2].Stdout; !strings.Contains(out, "one two three") || !strings.Contains(out, "10001") || !strings.Contains(out, "/workspace") {
			t.Errorf("got shell output %q, want the file written earlier, uid 10001 and /workspace", out)
		}
		if obs[2].ExitCode == nil || *obs[2].ExitCode != 0 {
			t.Errorf("got exit code %v, want 0", obs[2].ExitCode)
		}
		if string(obs[3].Return) != "42" {
			t.Errorf("got add return %s, want 42", obs[3].Return)
		}
	})

	t.Run("the sandbox describes its built-in and user tools", func(t *testing.T) {
		descs, err := sb.Tools(ctx)
		if err != nil {
			t.Fatal(err)
		}
		byName := map[string]schemas.ToolDescription{}
		for _, d := range descs {
			byName[d.Name] = d
		}
		for name, source := range map[string]string{
			"filesystem_tools.read_file": "builtin", "terminal_tools.run": "builtin",
			"first_tools.greet": "python", "first_tools.add": "python",
		} {
			d, ok := byName[name]
			if !ok || d.Source != source || d.Description == "" || !json.Valid(d.Parameters) {
				t.Errorf("%s: got %+v, want a %s tool with a description and a parameters schema", name, d, source)
			}
		}
		if p := string(byName["first_tools.add"].Parameters); !strings.Contains(p, `"integer"`) || !strings.Contains(p, `"required"`) {
			t.Errorf("got parameters %s, want integer a and b required (from the signature)", p)
		}
	})

	t.Run("async batch through a future", func(t *testing.T) {
		f, err := sb.SendActionsAsync(ctx, schemas.Actions{
			{Tool: "terminal_tools.run", Args: json.RawMessage(`{"command": "sleep 1; echo later"}`)},
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, done, _ := f.Poll(); done {
			t.Fatal("got a finished future at once, want it pending while the command sleeps")
		}
		obs, err := f.Wait(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(obs) != 1 || !strings.Contains(obs[0].Stdout, "later") {
			t.Fatalf("got %+v, want the command's output", obs)
		}
		// The observations are in the audit stream under the batch id.
		js, _ := jetstream.New(env.nc)
		stream, err := js.Stream(ctx, schemas.EventStream)
		if err != nil {
			t.Fatal(err)
		}
		m, err := stream.GetLastMsgForSubject(ctx, schemas.ObservationSubject(sb.ID(), f.BatchID()))
		if err != nil {
			t.Fatalf("observations of batch %s not in %s: %v", f.BatchID(), schemas.EventStream, err)
		}
		if !strings.Contains(string(m.Data), "later") {
			t.Fatalf("got audit record %s, want the observations", m.Data)
		}
	})

	t.Run("bad input is answered clearly and the sandbox keeps working", func(t *testing.T) {
		obs := send(t, sb, `{
			"nope_tools.fly": {"args": {}},
			"filesystem_tools.read_file": {"args": {"path": 42}},
			"first_tools.add": {"args": {"a": 1}},
			"first_tools.missing": {"args": {}}
		}`)
		want := []schemas.ErrorCode{schemas.CodeUnknownTool, schemas.CodeInvalidArgs, schemas.CodeInvalidArgs, schemas.CodeUnknownTool}
		for i, code := range want {
			if obs[i].Error == nil || obs[i].Error.Code != code {
				t.Errorf("observation %d (%s): got %+v, want code %s", i, obs[i].Tool, obs[i].Error, code)
			}
		}
		// Malformed JSON, straight to the executor (the SDK would refuse it).
		reply, err := env.nc.Request(schemas.ActionsSubject(sb.ID()), []byte(`{"terminal_tools.run": `), 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		var res schemas.BatchResult
		if err := json.Unmarshal(reply.Data, &res); err != nil || res.Error == nil || res.Error.Code != schemas.CodeBadRequest {
			t.Fatalf("got %s, want a bad_request batch error", reply.Data)
		}
		if _, err := sb.SendActionsJSON(ctx, []byte(`[1,2`)); !errors.Is(err, sdk.ErrBadRequest) {
			t.Fatalf("got %v, want ErrBadRequest from the SDK", err)
		}
		obs = send(t, sb, `{"first_tools.add": {"args": {"a": 1, "b": 1}}}`)
		mustOK(t, obs[0])
		if string(obs[0].Return) != "2" {
			t.Fatalf("got %s, want 2: the sandbox must keep working", obs[0].Return)
		}
	})

	t.Run("a second sandbox with the same tool set reuses the image", func(t *testing.T) {
		sb2, err := group.CreateSandbox(ctx, "it-first-2", sdk.SandboxOptions{})
		if err != nil {
			t.Fatal(err)
		}
		st2 := sb2.Status()
		if !st2.ImageReused || st2.Image != st.Image {
			t.Fatalf("got image %s reused=%t, want %s reused", st2.Image, st2.ImageReused, st.Image)
		}
		if err := sb2.End(ctx); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("the NATS CLI injects a batch by hand", func(t *testing.T) {
		natsCLI, err := exec.LookPath("nats")
		if err != nil {
			if os.Getenv("CI") != "" {
				t.Fatal("the nats CLI is not on PATH; build/scripts/test.sh installs it")
			}
			t.Skip("the nats CLI is not on PATH; build/scripts/test.sh installs it")
		}
		out, err := exec.CommandContext(ctx, natsCLI, "--server", env.url, "--creds", credsFile(t, auth.RoleClient), "request", "--timeout", "20s",
			schemas.ActionsSubject(sb.ID()), `{"terminal_tools.run": {"description": "by hand", "args": {"command": "echo injected"}}}`).CombinedOutput()
		if err != nil {
			t.Fatalf("nats request: %v\n%s", err, out)
		}
		if !strings.Contains(string(out), `"stdout":"injected`) {
			t.Fatalf("got %s, want the observation printed", out)
		}
	})

	t.Run("wrong lifecycle calls get typed errors", func(t *testing.T) {
		if _, err := group.CreateSandbox(ctx, "it-first-1", sdk.SandboxOptions{}); !errors.Is(err, sdk.ErrAlreadyExists) {
			t.Errorf("create a taken id: got %v, want ErrAlreadyExists", err)
		}
		if err := group.Attach("it-no-such").Start(ctx); !errors.Is(err, sdk.ErrNotFound) {
			t.Errorf("start a missing sandbox: got %v, want ErrNotFound", err)
		}
		if _, err := group.CreateSandbox(ctx, "bad id!", sdk.SandboxOptions{}); !errors.Is(err, sdk.ErrBadRequest) {
			t.Errorf("create a bad id: got %v, want ErrBadRequest", err)
		}
	})

	t.Run("end removes the sandbox and its container", func(t *testing.T) {
		if err := sb.End(ctx); err != nil {
			t.Fatal(err)
		}
		_, err := sb.SendActions(ctx2s(t), schemas.Actions{{Tool: "terminal_tools.run", Args: json.RawMessage(`{"command":"true"}`)}})
		if !errors.Is(err, sdk.ErrNotFound) {
			t.Fatalf("send to an ended sandbox: got %v, want ErrNotFound", err)
		}
		if n := groupContainers(t, "it-first"); n != 0 {
			t.Fatalf("got %d containers left for the group, want 0", n)
		}
	})
}

// ctx2s is a short deadline for calls expected to fail by timing out.
func ctx2s(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	t.Cleanup(cancel)
	return ctx
}

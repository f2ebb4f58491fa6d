package integration

import (
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/internal/natstest"
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
	require.Equal(t, schemas.StateRunning, st.State, "status %+v", st)
	require.True(t, strings.HasPrefix(st.Image, "sandox/sandbox-tools:"), "image %q, want a tools image", st.Image)

	t.Run("sync batch keeps order across built-in and user tools", func(t *testing.T) {
		obs := send(t, sb, `{
			"filesystem_tools.write_file": {"description": "write", "args": {"path": "a.txt", "content": "one two three\n"}},
			"first_tools.greet": {"description": "user tool", "args": {"name": "Ada", "excited": true}},
			"terminal_tools.run": {"description": "shell", "args": {"command": "cat a.txt; id -u; echo $PWD"}},
			"addUse": {"description": "bare name with Use", "args": {"a": 2, "b": 40}}
		}`)
		require.Len(t, obs, 4, "observations, want 4")
		wantTools := []string{"filesystem_tools.write_file", "first_tools.greet", "terminal_tools.run", "first_tools.add"}
		for i, w := range wantTools {
			mustOK(t, obs[i])
			assert.Equal(t, w, obs[i].Tool, "observation %d: tool", i)
		}
		assert.Equal(t, "hello Ada!\n", obs[1].Stdout, "greet stdout")
		assert.Contains(t, obs[1].Stderr, "to stderr", "greet stderr")
		assert.Equal(t, `{"greeted":"Ada"}`, string(obs[1].Return), "greet return value")
		out := obs[2].Stdout
		assert.Contains(t, out, "one two three", "shell output: want the file written earlier")
		assert.Contains(t, out, "10001", "shell output: want uid 10001")
		assert.Contains(t, out, "/workspace", "shell output: want the working directory")
		if assert.NotNil(t, obs[2].ExitCode, "exit code") {
			assert.Equal(t, 0, *obs[2].ExitCode, "exit code")
		}
		assert.Equal(t, "42", string(obs[3].Return), "add return")
	})

	t.Run("the sandbox describes its built-in and user tools", func(t *testing.T) {
		descs, err := sb.Tools(ctx)
		require.NoError(t, err)
		byName := map[string]schemas.ToolDescription{}
		for _, d := range descs {
			byName[d.Name] = d
		}
		for name, source := range map[string]string{
			"filesystem_tools.read_file": "builtin", "terminal_tools.run": "builtin",
			"first_tools.greet": "python", "first_tools.add": "python",
		} {
			d, ok := byName[name]
			if !assert.True(t, ok, "%s: want it described", name) {
				continue
			}
			assert.Equal(t, source, d.Source, name)
			assert.NotEmpty(t, d.Description, name)
			assert.True(t, json.Valid(d.Parameters), "%s: want a parameters schema", name)
		}
		p := string(byName["first_tools.add"].Parameters)
		assert.Contains(t, p, `"integer"`, "parameters, want integer a and b required (from the signature)")
		assert.Contains(t, p, `"required"`, "parameters, want integer a and b required (from the signature)")
	})

	t.Run("async batch through a future", func(t *testing.T) {
		f, err := sb.SendActionsAsync(ctx, schemas.Actions{
			{Tool: "terminal_tools.run", Args: json.RawMessage(`{"command": "sleep 1; echo later"}`)},
		})
		require.NoError(t, err)
		_, done, _ := f.Poll()
		require.False(t, done, "future finished at once, want it pending while the command sleeps")
		obs, err := f.Wait(ctx)
		require.NoError(t, err)
		require.Len(t, obs, 1, "want the command's output")
		require.Contains(t, obs[0].Stdout, "later", "%+v, want the command's output", obs)
		// The observations are in the audit stream under the batch id.
		js, _ := jetstream.New(env.nc)
		stream, err := js.Stream(ctx, schemas.EventStream)
		require.NoError(t, err)
		// The stream stores what it captures apart from the delivery to the
		// SDK, so the record may land a moment after the answer.
		var m *jetstream.RawStreamMsg
		require.Eventually(t, func() bool {
			m, err = stream.GetLastMsgForSubject(ctx, schemas.ObservationSubject(sb.ID(), f.BatchID()))
			return err == nil
		}, 5*time.Second, 20*time.Millisecond, "observations of batch %s not in %s", f.BatchID(), schemas.EventStream)
		require.Contains(t, string(m.Data), "later", "audit record: want the observations")
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
			if assert.NotNil(t, obs[i].Error, "observation %d (%s)", i, obs[i].Tool) {
				assert.Equal(t, code, obs[i].Error.Code, "observation %d (%s)", i, obs[i].Tool)
			}
		}
		// Malformed JSON, straight to the executor (the SDK would refuse it).
		reply, err := env.nc.Request(schemas.ActionsSubject(sb.ID()), []byte(`{"terminal_tools.run": `), 10*time.Second)
		require.NoError(t, err)
		var res schemas.BatchResult
		require.NoError(t, json.Unmarshal(reply.Data, &res), "reply %s", reply.Data)
		require.NotNil(t, res.Error, "reply %s, want a bad_request batch error", reply.Data)
		require.Equal(t, schemas.CodeBadRequest, res.Error.Code, "reply %s", reply.Data)
		_, err = sb.SendActionsJSON(ctx, []byte(`[1,2`))
		require.ErrorIs(t, err, sdk.ErrBadRequest, "from the SDK")
		obs = send(t, sb, `{"first_tools.add": {"args": {"a": 1, "b": 1}}}`)
		mustOK(t, obs[0])
		require.Equal(t, "2", string(obs[0].Return), "the sandbox must keep working")
	})

	t.Run("a second sandbox with the same tool set reuses the image", func(t *testing.T) {
		sb2, err := group.CreateSandbox(ctx, "it-first-2", sdk.SandboxOptions{})
		require.NoError(t, err)
		st2 := sb2.Status()
		require.True(t, st2.ImageReused, "want the image reused")
		require.Equal(t, st.Image, st2.Image, "want the image reused")
		require.NoError(t, sb2.End(ctx))
	})

	t.Run("the NATS CLI injects a batch by hand", func(t *testing.T) {
		natsCLI := natstest.CLI(t)
		out, err := exec.CommandContext(ctx, natsCLI, "--server", env.url, "--creds", credsFile(t, auth.RoleClient), "request", "--timeout", "20s",
			schemas.ActionsSubject(sb.ID()), `{"terminal_tools.run": {"description": "by hand", "args": {"command": "echo injected"}}}`).CombinedOutput()
		require.NoError(t, err, "nats request: %s", out)
		require.Contains(t, string(out), `"stdout":"injected`, "want the observation printed")
	})

	t.Run("wrong lifecycle calls get typed errors", func(t *testing.T) {
		_, err := group.CreateSandbox(ctx, "it-first-1", sdk.SandboxOptions{})
		assert.ErrorIs(t, err, sdk.ErrAlreadyExists, "create a taken id")
		assert.ErrorIs(t, group.Attach("it-no-such").Start(ctx), sdk.ErrNotFound, "start a missing sandbox")
		_, err = group.CreateSandbox(ctx, "bad id!", sdk.SandboxOptions{})
		assert.ErrorIs(t, err, sdk.ErrBadRequest, "create a bad id")
	})

	t.Run("end removes the sandbox and its container", func(t *testing.T) {
		require.NoError(t, sb.End(ctx))
		_, err := sb.SendActions(ctx2s(t), schemas.Actions{{Tool: "terminal_tools.run", Args: json.RawMessage(`{"command":"true"}`)}})
		require.ErrorIs(t, err, sdk.ErrNotFound, "send to an ended sandbox")
		require.Equal(t, 0, groupContainers(t, "it-first"), "containers left for the group")
	})
}

// ctx2s is a short deadline for calls expected to fail by timing out.
func ctx2s(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	t.Cleanup(cancel)
	return ctx
}

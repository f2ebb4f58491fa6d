package mcp_test

import (
	"encoding/json"
	"testing"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/sdk"
	"github.com/sandox/sandox/services/mcp"
)

// TestPauseAndForkToolsOffered lists the tools of a server with
// Options.Checkpoints and Options.Pause: beside the sandbox's own tools,
// the checkpoint tools, sandox_fork (with its arguments) and
// sandox_pause and sandox_resume; without the options none of them.
func TestPauseAndForkToolsOffered(t *testing.T) {
	sb := attach(t, "sb-pausefork")
	own := []string{mcp.ToolCheckpoint, mcp.ToolListCheckpoints, mcp.ToolDiffCheckpoints, mcp.ToolRollback, mcp.ToolFork, mcp.ToolPause, mcp.ToolResume}
	tests := []struct {
		name string
		opts mcp.Options
		want []string
	}{
		{name: "both", opts: mcp.Options{Checkpoints: true, Pause: true}, want: own},
		{name: "pause only", opts: mcp.Options{Pause: true}, want: []string{mcp.ToolPause, mcp.ToolResume}},
		{name: "checkpoints only", opts: mcp.Options{Checkpoints: true}, want: own[:5]},
		{name: "neither", opts: mcp.Options{}, want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, err := mcp.NewServer(t.Context(), sb, tt.opts)
			require.NoError(t, err)
			res, err := connectInMemory(t, srv).ListTools(t.Context(), nil)
			require.NoError(t, err)
			byName := map[string]*sdkmcp.Tool{}
			var got []string
			for _, tool := range res.Tools {
				byName[tool.Name] = tool
				for _, o := range own {
					if tool.Name == o {
						got = append(got, o)
					}
				}
			}
			assert.ElementsMatch(t, tt.want, got)
			if fork := byName[mcp.ToolFork]; fork != nil {
				schema, err := json.Marshal(fork.InputSchema)
				require.NoError(t, err)
				var s struct {
					Properties map[string]json.RawMessage `json:"properties"`
					Required   []string                   `json:"required"`
				}
				require.NoError(t, json.Unmarshal(schema, &s))
				assert.Contains(t, s.Properties, "count")
				assert.Contains(t, s.Properties, "ids")
				assert.Equal(t, []string{"checkpoint"}, s.Required)
			}
		})
	}
}

// TestForkArgumentsRefused: a fork the server can tell is wrong is a
// failed call that names the fault and made no sandbox.
func TestForkArgumentsRefused(t *testing.T) {
	sb := attach(t, "sb-forkargs")
	srv, err := mcp.NewServer(t.Context(), sb, mcp.Options{Checkpoints: true})
	require.NoError(t, err)
	cs := connectInMemory(t, srv)
	tests := []struct {
		name string
		args map[string]any
		want string
	}{
		{name: "empty checkpoint", args: map[string]any{"checkpoint": "", "count": 2}, want: "checkpoint: want the id or name"},
		{name: "count too high", args: map[string]any{"checkpoint": "c", "count": mcp.MaxForks + 1}, want: "count 17: want 1 to 16"},
		{name: "negative count", args: map[string]any{"checkpoint": "c", "count": -1}, want: "count -1"},
		{name: "bad id", args: map[string]any{"checkpoint": "c", "ids": []string{"a.b"}}, want: `sandbox id "a.b"`},
		{name: "id twice", args: map[string]any{"checkpoint": "c", "ids": []string{"x", "x"}}, want: "sandbox id x given twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := cs.CallTool(t.Context(), &sdkmcp.CallToolParams{Name: mcp.ToolFork, Arguments: tt.args})
			require.NoError(t, err)
			assert.True(t, res.IsError)
			assert.Contains(t, text(t, res), "fork of sandbox sb-forkargs: ")
			assert.Contains(t, text(t, res), tt.want)
			assert.Equal(t, map[string]any{"ids": []any{}}, structured(t, res))
		})
	}
}

// TestPauseWithoutOrchestratorIsAFailedCall: with no orchestrator to
// answer (the sandbox is a bare executor), sandox_pause and
// sandox_resume are failed calls naming the sandbox, and the sandbox's
// tools still run.
func TestPauseWithoutOrchestratorIsAFailedCall(t *testing.T) {
	sb := attach(t, "sb-pausenone")
	srv, err := mcp.NewServer(t.Context(), sb, mcp.Options{Pause: true})
	require.NoError(t, err)
	cs := connectInMemory(t, srv)
	for _, tool := range []string{mcp.ToolPause, mcp.ToolResume} {
		res, err := cs.CallTool(t.Context(), &sdkmcp.CallToolParams{Name: tool, Arguments: map[string]any{}})
		require.NoError(t, err)
		assert.True(t, res.IsError, "%s: %s", tool, text(t, res))
		assert.Contains(t, text(t, res), "sandbox sb-pausenone")
	}
	res, err := cs.CallTool(t.Context(), &sdkmcp.CallToolParams{Name: sdk.ModelToolName("user_tools.shout"), Arguments: map[string]any{"text": "up"}})
	require.NoError(t, err)
	assert.False(t, res.IsError, text(t, res))
}

// TestNewServerRefusesWhatTheSandboxCannotDo: a sandbox that has only
// mcp.Sandbox's methods cannot be served with Options.Pause or
// Options.Checkpoints.
func TestNewServerRefusesWhatTheSandboxCannotDo(t *testing.T) {
	bare := struct{ mcp.Sandbox }{attach(t, "sb-bare")}
	for _, o := range []mcp.Options{{Pause: true}, {Checkpoints: true}} {
		_, err := mcp.NewServer(t.Context(), bare, o)
		require.ErrorIs(t, err, sdk.ErrUnsupported)
		assert.Contains(t, err.Error(), "sandbox sb-bare")
	}
}

package mcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/executor/executortest"
	"github.com/sandox/sandox/sdk"
	"github.com/sandox/sandox/services/mcp"
)

// userTools is a user's tool file, run by the real Python tool host.
const userTools = `
def shout(text: str, times: int = 1) -> str:
    """Shout text.

    Args:
        text: what to shout.
        times: how often.
    """
    return " ".join([text.upper()] * times)
`

// attach starts a real executor in-process and returns an SDK handle on
// its sandbox.
func attach(t *testing.T, id string) *sdk.Sandbox {
	t.Helper()
	sb := executortest.Start(t, id, map[string]string{"user_tools.py": userTools})
	g, err := sdk.NewSandboxGroup(sdk.GroupConfig{ID: "g-mcp"}, sdk.WithConn(sb.Conn))
	require.NoError(t, err)
	return g.Attach(sb.ID)
}

// connectInMemory serves srv on an in-memory transport pair and returns a
// real MCP client session on it.
func connectInMemory(t *testing.T, srv *sdkmcp.Server) *sdkmcp.ClientSession {
	t.Helper()
	st, ct := sdkmcp.NewInMemoryTransports()
	ss, err := srv.Connect(t.Context(), st, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ss.Close() })
	return connectClient(t, ct)
}

func connectClient(t *testing.T, tr sdkmcp.Transport) *sdkmcp.ClientSession {
	t.Helper()
	c := sdkmcp.NewClient(&sdkmcp.Implementation{Name: "test-client", Version: "v0"}, nil)
	cs, err := c.Connect(t.Context(), tr, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func text(t *testing.T, res *sdkmcp.CallToolResult) string {
	t.Helper()
	require.Len(t, res.Content, 1)
	tc, ok := res.Content[0].(*sdkmcp.TextContent)
	require.True(t, ok, "got content %T, want text", res.Content[0])
	return tc.Text
}

// structured decodes the structured content into an observation.
func structured(t *testing.T, res *sdkmcp.CallToolResult) map[string]any {
	t.Helper()
	data, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(data, &m))
	return m
}

func TestListToolsOffersBuiltinAndUserTools(t *testing.T) {
	sb := attach(t, "sb-list")
	descs, err := sb.Tools(t.Context())
	require.NoError(t, err)
	srv, err := mcp.NewServer(t.Context(), sb, mcp.Options{})
	require.NoError(t, err)
	cs := connectInMemory(t, srv)

	res, err := cs.ListTools(t.Context(), nil)
	require.NoError(t, err)
	require.Len(t, res.Tools, len(descs))
	byName := map[string]*sdkmcp.Tool{}
	for _, tool := range res.Tools {
		byName[tool.Name] = tool
	}
	tests := []struct {
		name, tool, wantDoc, wantArg string
	}{
		{name: "built-in", tool: "filesystem_tools.read_file", wantDoc: "", wantArg: "path"},
		{name: "user's function", tool: "user_tools.shout", wantDoc: "Shout text.", wantArg: "times"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool := byName[sdk.ModelToolName(tt.tool)]
			require.NotNil(t, tool, "tool %s not listed", tt.tool)
			assert.NotEmpty(t, tool.Description)
			assert.Contains(t, tool.Description, tt.wantDoc)
			schema, err := json.Marshal(tool.InputSchema)
			require.NoError(t, err)
			var s struct {
				Type       string                     `json:"type"`
				Properties map[string]json.RawMessage `json:"properties"`
			}
			require.NoError(t, json.Unmarshal(schema, &s))
			assert.Equal(t, "object", s.Type)
			assert.Contains(t, s.Properties, tt.wantArg)
		})
	}
}

func TestCallToolRunsOneActionBatch(t *testing.T) {
	sb := attach(t, "sb-call")
	srv, err := mcp.NewServer(t.Context(), sb, mcp.Options{})
	require.NoError(t, err)
	cs := connectInMemory(t, srv)

	tests := []struct {
		name        string
		tool        string
		args        map[string]any
		wantError   bool
		wantText    string
		wantStill   bool
		wantReturn  string
		wantErrCode string
	}{
		{name: "built-in writes", tool: "filesystem_tools.write_file", args: map[string]any{"path": "n.txt", "content": "hello mcp\n"}},
		{name: "built-in reads", tool: "filesystem_tools.read_file", args: map[string]any{"path": "n.txt"}, wantText: "hello mcp"},
		{name: "user tool returns", tool: "user_tools.shout", args: map[string]any{"text": "hi", "times": 2}, wantText: `return: "HI HI"`, wantReturn: `"HI HI"`},
		{name: "terminal stdout", tool: "terminal_tools.run", args: map[string]any{"command": "echo out; echo err >&2"}, wantText: "out"},
		{name: "terminal still running", tool: "terminal_tools.run", args: map[string]any{"command": "echo started; sleep 30", "timeout_seconds": 1}, wantText: "terminal_still_running", wantStill: true},
		{name: "job starts", tool: "terminal_tools.start_job", args: map[string]any{"command": "sleep 1; echo from job; exit 2", "job_id": "mcp-job"}, wantText: "started job mcp-job", wantStill: true},
		{name: "job output after its end", tool: "terminal_tools.job_output", args: map[string]any{"job_id": "mcp-job", "wait_seconds": 60}, wantText: "from job"},
		{name: "error observation", tool: "filesystem_tools.read_file", args: map[string]any{"path": "missing.txt"}, wantError: true, wantText: "missing.txt"},
		{name: "invalid arguments", tool: "filesystem_tools.read_file", args: map[string]any{"path": 7}, wantError: true, wantErrCode: "invalid_args"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := cs.CallTool(t.Context(), &sdkmcp.CallToolParams{Name: sdk.ModelToolName(tt.tool), Arguments: tt.args})
			require.NoError(t, err)
			got := text(t, res)
			assert.Equal(t, tt.wantError, res.IsError, "text: %s", got)
			assert.Contains(t, got, tt.wantText)
			obs := structured(t, res)
			assert.Equal(t, tt.tool, obs["tool"])
			assert.Equal(t, tt.wantStill, obs["terminal_still_running"])
			if tt.wantReturn != "" {
				ret, err := json.Marshal(obs["return"])
				require.NoError(t, err)
				assert.JSONEq(t, tt.wantReturn, string(ret))
			}
			if tt.wantError {
				require.IsType(t, map[string]any{}, obs["error"])
				assert.NotEmpty(t, obs["error"].(map[string]any)["code"])
			}
			if tt.wantErrCode != "" {
				assert.Equal(t, tt.wantErrCode, obs["error"].(map[string]any)["code"])
			}
		})
	}
	// Interrupt the command left running, so the session closes at once.
	_, err = cs.CallTool(t.Context(), &sdkmcp.CallToolParams{Name: "terminal_tools__interrupt", Arguments: map[string]any{"force": true}})
	require.NoError(t, err)
}

func TestToolNames(t *testing.T) {
	sb := attach(t, "sb-names")
	tests := []struct {
		name       string
		dotted     bool
		wantTool   string
		absentTool string
	}{
		{name: "model names by default", wantTool: "user_tools__shout", absentTool: "user_tools.shout"},
		{name: "dotted names on request", dotted: true, wantTool: "user_tools.shout", absentTool: "user_tools__shout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, err := mcp.NewServer(t.Context(), sb, mcp.Options{DottedNames: tt.dotted})
			require.NoError(t, err)
			cs := connectInMemory(t, srv)
			list, err := cs.ListTools(t.Context(), nil)
			require.NoError(t, err)
			names := map[string]bool{}
			for _, tool := range list.Tools {
				names[tool.Name] = true
				if !tt.dotted {
					assert.Regexp(t, `^[a-zA-Z0-9_-]{1,64}$`, tool.Name)
				}
			}
			assert.True(t, names[tt.wantTool])
			assert.False(t, names[tt.absentTool])
			res, err := cs.CallTool(t.Context(), &sdkmcp.CallToolParams{Name: tt.wantTool, Arguments: map[string]any{"text": "x"}})
			require.NoError(t, err)
			assert.Contains(t, text(t, res), `"X"`)
			assert.Equal(t, "user_tools.shout", structured(t, res)["tool"])
		})
	}
}

func TestCallUnknownToolIsAProtocolError(t *testing.T) {
	sb := attach(t, "sb-unknown")
	srv, err := mcp.NewServer(t.Context(), sb, mcp.Options{})
	require.NoError(t, err)
	cs := connectInMemory(t, srv)
	_, err = cs.CallTool(t.Context(), &sdkmcp.CallToolParams{Name: "nope.nothing"})
	assert.Error(t, err)
}

func TestStreamableHTTPOnLoopback(t *testing.T) {
	sb := attach(t, "sb-http")
	srv, err := mcp.NewServer(t.Context(), sb, mcp.Options{})
	require.NoError(t, err)
	h := sdkmcp.NewStreamableHTTPHandler(func(*http.Request) *sdkmcp.Server { return srv }, nil)
	hs := httptest.NewServer(h) // listens on 127.0.0.1
	t.Cleanup(hs.Close)
	require.True(t, strings.HasPrefix(hs.URL, "http://127.0.0.1:"), hs.URL)

	cs := connectClient(t, &sdkmcp.StreamableClientTransport{Endpoint: hs.URL})
	list, err := cs.ListTools(t.Context(), nil)
	require.NoError(t, err)
	assert.NotEmpty(t, list.Tools)

	res, err := cs.CallTool(t.Context(), &sdkmcp.CallToolParams{Name: "user_tools__shout", Arguments: map[string]any{"text": "over http"}})
	require.NoError(t, err)
	assert.False(t, res.IsError)
	assert.Contains(t, text(t, res), "OVER HTTP")

	res, err = cs.CallTool(t.Context(), &sdkmcp.CallToolParams{Name: "terminal_tools__run", Arguments: map[string]any{"command": "pwd"}})
	require.NoError(t, err)
	assert.False(t, res.IsError)
	assert.Contains(t, text(t, res), "/")
}

func TestNewServerFailsForAGoneSandbox(t *testing.T) {
	sb := executortest.Start(t, "sb-real", nil)
	g, err := sdk.NewSandboxGroup(sdk.GroupConfig{ID: "g-mcp"}, sdk.WithConn(sb.Conn))
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(t.Context(), 500*1e6)
	defer cancel()
	_, err = mcp.NewServer(ctx, g.Attach("sb-nobody"), mcp.Options{})
	assert.ErrorIs(t, err, sdk.ErrSandboxGone)
}

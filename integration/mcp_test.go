package integration

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/sdk"
	"github.com/sandox/sandox/services/mcp"
)

const mcpTools = `
def greet(name: str) -> str:
    """Greet someone by name."""
    return f"hello {name}"
`

// mcpText returns the one text block of a tool result.
func mcpText(t *testing.T, res *sdkmcp.CallToolResult) string {
	t.Helper()
	require.Len(t, res.Content, 1)
	tc, ok := res.Content[0].(*sdkmcp.TextContent)
	require.True(t, ok, "got content %T, want text", res.Content[0])
	return tc.Text
}

// TestMCPServesARealSandbox lists and calls a container sandbox's tools
// through a real MCP client: attached to an existing sandbox, and with a
// sandbox created for the session and ended when it closes.
func TestMCPServesARealSandbox(t *testing.T) {
	tools := writeFile(t, "mcp_tools.py", mcpTools)
	g := newGroup(t, sdk.GroupConfig{ID: "it-mcp", Tools: []string{tools}})
	client := sdkmcp.NewClient(&sdkmcp.Implementation{Name: "it-client", Version: "v0"}, nil)

	t.Run("attached, in-memory transport", func(t *testing.T) {
		sb := startSandbox(t, g, "it-mcp-attached", sdk.SandboxOptions{})
		srv, err := mcp.NewServer(t.Context(), sb, mcp.Options{})
		require.NoError(t, err)
		st, ct := sdkmcp.NewInMemoryTransports()
		ss, err := srv.Connect(t.Context(), st, nil)
		require.NoError(t, err)
		defer ss.Close()
		cs, err := client.Connect(t.Context(), ct, nil)
		require.NoError(t, err)
		defer cs.Close()

		list, err := cs.ListTools(t.Context(), nil)
		require.NoError(t, err)
		names := map[string]bool{}
		for _, tool := range list.Tools {
			names[tool.Name] = true
		}
		assert.True(t, names["filesystem_tools__read_file"], "built-in tool missing")
		assert.True(t, names["mcp_tools__greet"], "user tool missing")

		res, err := cs.CallTool(t.Context(), &sdkmcp.CallToolParams{Name: "terminal_tools__run", Arguments: map[string]any{"command": "cat /etc/os-release | head -1"}})
		require.NoError(t, err)
		assert.False(t, res.IsError, mcpText(t, res))
		assert.Contains(t, mcpText(t, res), "Debian")

		res, err = cs.CallTool(t.Context(), &sdkmcp.CallToolParams{Name: "mcp_tools__greet", Arguments: map[string]any{"name": "container"}})
		require.NoError(t, err)
		assert.False(t, res.IsError, mcpText(t, res))
		assert.Contains(t, mcpText(t, res), `"hello container"`)

		res, err = cs.CallTool(t.Context(), &sdkmcp.CallToolParams{Name: "filesystem_tools__read_file", Arguments: map[string]any{"path": "nothing-here.txt"}})
		require.NoError(t, err)
		assert.True(t, res.IsError, mcpText(t, res))
	})

	t.Run("a sandbox per HTTP session", func(t *testing.T) {
		before := groupContainers(t, "it-mcp")
		ps := mcp.NewPerSession(mcp.GroupOpener{Group: g, Prefix: "it-mcp-s-"}, mcp.Options{})
		t.Cleanup(func() { assert.NoError(t, ps.Close(context.Background())) })
		hs := httptest.NewServer(ps.Handler(nil))
		t.Cleanup(hs.Close)

		cs, err := client.Connect(t.Context(), &sdkmcp.StreamableClientTransport{Endpoint: hs.URL}, nil)
		require.NoError(t, err)
		assert.Equal(t, 1, ps.Open())
		assert.Equal(t, before+1, groupContainers(t, "it-mcp"), "no container for the session's sandbox")

		res, err := cs.CallTool(t.Context(), &sdkmcp.CallToolParams{Name: "mcp_tools__greet", Arguments: map[string]any{"name": "session"}})
		require.NoError(t, err)
		assert.Contains(t, mcpText(t, res), `"hello session"`)

		require.NoError(t, cs.Close())
		assert.Eventually(t, func() bool { return ps.Open() == 0 }, 60*time.Second, 100*time.Millisecond, "the session's sandbox was not ended")
		assert.Equal(t, before, groupContainers(t, "it-mcp"), "the session's container is still there")
	})
}

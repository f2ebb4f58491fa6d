package main

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/executor/executortest"
	"github.com/sandox/sandox/sdk"
	"github.com/sandox/sandox/services/mcp"
)

// runMainEnv makes the test binary run the CLI's main instead of the tests,
// so a test can start `sandox ...` as a child process without building it.
const runMainEnv = "SANDOX_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// sandoxCommand returns `sandox args...` as a child process.
func sandoxCommand(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), os.Args[0], args...)
	cmd.Env = append(os.Environ(), runMainEnv+"=1")
	if testing.Verbose() {
		cmd.Stderr = os.Stderr // the child's logs
	}
	return cmd
}

const stdioTools = `
def twice(x: int) -> int:
    """Double x."""
    return 2 * x


def refuse(why: str) -> None:
    """Always fails."""
    raise ValueError(why)
`

// TestMCPOverStdio runs `sandox mcp --sandbox ID` as a child process and
// talks to it over its stdin and stdout with the Go SDK's client.
func TestMCPOverStdio(t *testing.T) {
	sb := executortest.Start(t, "sb-stdio", map[string]string{"user_tools.py": stdioTools})
	cmd := sandoxCommand(t, "mcp", "--sandbox", sb.ID, "--nats", sb.URL)

	c := sdkmcp.NewClient(&sdkmcp.Implementation{Name: "stdio-test", Version: "v0"}, nil)
	cs, err := c.Connect(t.Context(), &sdkmcp.CommandTransport{Command: cmd}, nil)
	require.NoError(t, err)
	defer cs.Close()

	list, err := cs.ListTools(t.Context(), nil)
	require.NoError(t, err)
	names := map[string]bool{}
	for _, tool := range list.Tools {
		names[tool.Name] = true
	}
	assert.True(t, names["terminal_tools__run"], "built-in tool missing")
	assert.True(t, names["user_tools__twice"], "user tool missing")

	tests := []struct {
		name, tool string
		args       map[string]any
		want       string
		wantError  bool
	}{
		{name: "built-in", tool: "terminal_tools__run", args: map[string]any{"command": "echo from-stdio"}, want: "from-stdio"},
		{name: "user tool", tool: "user_tools__twice", args: map[string]any{"x": 21}, want: "return: 42"},
		{name: "error observation", tool: "user_tools__refuse", args: map[string]any{"why": "no way"}, want: "no way", wantError: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := cs.CallTool(t.Context(), &sdkmcp.CallToolParams{Name: tt.tool, Arguments: tt.args})
			require.NoError(t, err)
			require.Len(t, res.Content, 1)
			text := res.Content[0].(*sdkmcp.TextContent).Text
			assert.Equal(t, tt.wantError, res.IsError, text)
			assert.Contains(t, text, tt.want)
		})
	}
}

// bearer adds a bearer token to every request.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// TestServeHTTPServesUntilCancelled serves a sandbox over streamable HTTP
// on loopback the way `sandox mcp --http` does, behind the token made on
// first use, and shuts down cleanly.
func TestServeHTTPServesUntilCancelled(t *testing.T) {
	sb := executortest.Start(t, "sb-http-cli", nil)
	g, err := sdk.NewSandboxGroup(sdk.GroupConfig{ID: cliGroup}, sdk.WithConn(sb.Conn))
	require.NoError(t, err)
	srv, err := mcp.NewServer(t.Context(), g.Attach(sb.ID), mcp.Options{})
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	tokenFile := filepath.Join(t.TempDir(), "mcp.token")
	guard, err := httpGuard(ln.Addr().String(), tokenFile, false, "", slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	token, err := os.ReadFile(tokenFile)
	require.NoError(t, err, "the token is made on first use")
	h := sdkmcp.NewStreamableHTTPHandler(func(*http.Request) *sdkmcp.Server { return srv }, nil)
	go func() { done <- serveHTTP(ctx, ln, guard(h), slog.New(slog.DiscardHandler)) }()

	endpoint := "http://" + ln.Addr().String() + "/"
	c := sdkmcp.NewClient(&sdkmcp.Implementation{Name: "http-test", Version: "v0"}, nil)
	_, err = c.Connect(t.Context(), &sdkmcp.StreamableClientTransport{Endpoint: endpoint}, nil)
	require.Error(t, err, "no token, no session")
	assert.Contains(t, err.Error(), "Unauthorized")
	cs, err := c.Connect(t.Context(), &sdkmcp.StreamableClientTransport{
		Endpoint:   endpoint,
		HTTPClient: &http.Client{Transport: bearer{strings.TrimSpace(string(token))}},
	}, nil)
	require.NoError(t, err)
	res, err := cs.CallTool(t.Context(), &sdkmcp.CallToolParams{Name: "terminal_tools__run", Arguments: map[string]any{"command": "echo over-http"}})
	require.NoError(t, err)
	require.Len(t, res.Content, 1)
	assert.Contains(t, res.Content[0].(*sdkmcp.TextContent).Text, "over-http")
	require.NoError(t, cs.Close())

	cancel()
	select {
	case err := <-done:
		assert.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("serveHTTP did not return after its context ended")
	}
}

func TestHTTPGuard(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	_, err := httpGuard("0.0.0.0:8931", "", true, "", log)
	assert.ErrorContains(t, err, "only a loopback address may be served without a token")
	for _, addr := range []string{"127.0.0.1:8931", "[::1]:8931", "localhost:8931"} {
		_, err := httpGuard(addr, "", true, "", log)
		assert.NoError(t, err, addr)
	}

	guard, err := httpGuard("0.0.0.0:8931", filepath.Join(t.TempDir(), "unused"), false, "from-env", log)
	require.NoError(t, err)
	srv := httptest.NewServer(guard(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {})))
	t.Cleanup(srv.Close)
	for token, status := range map[string]int{"from-env": http.StatusOK, "other": http.StatusUnauthorized} {
		req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, status, resp.StatusCode, token)
	}
}

func TestMCPRefusesBadFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{name: "neither sandbox nor group", args: nil},
		{name: "both", args: []string{"--sandbox", "a", "--group-config", "b.json"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Error(t, serveMCP(t.Context(), tt.args))
		})
	}
}

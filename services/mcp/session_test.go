package mcp_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/executor/executortest"
	"github.com/sandox/sandox/sdk"
	"github.com/sandox/sandox/services/mcp"
)

// fakeOpener opens sandboxes served by real in-process executors; it stands
// in for a group, whose sandboxes need the orchestrator and Docker (the
// integration test covers that path). It records what it opened and ended.
type fakeOpener struct {
	t *testing.T

	mu     sync.Mutex
	opened []string
	ended  []string
}

func (f *fakeOpener) Open(context.Context) (mcp.Sandbox, func(context.Context) error, error) {
	f.mu.Lock()
	id := fmt.Sprintf("sb-session-%d", len(f.opened))
	f.opened = append(f.opened, id)
	f.mu.Unlock()
	sb := executortest.Start(f.t, id, map[string]string{"user_tools.py": userTools})
	g, err := sdk.NewSandboxGroup(sdk.GroupConfig{ID: "g-session"}, sdk.WithConn(sb.Conn))
	if err != nil {
		return nil, nil, err
	}
	end := func(context.Context) error {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.ended = append(f.ended, id)
		return nil
	}
	return g.Attach(id), end, nil
}

func (f *fakeOpener) counts() (opened, ended int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.opened), len(f.ended)
}

func TestPerSessionOverHTTPEndsTheSandboxWithTheSession(t *testing.T) {
	open := &fakeOpener{t: t}
	ps := mcp.NewPerSession(open, mcp.Options{})
	hs := httptest.NewServer(ps.Handler(nil))
	t.Cleanup(hs.Close)

	c := sdkmcp.NewClient(&sdkmcp.Implementation{Name: "test-client", Version: "v0"}, nil)
	first, err := c.Connect(t.Context(), &sdkmcp.StreamableClientTransport{Endpoint: hs.URL}, nil)
	require.NoError(t, err)
	second, err := c.Connect(t.Context(), &sdkmcp.StreamableClientTransport{Endpoint: hs.URL}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = second.Close() })

	// Each session has its own sandbox: a file written in one is not in the other.
	res, err := first.CallTool(t.Context(), &sdkmcp.CallToolParams{Name: "filesystem_tools__write_file", Arguments: map[string]any{"path": "mine.txt", "content": "1"}})
	require.NoError(t, err)
	require.False(t, res.IsError, text(t, res))
	res, err = second.CallTool(t.Context(), &sdkmcp.CallToolParams{Name: "filesystem_tools__read_file", Arguments: map[string]any{"path": "mine.txt"}})
	require.NoError(t, err)
	assert.True(t, res.IsError, "the second session sees the first one's file: %s", text(t, res))
	res, err = second.CallTool(t.Context(), &sdkmcp.CallToolParams{Name: "user_tools__shout", Arguments: map[string]any{"text": "two"}})
	require.NoError(t, err)
	assert.Contains(t, text(t, res), "TWO")

	opened, ended := open.counts()
	assert.Equal(t, 2, opened)
	assert.Equal(t, 0, ended)
	assert.Equal(t, 2, ps.Open())

	require.NoError(t, first.Close())
	assert.Eventually(t, func() bool { _, e := open.counts(); return e == 1 }, 10*time.Second, 20*time.Millisecond, "closing a session did not end its sandbox")
	assert.Equal(t, 1, ps.Open())

	require.NoError(t, ps.Close(t.Context()))
	_, ended = open.counts()
	assert.Equal(t, 2, ended, "Close did not end the sandbox still open")
	assert.Equal(t, 0, ps.Open())
}

func TestPerSessionRunServesOneSessionThenEnds(t *testing.T) {
	open := &fakeOpener{t: t}
	ps := mcp.NewPerSession(open, mcp.Options{})
	st, ct := sdkmcp.NewInMemoryTransports()
	done := make(chan error, 1)
	go func() { done <- ps.Run(t.Context(), st) }()

	cs := connectClient(t, ct)
	res, err := cs.CallTool(t.Context(), &sdkmcp.CallToolParams{Name: "terminal_tools__run", Arguments: map[string]any{"command": "echo per-session"}})
	require.NoError(t, err)
	assert.Contains(t, text(t, res), "per-session")
	require.NoError(t, cs.Close())
	select {
	case err := <-done:
		assert.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after the client closed")
	}
	opened, ended := open.counts()
	assert.Equal(t, 1, opened)
	assert.Equal(t, 1, ended)
	assert.NoError(t, ps.Close(t.Context()))
}

func TestPerSessionRefusesAfterClose(t *testing.T) {
	open := &fakeOpener{t: t}
	ps := mcp.NewPerSession(open, mcp.Options{})
	require.NoError(t, ps.Close(t.Context()))
	st, _ := sdkmcp.NewInMemoryTransports()
	assert.ErrorIs(t, ps.Run(t.Context(), st), mcp.ErrClosed)
	opened, _ := open.counts()
	assert.Equal(t, 0, opened)
}

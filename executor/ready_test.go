package executor

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/natsd"
)

// TestServeAnnouncesReadiness checks that Serve publishes its modules on
// the ready subject once, and that by then it serves actions.
func TestServeAnnouncesReadiness(t *testing.T) {
	cfg := natsd.DefaultConfig()
	cfg.Port, cfg.StoreDir = -1, t.TempDir()
	ns, err := natsd.Start(cfg)
	require.NoError(t, err)
	t.Cleanup(ns.Shutdown)
	nc, err := nats.Connect(ns.ClientURL())
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	ready, err := nc.SubscribeSync(schemas.ReadySubject("sb-1"))
	require.NoError(t, err)
	require.NoError(t, nc.Flush())

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	srv := NewServer(nc, testRegistry(new([]string), new(sync.Mutex)), Config{SandboxID: "sb-1"}, slog.New(slog.DiscardHandler))
	go func() { done <- srv.Serve(ctx) }()
	t.Cleanup(func() { cancel(); assert.NoError(t, <-done) })

	m, err := ready.NextMsg(5 * time.Second)
	require.NoError(t, err, "the announcement")
	var got schemas.ExecutorReady
	require.NoError(t, json.Unmarshal(m.Data, &got))
	assert.Equal(t, []string{"demo_tools", "other_tools"}, got.Modules)
	res := request(t, nc, `{"demo_tools.echo": {"args": {"text": "hi"}}}`, false)
	require.Len(t, res.Observations, 1)
	assert.Equal(t, "hi", res.Observations[0].Stdout)
	_, err = ready.NextMsg(100 * time.Millisecond)
	assert.ErrorIs(t, err, nats.ErrTimeout, "announced once")
}

package orchestrator

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/sandox/sandox/services/orchestrator/runtime"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWorkerWaitsForJetStream starts a worker against a real server whose
// JetStream does not answer yet, as while a cluster elects its leaders:
// with BusWait it waits and starts once JetStream is there; without, it
// fails at once.
func TestWorkerWaitsForJetStream(t *testing.T) {
	ns, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true})
	require.NoError(t, err)
	ns.Start()
	require.True(t, ns.ReadyForConnections(5*time.Second))
	t.Cleanup(func() { ns.Shutdown(); ns.WaitForShutdown() })
	nc, err := nats.Connect(ns.ClientURL())
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))

	cfg := DefaultConfig()
	cfg.Worker, cfg.DisksDir, cfg.BusWait = "test-worker", "", 0
	_, err = NewWorker(t.Context(), nc, runtime.Engine{}, cfg, quiet)
	require.Error(t, err, "without BusWait a worker gives up on the first try")
	assert.True(t, clusterNotReady(t.Context(), err), "%v: want the error of a JetStream that does not answer", err)

	cfg.BusWait = 30 * time.Second
	began := time.Now()
	go func() {
		time.Sleep(time.Second)
		assert.NoError(t, ns.EnableJetStream(&server.JetStreamConfig{StoreDir: t.TempDir()}))
	}()
	w, err := NewWorker(t.Context(), nc, runtime.Engine{}, cfg, quiet)
	require.NoError(t, err, "the worker waits until JetStream answers")
	assert.NotNil(t, w)
	assert.GreaterOrEqual(t, time.Since(began), time.Second, "it started only once JetStream was enabled")
}

package executor

import (
	"log/slog"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/internal/natstest"
	"github.com/sandox/sandox/internal/poll"
	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/tools"
)

// busExecutor is a real executor of sandbox sb-1 serving one tool family
// over its own NATS connection, made as sandox-executor makes it, on a
// server the test may restart: both connections reconnect for ever, and
// the server's store (Store) outlives a restart.
type busExecutor struct {
	// NS is the NATS server; Store its store directory.
	NS    *server.Server
	Store string
	// Admin is the test's own connection, JS its JetStream.
	Admin *nats.Conn
	JS    jetstream.JetStream
	// Workspace is the executor's workspace directory.
	Workspace string
}

// startBusExecutor creates stream (file storage, two minutes of
// duplicate window) and starts an executor of family, returning once it
// answers pings.
func startBusExecutor(t *testing.T, family, stream, subjects string) *busExecutor {
	t.Helper()
	b := &busExecutor{Store: t.TempDir(), Workspace: t.TempDir()}
	b.NS = natstest.Start(t, natstest.StoreDir(b.Store))
	reconnect := []nats.Option{nats.MaxReconnects(-1), nats.ReconnectWait(50 * time.Millisecond)}
	b.Admin = natstest.Connect(t, b.NS, reconnect...)
	b.JS = natstest.JetStream(t, b.Admin)
	_, err := b.JS.CreateStream(t.Context(), jetstream.StreamConfig{
		Name: stream, Subjects: []string{subjects},
		Storage: jetstream.FileStorage, Duplicates: 2 * time.Minute,
	})
	require.NoError(t, err)

	exec := natstest.Connect(t, b.NS, append(reconnect, nats.CustomInboxPrefix(schemas.SandboxInboxPrefix("sb-1")))...)
	reg, closeTools, err := Tools(t.Context(), tools.Env{
		Executor:  schemas.ExecutorEnv{SandboxID: "sb-1", Workspace: b.Workspace, Families: []string{family}},
		Dir:       tools.NewWorkDir(b.Workspace),
		Publish:   Publisher(func() *nats.Conn { return exec }),
		SandboxID: func() string { return "sb-1" },
		Log:       slog.New(slog.DiscardHandler),
	})
	require.NoError(t, err)
	t.Cleanup(closeTools)
	serve(t, exec, reg, Config{SandboxID: "sb-1"})
	b.waitForPing(t, 5*time.Second, "the executor to answer pings")
	return b
}

// waitForPing waits until the executor answers a ping.
func (b *busExecutor) waitForPing(t *testing.T, within time.Duration, what string) {
	t.Helper()
	poll.Until(t, within, what, func() bool {
		_, err := b.Admin.Request(schemas.PingSubject("sb-1"), nil, 200*time.Millisecond)
		return err == nil
	})
}

// run sends a one-action batch and fails the test unless the action
// succeeded; it returns the action's observation.
func (b *busExecutor) run(t *testing.T, payload string) schemas.Observation {
	t.Helper()
	res := request(t, b.Admin, payload, false)
	require.Len(t, res.Observations, 1)
	require.Nil(t, res.Observations[0].Error, "%+v", res.Observations[0])
	return res.Observations[0]
}

// streamHolds waits until stream holds at least n messages.
func (b *busExecutor) streamHolds(t *testing.T, stream string, n uint64, what string) {
	t.Helper()
	poll.Until(t, 30*time.Second, what, func() bool {
		st, err := b.JS.Stream(t.Context(), stream)
		return err == nil && st.CachedInfo().State.Msgs >= n
	})
}

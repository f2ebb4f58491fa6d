package sdk_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/internal/natstest"
	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/sdk"
	"github.com/sandox/sandox/services/orchestrator"
	"github.com/sandox/sandox/services/orchestrator/runtime"
)

// sandox is a whole sandox in the test's process: an embedded NATS server
// on a free port with a temporary store, a real orchestrator worker, and
// the fake engine whose containers are real executors.
type sandox struct {
	url    string
	engine *fakeEngine
	// nc is the test's own connection, for watching events.
	nc *nats.Conn
}

// startNATS starts an embedded NATS server with JetStream on a free port.
func startNATS(t *testing.T) *server.Server {
	t.Helper()
	return natstest.Start(t)
}

// connect opens a NATS connection that the test closes at its end.
func connect(t *testing.T, url string) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(url)
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	return nc
}

// startSandox starts NATS and one orchestrator worker, configured by tune
// after the defaults, and waits until the worker answers requests.
func startSandox(t *testing.T, tune ...func(*orchestrator.Config)) *sandox {
	t.Helper()
	ns := startNATS(t)
	s := &sandox{url: ns.ClientURL(), nc: connect(t, ns.ClientURL())}
	s.engine = newFakeEngine(t, s.url)

	cfg := orchestrator.DefaultConfig()
	cfg.Worker = "test-worker"
	cfg.DisksDir = ""
	cfg.CredsDir = "" // an open server: sandboxes get no identity
	cfg.ReadyTimeout = 10 * time.Second
	for _, f := range tune {
		f(&cfg)
	}
	w, err := orchestrator.NewWorker(t.Context(), connect(t, s.url), runtime.Engine{Runtime: s.engine}, cfg, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	require.Eventually(t, func() bool {
		_, err := s.nc.Request(schemas.SandboxStatusSubject("probe"), nil, time.Second)
		return !errors.Is(err, nats.ErrNoResponders)
	}, 10*time.Second, 20*time.Millisecond, "the orchestrator does not answer requests")
	return s
}

// newGroup returns a group on s that the test closes at its end.
func (s *sandox) newGroup(t *testing.T, cfg sdk.GroupConfig, opts ...sdk.Option) *sdk.SandboxGroup {
	t.Helper()
	opts = append([]sdk.Option{sdk.WithURL(s.url), sdk.WithCommandTimeout(30 * time.Second), sdk.WithActionTimeout(30 * time.Second)}, opts...)
	g, err := sdk.NewSandboxGroup(cfg, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.Close() })
	return g
}

// startedSandbox starts a group holding one running sandbox.
func (s *sandox) startedSandbox(t *testing.T, group, id string, opts ...sdk.Option) (*sdk.SandboxGroup, *sdk.Sandbox) {
	t.Helper()
	g := s.newGroup(t, sdk.GroupConfig{ID: group, Sandboxes: []sdk.InitialSandbox{{ID: id}}}, opts...)
	require.NoError(t, g.Start(t.Context()))
	sb := g.Sandbox(id)
	require.NotNil(t, sb)
	require.Equal(t, schemas.StateRunning, sb.Status().State)
	return g, sb
}

// events subscribes to a sandbox's events for the rest of the test.
func (s *sandox) events(t *testing.T, sandboxID string) chan *nats.Msg {
	t.Helper()
	ch := make(chan *nats.Msg, 64)
	sub, err := s.nc.ChanSubscribe(schemas.SandboxEventSubject(sandboxID), ch)
	require.NoError(t, err)
	require.NoError(t, s.nc.Flush())
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	return ch
}

// actions parses a payload in the user's JSON form.
func actions(t *testing.T, payload string) schemas.Actions {
	t.Helper()
	a, err := schemas.ParseActions([]byte(payload))
	require.NoError(t, err)
	return a
}

// run is a terminal_tools.run action.
func run(t *testing.T, command string) schemas.Actions {
	t.Helper()
	return actions(t, `{"terminal_tools.run": {"description": "test", "args": {"command": `+quote(command)+`, "timeout_seconds": 60}}}`)
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

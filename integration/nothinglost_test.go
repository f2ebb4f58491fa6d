package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/internal/docker"
	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/sdk"
	"github.com/sandox/sandox/services/auth"
	"github.com/sandox/sandox/services/natsd"
	"github.com/sandox/sandox/services/orchestrator"
	"github.com/sandox/sandox/services/orchestrator/runtime"
)

// durableSystem is a sandox system of its own beside the test system's
// (as shardSystem), whose NATS server and worker a test restarts: the
// server on the same port, store and socket, the worker with the same
// configuration.
type durableSystem struct {
	ncfg natsd.Config
	ns   *server.Server
	wcfg orchestrator.Config

	stopWorker func()
}

func newDurableSystem(t *testing.T, cfg orchestrator.Config) *durableSystem {
	t.Helper()
	sockDir, err := os.MkdirTemp("", "sandox-it-durable")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	require.NoError(t, os.Chmod(sockDir, 0o755))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := ln.Addr().(*net.TCPAddr).Port
	require.NoError(t, ln.Close())
	s := &durableSystem{ncfg: natsd.DefaultConfig()}
	s.ncfg.Host, s.ncfg.Port, s.ncfg.StoreDir, s.ncfg.Auth = "127.0.0.1", port, t.TempDir(), env.auth
	s.ncfg.Socket = filepath.Join(sockDir, "nats.sock")
	s.startNATS(t)
	t.Cleanup(func() { s.ns.Shutdown(); s.ns.WaitForShutdown() })

	cfg.NATSSocket = sockDir
	cfg.CredsDir = t.TempDir()
	require.NoError(t, os.Chmod(cfg.CredsDir, 0o755))
	s.wcfg = cfg
	s.startWorker(t)
	t.Cleanup(func() {
		s.stopWorker()
		ctx := context.Background()
		left, _ := env.docker.List(ctx, runtime.LabelSystem+"="+cfg.System)
		for _, c := range left {
			_ = env.docker.Remove(ctx, c.ID)
			_ = env.docker.RemoveVolume(ctx, runtime.VolumeName(c.Labels[runtime.LabelSandbox]))
		}
	})
	return s
}

func (s *durableSystem) startNATS(t *testing.T) {
	t.Helper()
	ns, err := natsd.Start(s.ncfg)
	require.NoError(t, err)
	s.ns = ns
}

// restartNATS stops the server and starts it again; clients reconnect.
func (s *durableSystem) restartNATS(t *testing.T) {
	t.Helper()
	s.ns.Shutdown()
	s.ns.WaitForShutdown()
	s.startNATS(t)
}

// connect returns a connection of role that reconnects for ever.
func (s *durableSystem) connect(t *testing.T, role auth.Role) *nats.Conn {
	t.Helper()
	creds, err := env.auth.Mint("durable "+string(role), role, "")
	require.NoError(t, err)
	nc, err := nats.Connect(s.ns.ClientURL(), creds.Option(), nats.MaxReconnects(-1), nats.ReconnectWait(100*time.Millisecond))
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	return nc
}

func (s *durableSystem) startWorker(t *testing.T) {
	t.Helper()
	control := s.connect(t, auth.RoleControl)
	w, err := orchestrator.NewWorker(t.Context(), control, docker.NewRuntime(env.docker).Engine(), s.wcfg,
		slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	stopped := false
	s.stopWorker = func() {
		if !stopped {
			stopped = true
			cancel()
			assert.NoError(t, <-done)
			control.Close()
		}
	}
}

// restartWorker stops the worker and starts another with its configuration.
func (s *durableSystem) restartWorker(t *testing.T) {
	t.Helper()
	s.stopWorker()
	s.startWorker(t)
}

// TestNothingIsLost runs a job that prints and makes files under a watch
// in a real sandbox, and mid-job restarts the orchestrator worker, then
// the NATS server, then kills the reading client (closes its connection):
// a new client resumes from the last sequence it saw and gets every byte
// of the job and every event of the watch exactly once, and the job's
// webhook (an HTTP server the test runs, which the worker posts to) gets
// the exit once.
func TestNothingIsLost(t *testing.T) {
	// It restarts a NATS server and a worker of its own system, not the
	// test system's: it runs beside the other parallel tests (doc.go).
	t.Parallel()
	var mu sync.Mutex
	var posts []schemas.JobExit
	hooks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var exit schemas.JobExit
		if json.Unmarshal(body, &exit) == nil {
			mu.Lock()
			posts = append(posts, exit)
			mu.Unlock()
		}
	}))
	t.Cleanup(hooks.Close)

	cfg := env.worker
	cfg.Worker = "it-durable-worker"
	cfg.System = env.network + "-durable"
	cfg.DisksDir = ""
	cfg.WebhookAllow = []string{hooks.URL + "/jobs/"}
	sys := newDurableSystem(t, cfg)

	client := func() (*nats.Conn, *sdk.Sandbox, *sdk.SandboxGroup) {
		nc := sys.connect(t, auth.RoleClient)
		g, err := sdk.NewSandboxGroup(sdk.GroupConfig{ID: "it-durable", ComputeResources: schemas.ComputeResources{Memory: "256MiB"}},
			sdk.WithConn(nc), sdk.WithCommandTimeout(5*time.Minute))
		require.NoError(t, err)
		t.Cleanup(func() { _ = g.Close() })
		return nc, g.Attach("it-durable-a"), g
	}
	nc1, _, g := client()
	require.NoError(t, g.Start(t.Context()))
	ended := false
	t.Cleanup(func() {
		if !ended { // the test failed before it ended the group
			_ = g.End(context.Background())
		}
	})
	sb, err := g.CreateSandbox(t.Context(), "it-durable-a", sdk.SandboxOptions{})
	require.NoError(t, err)
	require.NoError(t, sb.Start(t.Context()))

	w, _, err := sb.Watch(t.Context(), ".", sdk.WatchOptions{ID: "files", Patterns: []string{"*.txt"}})
	require.NoError(t, err)
	const lines = 150
	job, _, err := sb.StartJob(t.Context(),
		fmt.Sprintf(`for i in $(seq 1 %d); do echo "line $i"; echo "err $i" >&2; touch "f$i.txt"; sleep 0.1; done; exit 6`, lines),
		sdk.JobOptions{ID: "durable", Webhook: hooks.URL + "/jobs/durable"})
	require.NoError(t, err)

	var got jobStreams
	restarted := 0
	// The first client reads until the worker and the bus restarted and
	// some more lines came; a read the bus's restart broke resumes, as a
	// client would, from the last sequence seen.
	for reading := true; reading; {
		for ev, err := range job.Output(t.Context(), got.last) {
			if err != nil {
				require.Equal(t, 2, restarted, "only the bus's restart breaks a read: %v", err)
				t.Logf("read broken by the bus's restart after sequence %d: %v", got.last, err)
				break
			}
			got.add(t, ev)
			require.Nil(t, ev.Exit, "the job ended before the client died")
			switch n := strings.Count(got.stdout.String(), "\n"); {
			case n >= 20 && restarted == 0:
				sys.restartWorker(t) // the control plane restarts mid-job
				restarted++
			case n >= 40 && restarted == 1:
				sys.restartNATS(t) // the bus restarts mid-job
				restarted++
			case n >= 60 && restarted == 2:
				reading = false
			}
			if !reading {
				break
			}
		}
	}
	nc1.Close() // the client dies mid-stream
	t.Logf("client died after sequence %d, %d bytes of stdout", got.last, got.stdout.Len())

	_, sb2, g2 := client()
	for ev, err := range sb2.Job("durable").Output(t.Context(), got.last) {
		require.NoError(t, err)
		got.add(t, ev)
	}
	var want, wantErr strings.Builder
	for i := 1; i <= lines; i++ {
		fmt.Fprintf(&want, "line %d\n", i)
		fmt.Fprintf(&wantErr, "err %d\n", i)
	}
	assert.Equal(t, want.String(), got.stdout.String(), "every byte of stdout once")
	assert.Equal(t, wantErr.String(), got.stderr.String(), "every byte of stderr once")
	require.NotNil(t, got.exit)
	assert.Equal(t, 6, got.exit.ExitCode)

	_, err = sb2.AttachWatch(w.ID()).Stop(t.Context())
	require.NoError(t, err)
	created := map[string]int{}
	var n int64
	for ev, err := range sb2.AttachWatch(w.ID()).Events(t.Context(), 0) {
		require.NoError(t, err)
		if ev.Event == nil {
			continue
		}
		require.Equal(t, n+1, ev.Event.N, "an event lost or repeated")
		n = ev.Event.N
		if ev.Event.Kind == schemas.WatchCreate {
			created[ev.Event.Path]++
		}
	}
	for i := 1; i <= lines; i++ {
		assert.Equal(t, 1, created[fmt.Sprintf("f%d.txt", i)], "the create of f%d.txt, once", i)
	}

	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(posts) >= 1
	}, time.Minute, 100*time.Millisecond, "the webhook gets the exit")
	mu.Lock()
	assert.Equal(t, "durable", posts[0].JobID)
	assert.Equal(t, 6, posts[0].ExitCode)
	mu.Unlock()
	_, _, err = sb2.StartJob(t.Context(), "true", sdk.JobOptions{Webhook: "http://127.0.0.1:1/elsewhere"})
	assert.ErrorIs(t, err, sdk.ErrAccessDenied, "a webhook the operator does not allow")
	require.NoError(t, g2.End(t.Context()), "the second client ends the group")
	ended = true
}

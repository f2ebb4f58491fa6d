package webhook_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/internal/natstest"
	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/orchestrator/state"
	"github.com/sandox/sandox/services/orchestrator/webhook"
)

// hooks is an HTTP server that records the posts it gets and fails the
// first failFirst of them with 503.
type hooks struct {
	srv       *httptest.Server
	failFirst int32
	calls     atomic.Int32
	mu        sync.Mutex
	got       []schemas.JobExit
	keys      []string
}

func newHooks(t *testing.T, failFirst int32) *hooks {
	h := &hooks{failFirst: failFirst}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h.calls.Add(1) <= h.failFirst {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		body, _ := io.ReadAll(r.Body)
		var exit schemas.JobExit
		if err := json.Unmarshal(body, &exit); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		h.mu.Lock()
		h.got = append(h.got, exit)
		h.keys = append(h.keys, r.Header.Get("Idempotency-Key"))
		h.mu.Unlock()
	}))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *hooks) posts() []schemas.JobExit {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]schemas.JobExit(nil), h.got...)
}

// startBus starts a NATS server with sandox's streams and returns its
// JetStream.
func startBus(t *testing.T) jetstream.JetStream {
	t.Helper()
	js := natstest.JetStream(t, natstest.Connect(t, natstest.Start(t)))
	require.NoError(t, state.Setup(t.Context(), js))
	return js
}

// recordJob publishes a job's start (naming webhook) and exit records as
// an executor would.
func recordJob(t *testing.T, js jetstream.JetStream, sandbox, job, webhook string, code int) {
	t.Helper()
	publish(t, js, schemas.JobSubject(sandbox, job, schemas.JobStartKind),
		schemas.JobInfo{JobID: job, SandboxID: sandbox, Command: "true", Webhook: webhook, Running: true})
	publish(t, js, schemas.JobSubject(sandbox, job, schemas.JobExitKind), schemas.JobExit{JobID: job, SandboxID: sandbox, ExitCode: code})
}

// publish publishes v as JSON on subject.
func publish(t *testing.T, js jetstream.JetStream, subject string, v any) {
	t.Helper()
	data, err := json.Marshal(v)
	require.NoError(t, err)
	_, err = js.Publish(t.Context(), subject, data)
	require.NoError(t, err)
}

// testConfig allows the URL prefixes allow and gives up a post after 20 s.
func testConfig(allow ...string) webhook.Config {
	cfg := webhook.DefaultConfig()
	cfg.Allow, cfg.MaxElapsed = allow, 20*time.Second
	return cfg
}

// runRelay runs a relay with cfg until the returned function stops it.
func runRelay(t *testing.T, js jetstream.JetStream, cfg webhook.Config) (stop func()) {
	t.Helper()
	return runRelayLogged(t, js, cfg, slog.New(slog.DiscardHandler))
}

// runRelayLogged runs a relay with cfg, logging to log, until the
// returned function stops it.
func runRelayLogged(t *testing.T, js jetstream.JetStream, cfg webhook.Config, log *slog.Logger) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- webhook.New(js, cfg, log).Run(ctx) }()
	// The consumer exists once Run set it up: records published after
	// that are the relay's.
	require.Eventually(t, func() bool {
		_, err := js.Consumer(t.Context(), schemas.JobStream, webhook.Consumer)
		return err == nil
	}, 10*time.Second, 10*time.Millisecond)
	stopped := false
	stop = func() {
		if !stopped {
			stopped = true
			cancel()
			require.NoError(t, <-done)
		}
	}
	t.Cleanup(stop)
	return stop
}

func TestRelayPostsJobExitsToAllowedWebhooks(t *testing.T) {
	js := startBus(t)
	h := newHooks(t, 2) // the first two posts fail: the relay retries
	runRelay(t, js, testConfig(h.srv.URL+"/hooks/"))

	recordJob(t, js, "sb-1", "plain", "", 0)                              // no webhook
	recordJob(t, js, "sb-1", "forged", "http://127.0.0.1:1/elsewhere", 1) // not allowed: a forged start record
	recordJob(t, js, "sb-1", "hooked", h.srv.URL+"/hooks/done", 7)

	require.Eventually(t, func() bool { return len(h.posts()) == 1 }, 30*time.Second, 20*time.Millisecond)
	got := h.posts()[0]
	assert.Equal(t, "hooked", got.JobID)
	assert.Equal(t, 7, got.ExitCode)
	assert.Equal(t, int32(3), h.calls.Load(), "two 503s, then the post")
	h.mu.Lock()
	assert.Equal(t, []string{"sb-1/hooked"}, h.keys)
	h.mu.Unlock()
}

// TestRelayPostsExitsThatCameWhileNoWorkerRan: the relays share a durable
// consumer, so an exit recorded while every worker was down is posted by
// the next one to start, once.
func TestRelayPostsExitsThatCameWhileNoWorkerRan(t *testing.T) {
	js := startBus(t)
	h := newHooks(t, 0)
	stop := runRelay(t, js, testConfig(h.srv.URL))
	recordJob(t, js, "sb-2", "first", h.srv.URL+"/a", 0)
	require.Eventually(t, func() bool { return len(h.posts()) == 1 }, 10*time.Second, 20*time.Millisecond)
	stop() // the worker restarts

	recordJob(t, js, "sb-2", "meanwhile", h.srv.URL+"/b", 3)
	runRelay(t, js, testConfig(h.srv.URL))
	require.Eventually(t, func() bool { return len(h.posts()) == 2 }, 10*time.Second, 20*time.Millisecond)
	assert.Equal(t, "meanwhile", h.posts()[1].JobID)
	assert.Never(t, func() bool { return len(h.posts()) > 2 }, 500*time.Millisecond, 50*time.Millisecond, "each exit posted once")
}

package webhook_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/orchestrator/webhook"
)

// settled waits until the relay's consumer has been given every record of
// the job stream up to its last and holds none unacknowledged: every exit
// so far was posted, given up or refused.
func settled(t *testing.T, js jetstream.JetStream, within time.Duration) {
	t.Helper()
	ctx := t.Context()
	stream, err := js.Stream(ctx, schemas.JobStream)
	require.NoError(t, err)
	si, err := stream.Info(ctx)
	require.NoError(t, err)
	last := si.State.LastSeq
	cons, err := js.Consumer(ctx, schemas.JobStream, webhook.Consumer)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		ci, err := cons.Info(ctx)
		return err == nil && ci.Delivered.Stream >= last && ci.NumAckPending == 0 && ci.NumPending == 0
	}, within, 20*time.Millisecond, "the relay to settle the exits up to sequence %d", last)
}

func TestRelayWithoutAllowlistPostsNothing(t *testing.T) {
	js := startBus(t)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	require.NoError(t, webhook.New(js, webhook.DefaultConfig(), slog.New(slog.DiscardHandler)).Run(ctx))
	require.NoError(t, ctx.Err(), "Run returned at once")
	_, err := js.Consumer(t.Context(), schemas.JobStream, webhook.Consumer)
	assert.ErrorIs(t, err, jetstream.ErrConsumerNotFound, "no consumer is made")
}

// TestRelayGivesUp: an exit whose post cannot succeed is given up (the
// stream is told, so it is not delivered again), after one request or
// after retrying until Config.MaxElapsed, and then no request follows.
func TestRelayGivesUp(t *testing.T) {
	tests := []struct {
		name string
		// status answers every post; 0 hangs until the client gives up.
		status int
		// webhook is the start record's URL below the server's; a full
		// URL when it has a scheme.
		webhook string
		// exit, when set, is published as the exit record as it is.
		exit      string
		wantCalls func(int32) bool
	}{
		{name: "a 4xx answer is final", status: http.StatusNotFound, webhook: "/hook",
			wantCalls: func(n int32) bool { return n == 1 }},
		{name: "5xx answers are retried until the limit", status: http.StatusBadGateway, webhook: "/hook",
			wantCalls: func(n int32) bool { return n >= 2 }},
		{name: "429 answers are retried until the limit", status: http.StatusTooManyRequests, webhook: "/hook",
			wantCalls: func(n int32) bool { return n >= 2 }},
		{name: "timeouts are retried until the limit", webhook: "/hook",
			wantCalls: func(n int32) bool { return n >= 2 }},
		{name: "a URL with user info is refused", status: http.StatusOK, webhook: "http://user:secret@127.0.0.1:1/hook",
			wantCalls: func(n int32) bool { return n == 0 }},
		{name: "a URL of another scheme is refused", status: http.StatusOK, webhook: "ftp://127.0.0.1/hook",
			wantCalls: func(n int32) bool { return n == 0 }},
		{name: "an exit record that does not decode is dropped", status: http.StatusOK, webhook: "/hook", exit: "not json",
			wantCalls: func(n int32) bool { return n == 0 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			js := startBus(t)
			var calls atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				calls.Add(1)
				if tt.status == 0 {
					// The server sees the client go only once the body is read.
					_, _ = io.Copy(io.Discard, r.Body)
					<-r.Context().Done() // the client's timeout
					return
				}
				w.WriteHeader(tt.status)
			}))
			t.Cleanup(srv.Close)
			cfg := testConfig(srv.URL, "ftp://127.0.0.1/", "http://127.0.0.1:1/")
			cfg.MaxElapsed = 3 * time.Second // room for a second request on a loaded machine
			cfg.Client = &http.Client{Timeout: 200 * time.Millisecond}
			runRelay(t, js, cfg)

			url := tt.webhook
			if url[0] == '/' {
				url = srv.URL + url
			}
			if tt.exit == "" {
				recordJob(t, js, "sb-1", "j1", url, 2)
			} else {
				publish(t, js, schemas.JobSubject("sb-1", "j1", schemas.JobStartKind), schemas.JobInfo{JobID: "j1", SandboxID: "sb-1", Webhook: url})
				_, err := js.Publish(t.Context(), schemas.JobSubject("sb-1", "j1", schemas.JobExitKind), []byte(tt.exit))
				require.NoError(t, err)
			}
			settled(t, js, 20*time.Second)
			n := calls.Load()
			assert.True(t, tt.wantCalls(n), "got %d requests", n)
			assert.Never(t, func() bool { return calls.Load() != n }, time.Second, 50*time.Millisecond,
				"no request after the exit was given up")
		})
	}
}

// TestRelayWaitsForTheStartRecord: an exit whose start record is not (yet)
// in the stream is delivered again later, and posted then.
func TestRelayWaitsForTheStartRecord(t *testing.T) {
	js := startBus(t)
	h := newHooks(t, 0)
	var logged logBuffer
	runRelayLogged(t, js, testConfig(h.srv.URL), slog.New(slog.NewTextHandler(&logged, nil)))
	publish(t, js, schemas.JobSubject("sb-3", "late", schemas.JobExitKind), schemas.JobExit{JobID: "late", SandboxID: "sb-3", ExitCode: 4})
	require.Eventually(t, func() bool { return strings.Contains(logged.String(), "the job's start record") }, 10*time.Second, 10*time.Millisecond,
		"the relay to miss the start record")
	assert.Empty(t, h.posts(), "nothing is posted without a start record")

	publish(t, js, schemas.JobSubject("sb-3", "late", schemas.JobStartKind), schemas.JobInfo{JobID: "late", SandboxID: "sb-3", Webhook: h.srv.URL + "/late"})
	require.Eventually(t, func() bool { return len(h.posts()) == 1 }, 20*time.Second, 20*time.Millisecond)
	assert.Equal(t, 4, h.posts()[0].ExitCode)
}

// logBuffer collects a logger's output; it is safe for concurrent use.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestRelayStoppedWhileRetryingLeavesTheExit: a relay stopped while it
// retries a post hands the exit back to the stream, and the next relay
// posts it.
func TestRelayStoppedWhileRetryingLeavesTheExit(t *testing.T) {
	js := startBus(t)
	h := newHooks(t, 3)
	stop := runRelay(t, js, testConfig(h.srv.URL))
	recordJob(t, js, "sb-4", "j", h.srv.URL+"/j", 0)
	require.Eventually(t, func() bool { return h.calls.Load() >= 1 }, 10*time.Second, 10*time.Millisecond)
	stop()
	require.Empty(t, h.posts())

	runRelay(t, js, testConfig(h.srv.URL))
	require.Eventually(t, func() bool { return len(h.posts()) == 1 }, 20*time.Second, 20*time.Millisecond)
	assert.Equal(t, "j", h.posts()[0].JobID)
}

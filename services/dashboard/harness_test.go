package dashboard

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/internal/natstest"
	"github.com/sandox/sandox/schemas"
)

// system is an embedded NATS server with the streams and buckets an
// orchestrator makes, and a dashboard serving it over HTTP.
type system struct {
	ns   *server.Server
	nc   *nats.Conn
	js   jetstream.JetStream
	dash *Server
	http *httptest.Server
}

// startSystem starts NATS on a free port with a temporary store, makes the
// audit stream and the buckets of hosts, groups and sandboxes, and serves
// a dashboard of it on a loopback port, its feed running until the test
// ends.
func startSystem(t *testing.T, opts Options) *system {
	t.Helper()
	ns := natstest.Start(t)
	nc := natstest.Connect(t, ns, nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	js := natstest.JetStream(t, nc)
	ctx := t.Context()
	_, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: schemas.EventStream, Subjects: schemas.EventSubjects(), Storage: jetstream.MemoryStorage})
	require.NoError(t, err)
	for _, b := range []string{schemas.HostsBucket, schemas.GroupBucket, schemas.SandboxBucket} {
		_, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: b, Storage: jetstream.MemoryStorage})
		require.NoError(t, err)
	}
	s := &system{ns: ns, nc: nc, js: js}
	s.serve(t, opts)
	return s
}

// serve starts the dashboard of s.nc with opts.
func (s *system) serve(t *testing.T, opts Options) {
	t.Helper()
	if opts.Refresh == 0 {
		opts.Refresh = 50 * time.Millisecond
	}
	dash, err := New(s.nc, opts)
	require.NoError(t, err)
	s.dash = dash
	ctx := t.Context()
	done := make(chan struct{})
	go func() {
		defer close(done)
		dash.Run(ctx)
	}()
	t.Cleanup(func() { <-done })
	s.http = httptest.NewServer(dash.Handler())
	t.Cleanup(s.http.Close)
}

// put records v under key in bucket.
func (s *system) put(t *testing.T, bucket, key string, v any) {
	t.Helper()
	kv, err := s.js.KeyValue(t.Context(), bucket)
	require.NoError(t, err)
	data, err := json.Marshal(v)
	require.NoError(t, err)
	_, err = kv.Put(t.Context(), key, data)
	require.NoError(t, err)
}

// record stores data on subject in the audit stream, with headers hdr
// (pairs of name and value), and waits for the stream's acknowledgement.
func (s *system) record(t *testing.T, subject string, data any, hdr ...string) {
	t.Helper()
	body, ok := data.([]byte)
	if !ok {
		var err error
		body, err = json.Marshal(data)
		require.NoError(t, err)
	}
	msg := nats.NewMsg(subject)
	msg.Data = body
	for i := 0; i+1 < len(hdr); i += 2 {
		msg.Header.Set(hdr[i], hdr[i+1])
	}
	_, err := s.js.PublishMsg(t.Context(), msg)
	require.NoError(t, err)
}

// batch records a batch of tools sent to sandbox sb, and its observations
// when obs is not nil.
func (s *system) batch(t *testing.T, sb, id string, actions schemas.Actions, obs []schemas.Observation) {
	t.Helper()
	s.record(t, schemas.BatchRecordSubject(sb), actions, schemas.HeaderBatchID, id, schemas.HeaderReply, schemas.ObservationSubject(sb, id))
	if obs != nil {
		s.record(t, schemas.ObservationSubject(sb, id), schemas.BatchResult{BatchID: id, SandboxID: sb, Observations: obs})
	}
}

// get fetches path from the dashboard and returns the status and body.
func (s *system) get(t *testing.T, path string) (int, string) {
	t.Helper()
	resp, err := http.Get(s.http.URL + path)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

// events reads a Server-Sent Events stream: each event's name and data
// (its data lines joined).
type events struct {
	resp *http.Response
	next chan [2]string
}

// stream opens the event stream at path; it is closed when the test ends.
func (s *system) stream(t *testing.T, path string) *events {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, s.http.URL+path, nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	t.Cleanup(func() { resp.Body.Close() })
	ev := &events{resp: resp, next: make(chan [2]string, 64)}
	go func() {
		defer close(ev.next)
		parseEvents(resp.Body, ev.next)
	}()
	return ev
}

// wait returns the data of the first event named name whose data contains
// want, failing the test after 10 s.
func (ev *events) wait(t *testing.T, name, want string) string {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case e, ok := <-ev.next:
			if !ok {
				t.Fatalf("the stream ended before an event %q with %q", name, want)
			}
			if e[0] == name && strings.Contains(e[1], want) {
				return e[1]
			}
		case <-timeout:
			t.Fatalf("no event %q with %q within 10 s", name, want)
		}
	}
}

// parseEvents parses the event stream in r into out as it arrives, until r
// ends.
func parseEvents(r io.Reader, out chan<- [2]string) {
	buf := make([]byte, 4096)
	var pending string
	var name string
	var data []string
	for {
		n, err := r.Read(buf)
		pending += string(buf[:n])
		for {
			line, rest, found := strings.Cut(pending, "\n")
			if !found {
				break
			}
			pending = rest
			switch {
			case line == "":
				if name != "" || len(data) > 0 {
					out <- [2]string{name, strings.Join(data, "\n")}
				}
				name, data = "", nil
			case strings.HasPrefix(line, "event: "):
				name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				data = append(data, strings.TrimPrefix(line, "data: "))
			}
		}
		if err != nil {
			return
		}
	}
}

// caughtUp waits until the dashboard's feed has read every entry of the
// audit stream.
func (s *system) caughtUp(t *testing.T) {
	t.Helper()
	stream, err := s.js.Stream(t.Context(), schemas.EventStream)
	require.NoError(t, err)
	want := stream.CachedInfo().State.LastSeq
	require.Eventually(t, func() bool {
		last, _ := s.dash.feed.Status()
		return last >= want
	}, 10*time.Second, 5*time.Millisecond, "the feed reads up to %d", want)
}

package dashboard

import (
	"encoding/json"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
)

// A batch and its answer recorded after the page opened reach it as rows,
// with each tool's duration and error; rows of other sandboxes do not.
func TestLiveEvents(t *testing.T) {
	s := startSystem(t, Options{})
	seed(t, s)
	ev := s.stream(t, "/live/events?sandbox=sb-2")
	s.batch(t, "sb-1", "b-other", schemas.Actions{{Tool: "terminal_tools.run"}}, []schemas.Observation{{Tool: "terminal_tools.run", Stdout: "other"}})
	s.batch(t, "sb-2", "b-2", schemas.Actions{{Tool: "terminal_tools.run", Args: []byte(`{"command":"false"}`)}},
		[]schemas.Observation{{Tool: "terminal_tools.run", DurationMS: 1500, Error: &schemas.Error{Code: schemas.CodeTimeout, Message: "too slow"}}})
	row := ev.wait(t, "row", "kind-observations")
	assert.Contains(t, row, "sb-2")
	assert.Contains(t, row, "terminal_tools.run")
	assert.Contains(t, row, "1.50 s")
	assert.Contains(t, row, "timeout")
	assert.NotContains(t, row, "b-other")

	// A page that opens later gets, from ?after=, the rows it has not
	// seen: the batch of sb-1 and both of sb-2's.
	all := s.stream(t, "/live/events?after=0")
	all.wait(t, "row", `data-sandbox="sb-2"`)
}

// The overview's tables are sent again when a sandbox appears.
func TestLiveOverview(t *testing.T) {
	s := startSystem(t, Options{})
	ev := s.stream(t, "/live/overview")
	ev.wait(t, "html", "No sandboxes.")
	s.put(t, schemas.SandboxBucket, "late-1", schemas.SandboxStatus{ID: "late-1", GroupID: "g", State: schemas.StateCreated})
	ev.wait(t, "html", `href="/sandboxes/late-1"`)
}

// A sandbox's live use comes from the orchestrator's stats request; a
// refusal or credentials that may not ask read as a clear note.
func TestLiveUsage(t *testing.T) {
	s := startSystem(t, Options{})
	// Where no orchestrator can run, a subscriber answers the stats
	// request as a worker does (services/orchestrator/requests.go).
	sub, err := s.nc.Subscribe(schemas.SandboxStatsSubject("*"), func(m *nats.Msg) {
		reply := schemas.StatusReply{Worker: "test"}
		if m.Subject == schemas.SandboxStatsSubject("sb-1") {
			reply.Stats = &schemas.SandboxUsage{SandboxID: "sb-1", CPUPercent: 42.5, MemoryBytes: 100 << 20, DiskBytes: 1 << 20, PIDs: 7,
				Limits: schemas.ResolvedResources{MemoryBytes: 200 << 20, PIDs: 256}}
		} else {
			reply.Error = &schemas.Error{Code: schemas.CodeConflict, Message: "sandbox is not running"}
		}
		data, _ := json.Marshal(reply)
		_ = m.Respond(data)
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = sub.Unsubscribe() })

	html := s.stream(t, "/live/sandboxes/sb-1/usage").wait(t, "html", "usage")
	for _, want := range []string{"42.5% of a core", "100.0 MiB", "200.0 MiB", "50%", "1.0 MiB", "7"} {
		assert.Contains(t, html, want)
	}
	s.stream(t, "/live/sandboxes/sb-3/usage").wait(t, "html", "conflict: sandbox is not running")

	audit := startSystem(t, Options{NoUsage: true})
	audit.stream(t, "/live/sandboxes/sb-1/usage").wait(t, "html", "give it client or control credentials")
}

// A stream deleted and made again starts its sequences over; the feed
// shows its new entries.
func TestFeedAfterStreamRecreated(t *testing.T) {
	s := startSystem(t, Options{})
	seed(t, s)
	s.stream(t, "/live/events").wait(t, "row", "kind-observations")
	require.NoError(t, s.js.DeleteStream(t.Context(), schemas.EventStream))
	_, err := s.js.CreateStream(t.Context(), jetstream.StreamConfig{Name: schemas.EventStream, Subjects: schemas.EventSubjects(), Storage: jetstream.MemoryStorage})
	require.NoError(t, err)
	ev := s.stream(t, "/live/events?sandbox=sb-new")
	s.batch(t, "sb-new", "b-new", schemas.Actions{{Tool: "terminal_tools.run"}}, nil)
	ev.wait(t, "row", `data-sandbox="sb-new"`)
}

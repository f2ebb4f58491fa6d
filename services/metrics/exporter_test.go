package metrics

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/internal/poll"
	"github.com/sandox/sandox/schemas"
)

// recordLife records, as the orchestrator, executors, data service and NATS
// server do, the life of two sandboxes: a create that succeeds (its result
// published twice, as a redelivery does), a create refused for resources,
// created events with a built and a reused image, a batch of three actions
// (one failing, one hitting the memory limit, one of a tool nobody defines), a batch refused as a whole,
// a population in two steps and a server refusal. It returns the last
// sequence.
func recordLife(t *testing.T, s *system) uint64 {
	t.Helper()
	create := schemas.Command{ID: "c1", Kind: schemas.CreateSandbox, GroupID: "g", SandboxID: "sb-1"}
	s.record(t, schemas.CommandRecordSubject("c1"), schemas.CommandRecord{Command: create, Worker: "w", Delivery: 1})
	s.record(t, schemas.ResultSubject("c1"), schemas.CommandResult{CommandID: "c1", Kind: schemas.CreateSandbox, Worker: "w", DurationMS: 1500})
	s.record(t, schemas.ResultSubject("c1"), schemas.CommandResult{CommandID: "c1", Kind: schemas.CreateSandbox, Worker: "w", DurationMS: 1500})
	big := schemas.Command{ID: "c2", Kind: schemas.CreateSandbox, GroupID: "g", SandboxID: "sb-big"}
	s.record(t, schemas.CommandRecordSubject("c2"), schemas.CommandRecord{Command: big, Worker: "w", Delivery: 1})
	s.record(t, schemas.ResultSubject("c2"), schemas.CommandResult{CommandID: "c2", Kind: schemas.CreateSandbox, Worker: "w", DurationMS: 20,
		Error: schemas.Errorf(schemas.CodeResourceExhausted, "64 CPUs asked, 2 free")})
	s.record(t, schemas.SandboxEventSubject("sb-1"), schemas.Event{Kind: schemas.EventCreated, GroupID: "g", SandboxID: "sb-1",
		Sandbox: &schemas.SandboxStatus{ID: "sb-1", GroupID: "g", State: schemas.StateCreated}})
	s.record(t, schemas.SandboxEventSubject("sb-2"), schemas.Event{Kind: schemas.EventCreated, GroupID: "g", SandboxID: "sb-2",
		Sandbox: &schemas.SandboxStatus{ID: "sb-2", GroupID: "g", State: schemas.StateCreated, ImageReused: true}})
	s.record(t, schemas.SandboxEventSubject("sb-1"), schemas.Event{Kind: schemas.EventStarted, GroupID: "g", SandboxID: "sb-1"})
	s.record(t, schemas.BatchRecordSubject("sb-1"), []map[string]any{{"terminal_tools.run": map[string]any{}}, {"filesystem_tools.read_file": map[string]any{}}},
		schemas.HeaderBatchID, "b1", schemas.HeaderReply, schemas.ObservationSubject("sb-1", "b1"))
	s.record(t, schemas.ObservationSubject("sb-1", "b1"), schemas.BatchResult{BatchID: "b1", SandboxID: "sb-1", Observations: []schemas.Observation{
		{Tool: "terminal_tools.run", DurationMS: 250, LimitsHit: []schemas.LimitHit{{Resource: schemas.LimitMemory, Count: 2, Message: "killed"}}},
		{Tool: "filesystem_tools.read_file", DurationMS: 4, Error: schemas.Errorf(schemas.CodeToolError, "no such file")},
		{Tool: "made_up_tools.fly", Error: schemas.Errorf(schemas.CodeUnknownTool, "no tool module defines made_up_tools.fly")},
	}})
	s.record(t, schemas.ObservationSubject("sb-1", "b2"), schemas.BatchResult{BatchID: "b2", SandboxID: "sb-1",
		Error: schemas.Errorf(schemas.CodeBadRequest, "not JSON")})
	s.record(t, schemas.PopulationEventSubject("g"), schemas.PopulationEvent{GroupID: "g", Database: "docs", Namespace: "n", Source: "a.jsonl", Loaded: 10})
	s.record(t, schemas.PopulationEventSubject("g"), schemas.PopulationEvent{GroupID: "g", Database: "docs", Namespace: "n", Source: "b.jsonl", Loaded: 3})
	s.record(t, schemas.PopulationEventSubject("g"), schemas.PopulationEvent{GroupID: "g", Database: "docs", Namespace: "n", Source: "a.jsonl", Loaded: 25,
		Bad: []schemas.RowError{{Source: "a.jsonl", Line: 4, Reason: "not JSON"}}, Done: true})
	return s.record(t, schemas.RefusalSubject("n1"), schemas.Refusal{Op: "publish", Subject: "sandox.cmd.create_group", UserName: "sandbox sb-1", Role: "sandbox"})
}

// TestStreamCounters feeds the audit stream the records of a sandbox's
// life and checks every counter and histogram derived from it; a second
// exporter started afterwards, as after a restart, reads the same values.
func TestStreamCounters(t *testing.T) {
	s := startSystem(t)
	last := recordLife(t, s)
	waitSeq(t, s.exp, last)
	restarted := s.run(t)
	waitSeq(t, restarted, last)

	for name, exp := range map[string]*Exporter{"first": s.exp, "restarted": restarted} {
		t.Run(name, func(t *testing.T) {
			g := exp.Gatherer()
			for _, c := range []struct {
				name   string
				labels []string
				want   float64
			}{
				{"sandox_commands_total", []string{"kind", "create_sandbox", "code", "ok"}, 1},
				{"sandox_commands_total", []string{"kind", "create_sandbox", "code", "resource_exhausted"}, 1},
				{"sandox_admission_refusals_total", []string{"kind", "create_sandbox"}, 1},
				{"sandox_sandbox_events_total", []string{"kind", "created"}, 2},
				{"sandox_sandbox_events_total", []string{"kind", "started"}, 1},
				{"sandox_image_builds_total", []string{"outcome", "built"}, 1},
				{"sandox_image_builds_total", []string{"outcome", "reused"}, 1},
				{"sandox_batches_received_total", nil, 1},
				{"sandox_batches_total", []string{"code", "ok"}, 1},
				{"sandox_batches_total", []string{"code", "bad_request"}, 1},
				{"sandox_actions_total", []string{"tool", "terminal_tools.run", "code", "ok"}, 1},
				{"sandox_actions_total", []string{"tool", "filesystem_tools.read_file", "code", "tool_error"}, 1},
				{"sandox_actions_total", []string{"tool", "(unknown)", "code", "unknown_tool"}, 1},
				{"sandox_limit_hits_total", []string{"resource", "memory"}, 2},
				{"sandox_nats_refusals_total", []string{"op", "publish"}, 1},
				{"sandox_population_loaded_total", []string{"database", "docs"}, 28},
				{"sandox_population_bad_rows_total", []string{"database", "docs"}, 1},
				{"sandox_population_sources_done_total", []string{"database", "docs"}, 1},
				{"sandox_population_sources_in_progress", nil, 1},
				{"sandox_up", []string{"source", "audit_stream"}, 1},
				{"sandox_audit_stream_sequence", nil, float64(last)},
			} {
				got := gather(t, g, c.name, c.labels...)
				assert.True(t, got.found, "%s%v is exported", c.name, c.labels)
				assert.Equal(t, c.want, got.value, "%s%v", c.name, c.labels)
			}
			run := gather(t, g, "sandox_action_duration_seconds", "tool", "terminal_tools.run")
			assert.Equal(t, sample{count: 1, sum: 0.25, found: true}, run)
			read := gather(t, g, "sandox_action_duration_seconds", "tool", "filesystem_tools.read_file")
			assert.Equal(t, sample{count: 1, sum: 0.004, found: true}, read)
			assert.False(t, gather(t, g, "sandox_actions_total", "tool", "made_up_tools.fly", "code", "unknown_tool").found,
				"a tool name nobody defines is not a label value")
			create := gather(t, g, "sandox_command_duration_seconds", "kind", "create_sandbox")
			assert.Equal(t, sample{count: 2, sum: 1.52, found: true}, create)
		})
	}
}

// TestStreamMadeAgain deletes the audit stream and makes it again, as
// sandox down --purge and up do: the counters start again from what the
// new stream holds.
func TestStreamMadeAgain(t *testing.T) {
	s := startSystem(t)
	waitSeq(t, s.exp, recordLife(t, s))
	require.NoError(t, s.js.DeleteStream(t.Context(), schemas.EventStream))
	_, err := s.js.CreateStream(t.Context(), jetstream.StreamConfig{Name: schemas.EventStream, Subjects: schemas.EventSubjects(), Storage: jetstream.MemoryStorage})
	require.NoError(t, err)
	seq := s.record(t, schemas.SandboxEventSubject("sb-9"), schemas.Event{Kind: schemas.EventStarted, GroupID: "g", SandboxID: "sb-9"})
	poll.Until(t, 20*time.Second, "the counters to start again", func() bool {
		return gather(t, s.exp.Gatherer(), "sandox_sandbox_events_total", "kind", "started").value == 1 &&
			!gather(t, s.exp.Gatherer(), "sandox_sandbox_events_total", "kind", "created").found
	})
	waitSeq(t, s.exp, seq)
	assert.False(t, gather(t, s.exp.Gatherer(), "sandox_actions_total", "tool", "terminal_tools.run", "code", "ok").found)
}

// TestStateGauges records hosts, groups and sandboxes in the buckets and
// checks the gauges read from them at a scrape, over HTTP in the text
// format.
func TestStateGauges(t *testing.T) {
	s := startSystem(t)
	s.put(t, schemas.HostsBucket, "host-a", schemas.HostStatus{Name: "host-a", State: schemas.HostUp, CPUs: 4, MemoryBytes: 8 << 30,
		Allocated: schemas.ResolvedResources{NanoCPUs: 1_500_000_000, MemoryBytes: 1 << 30}, Sandboxes: 3})
	s.put(t, schemas.HostsBucket, "host-b", schemas.HostStatus{Name: "host-b", State: schemas.HostLost})
	s.put(t, schemas.GroupBucket, "g", schemas.GroupStatus{ID: "g", State: schemas.GroupRunning,
		Spec: schemas.GroupSpec{Pool: &schemas.PoolSpec{Size: 2}}})
	s.put(t, schemas.SandboxBucket, "sb-1", schemas.SandboxStatus{ID: "sb-1", GroupID: "g", State: schemas.StateRunning, Host: "host-a"})
	s.put(t, schemas.SandboxBucket, "sb-2", schemas.SandboxStatus{ID: "sb-2", GroupID: "g", State: schemas.StateRunning, Host: "host-a"})
	s.put(t, schemas.SandboxBucket, "sb-3", schemas.SandboxStatus{ID: "sb-3", GroupID: "g", State: schemas.StateFailed, Host: "host-a"})
	s.put(t, schemas.SandboxBucket, "pool-1", schemas.SandboxStatus{ID: "pool-1", State: schemas.StateRunning, Host: "host-a", Pooled: true, PoolGroup: "g"})
	s.put(t, schemas.SandboxBucket, "pool-2", schemas.SandboxStatus{ID: "pool-2", State: schemas.StateRunning, Host: "host-a", Pooled: true, PoolGroup: "g", ClaimedBy: "sb-2"})

	srv := httptest.NewServer(s.exp.Handler())
	t.Cleanup(srv.Close)
	resp, err := http.Get(srv.URL)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(string(body)))
	require.NoError(t, err, "the exposition parses:\n%s", body)

	value := func(name string, labels ...string) float64 {
		t.Helper()
		f, ok := families[name]
		require.True(t, ok, "%s is exported", name)
		want := map[string]string{}
		for i := 0; i+1 < len(labels); i += 2 {
			want[labels[i]] = labels[i+1]
		}
		for _, m := range f.GetMetric() {
			if sameLabels(m.GetLabel(), want) {
				return m.GetGauge().GetValue()
			}
		}
		t.Fatalf("%s%v is not exported", name, labels)
		return 0
	}
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"sandox_up", []string{"source", "buckets"}, 1},
		{"sandox_sandboxes", []string{"state", "running", "host", "host-a"}, 2},
		{"sandox_sandboxes", []string{"state", "failed", "host", "host-a"}, 1},
		{"sandox_pool_sandboxes", []string{"group", "g", "status", "waiting"}, 1},
		{"sandox_pool_sandboxes", []string{"group", "g", "status", "claimed"}, 1},
		{"sandox_pool_size", []string{"group", "g"}, 2},
		{"sandox_groups", []string{"state", "running"}, 1},
		{"sandox_hosts", []string{"state", "up"}, 1},
		{"sandox_hosts", []string{"state", "lost"}, 1},
		{"sandox_host_cpus", []string{"host", "host-a"}, 4},
		{"sandox_host_memory_bytes", []string{"host", "host-a"}, 8 << 30},
		{"sandox_host_allocated_cpus", []string{"host", "host-a"}, 1.5},
		{"sandox_host_allocated_memory_bytes", []string{"host", "host-a"}, 1 << 30},
		{"sandox_host_sandboxes", []string{"host", "host-a"}, 3},
	} {
		assert.Equal(t, c.want, value(c.name, c.labels...), "%s%v", c.name, c.labels)
	}
}

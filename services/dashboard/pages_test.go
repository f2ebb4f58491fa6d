package dashboard

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
)

func intp(n int) *int { return &n }

// seed records a host, a group with a database and a pool, a running
// sandbox with a grant, a pooled sandbox, and a batch with its answer.
func seed(t *testing.T, s *system) {
	t.Helper()
	now := time.Now()
	s.put(t, schemas.HostsBucket, "host-a", schemas.HostStatus{Name: "host-a", State: schemas.HostUp, CPUs: 8, MemoryBytes: 16 << 30,
		Allocated: schemas.ResolvedResources{NanoCPUs: 1e9, MemoryBytes: 512 << 20}, Sandboxes: 1, LastSeen: now})
	s.put(t, schemas.GroupBucket, "research", schemas.GroupStatus{ID: "research", State: schemas.GroupRunning, Sandboxes: []string{"sb-1"},
		Spec: schemas.GroupSpec{ID: "research", Compute: schemas.ComputeResources{CPU: "1", Memory: "512MiB"}, Pool: &schemas.PoolSpec{Size: 2},
			DatabaseAccess: schemas.DatabaseAccess{{Database: "qdrant", Namespace: "papers", Read: true}}},
		Databases: []schemas.DatabaseEndpoint{{Database: "qdrant", Address: "10.0.0.5:6334"}}, CreatedAt: now})
	s.put(t, schemas.SandboxBucket, "sb-1", schemas.SandboxStatus{ID: "sb-1", GroupID: "research", State: schemas.StateRunning, Host: "host-a",
		Tools: []string{"filesystem_tools", "terminal_tools"}, Resources: schemas.ResolvedResources{NanoCPUs: 1e9, MemoryBytes: 512 << 20, PIDs: 256},
		Databases: schemas.DatabaseAccess{{Database: "qdrant", Namespace: "papers", Read: true, Write: true}}, StartedAt: now})
	s.put(t, schemas.SandboxBucket, "pool-abc", schemas.SandboxStatus{ID: "pool-abc", State: schemas.StateRunning, Pooled: true, PoolGroup: "research", PoolWorker: "w1"})
	s.record(t, schemas.CommandRecordSubject("c-1"), schemas.CommandRecord{
		Command: schemas.Command{ID: "c-1", Kind: schemas.StartSandbox, GroupID: "research", SandboxID: "sb-1"},
		Caller:  schemas.Caller{Name: "alice", Role: "client", Verified: true}, Delivery: 1})
	s.record(t, schemas.SandboxEventSubject("sb-1"), schemas.Event{Kind: schemas.EventStarted, GroupID: "research", SandboxID: "sb-1", Message: "running"})
	s.batch(t, "sb-1", "b-1", schemas.Actions{
		{Tool: "terminal_tools.run", Description: "look around", Args: []byte(`{"command":"ls"}`)},
		{Tool: "filesystem_tools.read_file", Args: []byte(`{"path":"nope"}`)},
	}, []schemas.Observation{
		{Tool: "terminal_tools.run", Stdout: "notes.txt\n", ExitCode: intp(0), DurationMS: 12.5},
		{Tool: "filesystem_tools.read_file", Error: &schemas.Error{Code: schemas.CodeToolError, Message: "no such file: nope"}, DurationMS: 0.3},
	})
	s.caughtUp(t)
}

func TestPages(t *testing.T) {
	s := startSystem(t, Options{})
	seed(t, s)
	tests := []struct {
		name string
		path string
		code int
		want []string
	}{
		{"overview", "/", http.StatusOK, []string{
			"host-a", "16.0 GiB", // the host and its memory
			`href="/groups/research"`, "1 CPU 512MiB", "qdrant", // the group, its compute and database
			`href="/sandboxes/sb-1"`, "running", "512.0 MiB", "256", "qdrant/papers (read, write)", // the sandbox, its limits and grant
			"Warm pools", // the pool of research, with its pooled sandbox waiting
			`data-live-rows="/live/events"`, "/static/dashboard.js",
			"start_sandbox", "alice", // the feed, with a command and its caller
		}},
		{"group", "/groups/research", http.StatusOK, []string{"Group research", "10.0.0.5:6334", "papers", "2 per worker", `href="/sandboxes/sb-1"`}},
		{"sandbox with its history", "/sandboxes/sb-1", http.StatusOK, []string{
			"Sandbox sb-1", "Limits", "qdrant", "read, write",
			"terminal_tools.run", "look around", "notes.txt", "12.5 ms", // an action with its observation
			"filesystem_tools.read_file", "tool_error", "no such file: nope", // a failed action
			`data-live-html="/live/sandboxes/sb-1/usage"`, `data-live-rows="/live/events?sandbox=sb-1"`,
		}},
		{"unknown sandbox", "/sandboxes/nope", http.StatusNotFound, []string{"404", "not found", `sandbox &#34;nope&#34;`}},
		{"invalid sandbox id", "/sandboxes/no%20pe", http.StatusNotFound, []string{"404", "not found"}},
		{"unknown group", "/groups/nope", http.StatusNotFound, []string{"404", `group &#34;nope&#34;`}},
		{"unknown page", "/nope", http.StatusNotFound, []string{"404", "page"}},
		{"script", "/static/dashboard.js", http.StatusOK, []string{"EventSource"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body := s.get(t, tt.path)
			assert.Equal(t, tt.code, code, "status of %s", tt.path)
			for _, w := range tt.want {
				assert.Contains(t, body, w)
			}
		})
	}
}

// An ended sandbox is no longer recorded, but its page shows its history.
func TestEndedSandboxHasHistory(t *testing.T) {
	s := startSystem(t, Options{})
	s.batch(t, "gone-1", "b-9", schemas.Actions{{Tool: "terminal_tools.run", Args: []byte(`{"command":"echo bye"}`)}},
		[]schemas.Observation{{Tool: "terminal_tools.run", Stdout: "bye\n", DurationMS: 3}})
	code, body := s.get(t, "/sandboxes/gone-1")
	require.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, "ended")
	assert.Contains(t, body, "bye")
	assert.NotContains(t, body, "/live/sandboxes/gone-1/usage", "no live use for a sandbox that is gone")
}

// Without the buckets and the stream (no orchestrator ran), the overview
// says so instead of failing.
func TestNothingCreatedYet(t *testing.T) {
	s := startSystem(t, Options{})
	for _, b := range []string{schemas.HostsBucket, schemas.GroupBucket, schemas.SandboxBucket} {
		require.NoError(t, s.js.DeleteKeyValue(t.Context(), b))
	}
	code, body := s.get(t, "/")
	require.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, "no orchestrator has run")
	assert.Contains(t, body, "No sandboxes.")
}

// When NATS goes away the pages say so with 503, the static files are
// still served, and the pages come back with NATS.
func TestNATSUnreachable(t *testing.T) {
	s := startSystem(t, Options{})
	seed(t, s)
	url := s.ns.ClientURL()
	s.ns.Shutdown()
	s.ns.WaitForShutdown()
	require.Eventually(t, func() bool { return !s.nc.IsConnected() }, 5*time.Second, 10*time.Millisecond)

	code, body := s.get(t, "/")
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Contains(t, body, "NATS is unreachable")
	assert.Contains(t, body, url)
	code, body = s.get(t, "/sandboxes/sb-1")
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Contains(t, body, "NATS is unreachable")
	code, _ = s.get(t, "/static/dashboard.css")
	assert.Equal(t, http.StatusOK, code, "the server keeps working")
	ev := s.stream(t, "/live/overview")
	ev.wait(t, "html", "NATS is unreachable")
}

// A group's page shows its population's progress, source by source, and
// follows it.
func TestPopulation(t *testing.T) {
	s := startSystem(t, Options{})
	seed(t, s)
	subject := schemas.PopulationEventSubject("research")
	s.record(t, subject, schemas.PopulationEvent{GroupID: "research", Database: "qdrant", Namespace: "papers", Source: "papers.jsonl", Loaded: 100})
	s.record(t, subject, schemas.PopulationEvent{GroupID: "research", Database: "neo4j", Namespace: "graph", Source: "graph.cypher", Loaded: 3,
		Bad: []schemas.RowError{{Source: "graph.cypher", Line: 7, Reason: "syntax error"}}, Done: true})
	s.record(t, subject, schemas.PopulationEvent{GroupID: "research", Database: "qdrant", Namespace: "papers", Source: "papers.jsonl", Loaded: 250})

	code, body := s.get(t, "/groups/research")
	require.Equal(t, http.StatusOK, code)
	for _, want := range []string{"papers.jsonl", "250", "graph.cypher", "line 7: syntax error", "loading", "done", `data-live-html="/live/groups/research/population"`} {
		assert.Contains(t, body, want)
	}
	assert.NotContains(t, body, "<td>100</td>", "only the newest progress of a source")

	ev := s.stream(t, "/live/groups/research/population")
	ev.wait(t, "html", "250")
	s.record(t, subject, schemas.PopulationEvent{GroupID: "research", Database: "qdrant", Namespace: "papers", Source: "papers.jsonl", Loaded: 400, Done: true})
	ev.wait(t, "html", "<td>400</td>")

	_, body = s.get(t, "/groups/research")
	assert.NotContains(t, body, "loading", "every source is done")
}

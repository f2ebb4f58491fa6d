package jsonschema

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
)

// TestSchemaFilesCurrent fails when a Go type changed and the committed JSON
// Schema file was not regenerated (go generate ./schemas).
func TestSchemaFilesCurrent(t *testing.T) {
	for _, name := range MessageNames() {
		t.Run(name, func(t *testing.T) {
			want, err := GenerateJSONSchema(name)
			require.NoError(t, err)
			got, err := SchemaFile(name)
			require.NoError(t, err, "read schema file (run go generate ./schemas)")
			// Not require.Equal: a diff of two schema files says less than the fix.
			if !bytes.Equal(got, want) {
				t.Fatalf("schemas/jsonschema/%s.schema.json is out of date: run go generate ./schemas", name)
			}
		})
	}
}

func samples() map[string]any {
	exit := 0
	now := time.Date(2026, 11, 23, 5, 0, 0, 0, time.UTC)
	sandbox := schemas.SandboxStatus{
		ID: "sb-1", GroupID: "g", State: schemas.StateRunning, Image: "sandox/sandbox-tools:abc",
		Container: "c0ffee", Families: []string{"filesystem_tools"}, Tools: []string{"filesystem_tools", "my_tools"},
		Resources: schemas.ResolvedResources{NanoCPUs: 5e8, MemoryBytes: 128 << 20, PIDs: 256},
		Databases: schemas.DatabaseAccess{{Database: "qdrant", Namespace: "docs", Read: true}},
		Host:      "host-a",
		UpdatedAt: now,
	}
	spec := schemas.GroupSpec{
		ID:       "g",
		Tools:    []schemas.ToolFile{{Name: "my_tools.py", Content: []byte("def f():\n    pass\n")}},
		Families: []string{"filesystem_tools", "web_tools"},
		Compute: schemas.ComputeResources{
			CPU: "0.5", Memory: "128MiB", Disk: "1GiB", MemoryBandwidth: "2GB/s",
			MemoryBandwidthBestEffort: true, PIDs: 256,
		},
		DatabaseAccess: schemas.DatabaseAccess{{Database: "neo4j", Namespace: "neo4j", Read: true, Write: true}},
		Sandboxes:      []schemas.SandboxSpec{{ID: "sb-1", Families: []string{"terminal_tools"}, Compute: &schemas.ComputeResources{CPU: "25%"}}},
		Placement:      schemas.PlacementPack,
	}
	return map[string]any{
		"actions": schemas.Actions{{Tool: "filesystem_tools.read_file", Description: "read", Args: json.RawMessage(`{"path":"a"}`)}},
		"observation": schemas.Observation{
			Tool: "terminal_tools.run", Stdout: "hi\n", ExitCode: &exit, DurationMS: 1.5,
			Return: json.RawMessage(`{"n":1}`), Error: schemas.Errorf(schemas.CodeToolError, "boom"),
		},
		"batch_result": schemas.BatchResult{BatchID: "b", SandboxID: "sb-1", Observations: []schemas.Observation{{Tool: "x.y"}}},
		"command": schemas.Command{
			ID: "c1", Kind: schemas.CreateGroup, GroupID: "g", Group: &spec, IssuedAt: now,
			Sandbox: &schemas.SandboxSpec{ID: "sb-2", Databases: &schemas.DatabaseAccess{}},
		},
		"command_result": schemas.CommandResult{
			CommandID: "c1", Kind: schemas.CreateSandbox, Sandboxes: []schemas.SandboxStatus{sandbox},
			Group: &schemas.GroupStatus{ID: "g", State: schemas.GroupRunning, Spec: spec, Sandboxes: []string{"sb-1"}, UpdatedAt: now},
			Stats: &schemas.SandboxUsage{SandboxID: "sb-1", CPUPercent: 50, ReadAt: now}, Worker: "w1",
		},
		"event": schemas.Event{Kind: schemas.EventRestarted, GroupID: "g", SandboxID: "sb-1", Reason: "it ran out of memory", Sandbox: &sandbox, Time: now},
		"status_reply": schemas.StatusReply{
			Group:     &schemas.GroupStatus{ID: "g", State: schemas.GroupRunning, Spec: spec, Sandboxes: []string{"sb-1"}, UpdatedAt: now},
			Sandbox:   &sandbox,
			Sandboxes: []schemas.SandboxStatus{sandbox},
			Stats:     &schemas.SandboxUsage{SandboxID: "sb-1", CPUPercent: 50, ReadAt: now},
			Error:     schemas.Errorf(schemas.CodeNotFound, "sandbox %q does not exist", "sb-2"),
			Worker:    "w1",
		},
		"sandbox_status": sandbox,
		"group_status":   schemas.GroupStatus{ID: "g", State: schemas.GroupCreated, Spec: spec, Sandboxes: []string{}, DatabaseHost: "host-a", Hosts: map[string]int{"host-a": 1}, UpdatedAt: now},
		"host_status": schemas.HostStatus{Name: "host-a", EngineID: "ABCD:EFGH", State: schemas.HostUp, CPUs: 4, MemoryBytes: 8 << 30,
			Allocated: schemas.ResolvedResources{NanoCPUs: 5e8, MemoryBytes: 128 << 20}, Sandboxes: 1,
			Workers: map[string]time.Time{"orchestrator-1": now}, LastSeen: now},
		"sandbox_usage":  schemas.SandboxUsage{SandboxID: "sb-1", MemoryBytes: 1, ReadAt: now},
		"tool":           schemas.ToolDescription{Name: "m.f", Description: "d", Parameters: json.RawMessage(`{"type":"object"}`), Source: "python"},
		"executor_ready": schemas.ExecutorReady{Modules: []string{"filesystem_tools", "my_tools"}},
		"population_event": schemas.PopulationEvent{GroupID: "g", Database: schemas.DatabaseQdrant, Namespace: "docs", Source: "s3://b/docs.jsonl", Loaded: 200,
			Bad: []schemas.RowError{{Source: "s3://b/docs.jsonl", Line: 17, Reason: "invalid JSON"}}, Done: true},
		"populate_reply": schemas.PopulateReply{Sources: []schemas.PopulationEvent{{GroupID: "g", Database: schemas.DatabaseNeo4j, Namespace: "kg", Source: "kg.cypher", Loaded: 3}}},
		"job_info": schemas.JobInfo{JobID: "j1", SandboxID: "sb-1", Command: "make", Dir: "/workspace", PID: 42, StartedAt: now, Notify: "built",
			Exit: &schemas.JobExit{JobID: "j1", SandboxID: "sb-1", ExitCode: 2, StdoutBytes: 10, StartedAt: now, EndedAt: now}},
		"job_output":       schemas.JobOutput{JobID: "j1", Stream: schemas.JobStderr, Offset: 10, Data: []byte("warning\n")},
		"job_exit":         schemas.JobExit{JobID: "j1", SandboxID: "sb-1", ExitCode: 137, Signal: "SIGKILL", StartedAt: now, EndedAt: now},
		"database_request": schemas.DatabaseRequest{Op: schemas.GraphReadQuery, Args: []byte(`{"query":"MATCH (p:Person) RETURN p.name","params":{"x":1}}`)},
		"database_reply": schemas.DatabaseReply{Result: []byte(`{"rows":[{"p.name":"Ada"}]}`),
			Grants: schemas.DatabaseAccess{{Database: schemas.DatabaseNeo4j, Namespace: "pub", Read: true}},
			Error:  schemas.Errorf(schemas.CodeAccessDenied, "access denied: sandbox sb-1 may not write namespace %q of neo4j", "pub")},
	}
}

// TestSamplesValidate encodes a populated value of every message type and
// checks the committed schema accepts it: the Go types and the schema files
// agree on field names, types and required fields.
func TestSamplesValidate(t *testing.T) {
	s := samples()
	for _, name := range MessageNames() {
		t.Run(name, func(t *testing.T) {
			v, ok := s[name]
			require.True(t, ok, "no sample for message %q: add one", name)
			data, err := json.Marshal(v)
			require.NoError(t, err)
			require.NoError(t, Validate(name, data), "want the sample to validate")
		})
	}
}

func TestValidateRejects(t *testing.T) {
	tests := []struct {
		name, message, data string
	}{
		{"unknown command kind", "command", `{"id":"c","kind":"explode","group_id":"g","issued_at":"2026-11-23T05:00:00Z"}`},
		{"missing id", "command", `{"kind":"create_group","group_id":"g","issued_at":"2026-11-23T05:00:00Z"}`},
		{"unknown field", "observation", `{"tool":"a","stdout":"","stderr":"","terminal_still_running":false,"duration_ms":0,"extra":1}`},
		{"wrong type", "observation", `{"tool":"a","stdout":1,"stderr":"","terminal_still_running":false,"duration_ms":0}`},
		{"empty actions", "actions", `{}`},
		{"action args not object", "actions", `{"a.b":{"args":[1]}}`},
		{"not json", "command", `{`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Validate(tt.message, []byte(tt.data))
			require.Error(t, err, "want %s to be rejected", tt.data)
			var we *schemas.Error
			if e, ok := err.(*schemas.Error); ok {
				we = e
			}
			require.NotNil(t, we, "%v, want a bad_request error", err)
			require.Equal(t, schemas.CodeBadRequest, we.Code, "%v, want a bad_request error", err)
		})
	}
}

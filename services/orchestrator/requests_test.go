package orchestrator

import (
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/internal/natstest"
	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/schemas/jsonschema"
	"github.com/sandox/sandox/services/orchestrator/runtime"
)

// requestWorkers starts an embedded NATS server and n workers serving the
// request subjects (without a runtime: no request here reaches one), and
// returns a client connection and the first worker.
func requestWorkers(t *testing.T, n int) (*nats.Conn, *Worker) {
	t.Helper()
	ns := natstest.Start(t)
	var first *Worker
	for i := range n {
		nc := natstest.Connect(t, ns)
		wcfg := DefaultConfig()
		wcfg.Worker, wcfg.DisksDir = "w"+string(rune('1'+i)), ""
		wcfg.CredsDir = ""
		w, err := NewWorker(t.Context(), nc, runtime.Engine{}, wcfg, slog.New(slog.DiscardHandler))
		require.NoError(t, err)
		stop, err := w.serveRequests(t.Context())
		require.NoError(t, err)
		t.Cleanup(stop)
		if first == nil {
			first = w
		}
	}
	return natstest.Connect(t, ns), first
}

func ask(t *testing.T, nc *nats.Conn, subject string) schemas.StatusReply {
	t.Helper()
	m, err := nc.Request(subject, nil, 5*time.Second)
	require.NoError(t, err)
	require.NoError(t, jsonschema.Validate("status_reply", m.Data), "the reply matches its schema")
	var r schemas.StatusReply
	require.NoError(t, json.Unmarshal(m.Data, &r))
	return r
}

func TestStatusRequests(t *testing.T) {
	nc, w := requestWorkers(t, 1)
	ctx := t.Context()
	g := schemas.GroupStatus{ID: "g", State: schemas.GroupRunning, Sandboxes: []string{"sb-1", "sb-gone"}}
	require.NoError(t, w.store.CreateGroup(ctx, &g))
	_, err := w.store.CreateSandbox(ctx, schemas.SandboxStatus{ID: "sb-1", GroupID: "g", State: schemas.StateCreated, Tools: []string{"filesystem_tools"}})
	require.NoError(t, err)

	tests := []struct {
		name     string
		subject  string
		wantCode schemas.ErrorCode
		check    func(t *testing.T, r schemas.StatusReply)
	}{
		{name: "sandbox", subject: schemas.SandboxStatusSubject("sb-1"), check: func(t *testing.T, r schemas.StatusReply) {
			require.NotNil(t, r.Sandbox)
			assert.Equal(t, schemas.StateCreated, r.Sandbox.State)
		}},
		{name: "sandbox that does not exist", subject: schemas.SandboxStatusSubject("nope"), wantCode: schemas.CodeNotFound},
		{name: "group with its recorded sandboxes", subject: schemas.GroupStatusSubject("g"), check: func(t *testing.T, r schemas.StatusReply) {
			require.NotNil(t, r.Group)
			assert.Equal(t, schemas.GroupRunning, r.Group.State)
			require.Len(t, r.Sandboxes, 1, "sb-gone is not recorded")
			assert.Equal(t, "sb-1", r.Sandboxes[0].ID)
		}},
		{name: "group that does not exist", subject: schemas.GroupStatusSubject("nope"), wantCode: schemas.CodeNotFound},
		{name: "stats of a sandbox that is not running", subject: schemas.SandboxStatsSubject("sb-1"), wantCode: schemas.CodeConflict},
		{name: "stats of a sandbox that does not exist", subject: schemas.SandboxStatsSubject("nope"), wantCode: schemas.CodeNotFound},
		{name: "an id that is not one", subject: schemas.SandboxStatusSubject(strings.Repeat("x", 64)), wantCode: schemas.CodeBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := ask(t, nc, tt.subject)
			assert.Equal(t, "w1", r.Worker)
			if tt.wantCode != "" {
				require.NotNil(t, r.Error)
				assert.Equal(t, tt.wantCode, r.Error.Code)
				return
			}
			require.Nil(t, r.Error)
			tt.check(t, r)
		})
	}
}

// TestStatusRequestsShared checks that several workers share the request
// subjects in one queue group: the requests are spread over them.
func TestStatusRequestsShared(t *testing.T) {
	nc, _ := requestWorkers(t, 2)
	seen := map[string]int{}
	for range 40 {
		r := ask(t, nc, schemas.SandboxStatusSubject("nope"))
		seen[r.Worker]++
	}
	assert.Len(t, seen, 2, "got answers from %v, want both workers", seen)
}

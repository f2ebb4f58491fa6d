package orchestrator

import (
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/internal/natstest"
	"github.com/sandox/sandox/schemas"
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
		stop, err := w.requests.Serve(t.Context())
		require.NoError(t, err)
		t.Cleanup(stop)
		if first == nil {
			first = w
		}
	}
	return natstest.Connect(t, ns), first
}

// TestStatusRequestsWired checks the requests part as NewWorker assembles
// it (package requests tests its answers): the workers share the request
// subjects in one queue group, and a stats request reaches the sandbox
// lifecycle, which refuses a sandbox that is not running.
func TestStatusRequestsWired(t *testing.T) {
	nc, w := requestWorkers(t, 2)
	_, err := w.store.CreateSandbox(t.Context(), schemas.SandboxStatus{ID: "sb-1", GroupID: "g", State: schemas.StateCreated, Tools: []string{"filesystem_tools"}})
	require.NoError(t, err)
	reply := func(subject string) schemas.StatusReply {
		m, err := nc.Request(subject, nil, 5*time.Second)
		require.NoError(t, err)
		var r schemas.StatusReply
		require.NoError(t, json.Unmarshal(m.Data, &r))
		return r
	}

	seen := map[string]int{}
	for range 40 {
		r := reply(schemas.SandboxStatusSubject("nope"))
		require.NotNil(t, r.Error)
		assert.Equal(t, schemas.CodeNotFound, r.Error.Code)
		seen[r.Worker]++
	}
	assert.Len(t, seen, 2, "got answers from %v, want both workers", seen)

	r := reply(schemas.SandboxStatsSubject("sb-1"))
	require.NotNil(t, r.Error)
	assert.Equal(t, schemas.CodeConflict, r.Error.Code, r.Error.Message)
}

package sdk_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/sdk"
)

// TestBatchWithoutExecutorFailsAtOnce checks that a batch no executor
// takes fails as soon as the server says there are no responders, not
// after the SDK's first status poll, and says why.
func TestBatchWithoutExecutorFailsAtOnce(t *testing.T) {
	s := startSandox(t) // an orchestrator answers the SDK's status requests
	js, err := jetstream.New(s.nc)
	require.NoError(t, err)

	// A sandbox recorded as running whose executor is gone.
	kv, err := js.KeyValue(t.Context(), schemas.SandboxBucket)
	require.NoError(t, err)
	st, err := json.Marshal(schemas.SandboxStatus{ID: "sb-stale", GroupID: "g", State: schemas.StateRunning})
	require.NoError(t, err)
	_, err = kv.Put(t.Context(), "sb-stale", st)
	require.NoError(t, err)

	g := s.newGroup(t, sdk.GroupConfig{ID: "g"})
	actions := schemas.Actions{{Tool: "terminal_tools.run", Args: json.RawMessage(`{"command":"true"}`)}}
	tests := []struct {
		name, sandbox string
		want          error
		text          string
	}{
		{"a sandbox that does not exist", "sb-none", sdk.ErrNotFound, "sb-none"},
		{"a running sandbox without executor", "sb-stale", sdk.ErrSandboxGone, "no executor serves sandbox.sb-stale.actions"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			_, err := g.Attach(tt.sandbox).SendActions(t.Context(), actions)
			require.ErrorIs(t, err, tt.want)
			assert.Contains(t, err.Error(), tt.text)
			assert.Less(t, time.Since(start), 500*time.Millisecond, "the SDK's first status poll is at 1 s; no responders must come before")
		})
	}
}

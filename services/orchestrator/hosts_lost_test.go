package orchestrator

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
)

// TestHostsJudgedOnTheJudgesClock runs the lost-host detection of a worker
// on a real JetStream bucket against a host whose clock is ten minutes
// behind: while its heartbeats come it stays up, whatever its LastSeen
// says; once they stop, it is lost after HostLostAfter, and not before.
func TestHostsJudgedOnTheJudgesClock(t *testing.T) {
	w, _ := testWorker(t)
	w.cfg.HostLostAfter = 500 * time.Millisecond
	ctx := t.Context()
	hosts, err := w.js.KeyValue(ctx, schemas.HostsBucket)
	require.NoError(t, err)
	beat := func() {
		rec := schemas.HostStatus{Name: "skewed", State: schemas.HostUp, LastSeen: time.Now().Add(-10 * time.Minute).UTC()}
		data, err := json.Marshal(rec)
		require.NoError(t, err)
		_, err = hosts.Put(ctx, "skewed", data)
		require.NoError(t, err)
	}
	state := func() schemas.HostState {
		h, err := w.store.Host(ctx, "skewed")
		require.NoError(t, err)
		return h.State
	}
	for range 8 {
		beat()
		w.detectLostHosts(ctx)
		assert.Equal(t, schemas.HostUp, state(), "a host whose heartbeats come is up, though its clock is behind")
		assert.True(t, w.hostLive(ctx, "skewed"))
		time.Sleep(100 * time.Millisecond)
	}
	// Silent from now on.
	w.detectLostHosts(ctx)
	assert.Equal(t, schemas.HostUp, state(), "not lost before HostLostAfter")
	time.Sleep(700 * time.Millisecond)
	w.detectLostHosts(ctx)
	assert.Equal(t, schemas.HostLost, state(), "lost after HostLostAfter of silence")
	assert.False(t, w.hostLive(ctx, "skewed"))
}

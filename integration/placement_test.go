package integration

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/internal/docker"
	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/sdk"
	"github.com/sandox/sandox/services/auth"
)

// TestHostOfARealEngine checks, on real Docker, what a worker without a
// host name records: the host is named after the engine's id, its record
// carries the engine's id and capacity, and a sandbox's status names the
// host it was placed on, as the stats request answered by that host does.
func TestHostOfARealEngine(t *testing.T) {
	ctx := t.Context()
	eng, err := docker.NewRuntime(env.docker).Host(ctx)
	require.NoError(t, err)
	want := strings.NewReplacer(":", "_").Replace(eng.ID)

	g := newGroup(t, sdk.GroupConfig{ID: "it-host", Placement: schemas.PlacementPack})
	sb := startSandbox(t, g, "it-host-1", sdk.SandboxOptions{})
	st, err := sb.Refresh(ctx)
	require.NoError(t, err)
	assert.Equal(t, want, st.Host, "the sandbox's host")
	stats, err := sb.Stats(ctx)
	require.NoError(t, err)
	assert.Equal(t, "it-host-1", stats.SandboxID)

	control, err := connectAs(auth.RoleControl)
	require.NoError(t, err)
	t.Cleanup(control.Close)
	js, err := jetstream.New(control)
	require.NoError(t, err)
	kv, err := js.KeyValue(ctx, schemas.HostsBucket)
	require.NoError(t, err)
	var rec schemas.HostStatus
	require.Eventually(t, func() bool {
		e, err := kv.Get(ctx, want)
		return err == nil && json.Unmarshal(e.Value(), &rec) == nil && rec.Sandboxes >= 1
	}, 10*time.Second, 100*time.Millisecond, "the host's record counts the sandbox")
	assert.Equal(t, schemas.HostUp, rec.State)
	assert.Equal(t, eng.ID, rec.EngineID)
	assert.Equal(t, eng.CPUs, rec.CPUs)
	assert.Equal(t, eng.MemoryBytes, rec.MemoryBytes)
	assert.Contains(t, rec.Workers, env.worker.Worker)
}

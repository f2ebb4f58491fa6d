package placement

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/internal/natstest"
	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/schemas/resources"
	"github.com/sandox/sandox/services/orchestrator/state"
)

// testStore starts an embedded NATS server with sandox's buckets.
func testStore(t *testing.T) *state.Store {
	t.Helper()
	js := natstest.JetStream(t, natstest.Connect(t, natstest.Start(t)))
	require.NoError(t, state.Setup(t.Context(), js))
	st, err := state.OpenStore(t.Context(), js)
	require.NoError(t, err)
	return st
}

// addHost records a live host of cpus and memory on its own engine.
func addHost(t *testing.T, st *state.Store, name string, cpus int, memory int64) {
	t.Helper()
	h := schemas.HostStatus{Name: name, State: schemas.HostUp, EngineID: "engine-" + name, CPUs: cpus, MemoryBytes: memory, LastSeen: time.Now().UTC()}
	_, err := st.UpdateHost(t.Context(), name, nil, func(hs *schemas.HostStatus) error { *hs = h; return nil })
	require.NoError(t, err)
}

// addSandbox records sandbox id of group on host.
func addSandbox(t *testing.T, st *state.Store, group, id, host string) {
	t.Helper()
	_, err := st.CreateSandbox(t.Context(), schemas.SandboxStatus{ID: id, GroupID: group, Host: host})
	require.NoError(t, err)
	require.NoError(t, st.JoinGroup(t.Context(), group, id))
}

func createGroup(t *testing.T, st *state.Store, id string, spec schemas.GroupSpec) schemas.GroupStatus {
	t.Helper()
	g := schemas.GroupStatus{ID: id, State: schemas.GroupRunning, Spec: spec}
	require.NoError(t, st.CreateGroup(t.Context(), &g))
	return g
}

func codeOf(err error) schemas.ErrorCode {
	var se *schemas.Error
	if errors.As(err, &se) {
		return se.Code
	}
	return ""
}

// TestPlaceHere places on the worker's own host when no host or only it is
// live, without a dry run.
func TestPlaceHere(t *testing.T) {
	st := testStore(t)
	p := New(st, "host-a", time.Minute)
	g := createGroup(t, st, "g", schemas.GroupSpec{})
	host, err := p.Place(t.Context(), g, schemas.SandboxSpec{ID: "sb"})
	require.NoError(t, err)
	assert.Equal(t, "host-a", host, "no host recorded")
	addHost(t, st, "host-a", 1, 1<<30)
	host, err = p.Place(t.Context(), g, schemas.SandboxSpec{ID: "sb", Compute: &schemas.ComputeResources{Memory: "64GiB"}})
	require.NoError(t, err)
	assert.Equal(t, "host-a", host, "the only live host, even when it is too small: its admission answers")
}

// TestPlaceByPolicy spreads a group's sandboxes over the hosts, or packs
// them, then prefers the host with the most room, and records each
// placement in the group.
func TestPlaceByPolicy(t *testing.T) {
	st := testStore(t)
	ctx := t.Context()
	for _, h := range []string{"host-a", "host-b", "host-c"} {
		addHost(t, st, h, 4, 8<<30)
	}
	// host-c is the fullest: another group's sandbox holds most of it.
	require.NoError(t, st.UpdateLedger(ctx, state.LedgerKey("engine-host-c"), func(l *resources.Ledger) error {
		return l.Admit("other", schemas.ResolvedResources{NanoCPUs: 3e9, MemoryBytes: 6 << 30}, resources.Host{CPUs: 4, MemoryBytes: 8 << 30}, 1)
	}))
	p := New(st, "host-a", time.Minute)

	spread := createGroup(t, st, "spread", schemas.GroupSpec{})
	addSandbox(t, st, "spread", "s1", "host-a")
	host, err := p.Place(ctx, spread, schemas.SandboxSpec{ID: "s2"})
	require.NoError(t, err)
	assert.Equal(t, "host-b", host, "spread: the fewest of the group's, then the most room")
	g, _, err := st.Group(ctx, "spread")
	require.NoError(t, err)
	assert.Equal(t, "host-b", g.Placing["s2"].Host, "the placement is recorded in the group")
	host, err = p.Place(ctx, g, schemas.SandboxSpec{ID: "s3"})
	require.NoError(t, err)
	assert.Equal(t, "host-c", host, "s2 being placed on host-b counts there")

	pack := createGroup(t, st, "pack", schemas.GroupSpec{Placement: schemas.PlacementPack})
	addSandbox(t, st, "pack", "p1", "host-b")
	host, err = p.Place(ctx, pack, schemas.SandboxSpec{ID: "p2"})
	require.NoError(t, err)
	assert.Equal(t, "host-b", host, "pack: the most of the group's")
}

// TestPlaceNowhere refuses a sandbox that fits on no host, naming each
// host's reason, a bad spec, and a placement among no hosts.
func TestPlaceNowhere(t *testing.T) {
	st := testStore(t)
	ctx := t.Context()
	addHost(t, st, "host-a", 2, 2<<30)
	addHost(t, st, "host-b", 2, 2<<30)
	p := New(st, "host-a", time.Minute)
	g := createGroup(t, st, "g", schemas.GroupSpec{})

	_, err := p.Place(ctx, g, schemas.SandboxSpec{ID: "big", Compute: &schemas.ComputeResources{Memory: "4GiB"}})
	assert.Equal(t, schemas.CodeResourceExhausted, codeOf(err))
	assert.ErrorContains(t, err, "sandbox big fits on no host: host host-a: ")
	assert.ErrorContains(t, err, "; host host-b: ")

	_, err = p.Place(ctx, g, schemas.SandboxSpec{ID: "bad", Compute: &schemas.ComputeResources{Memory: "lots"}})
	assert.Error(t, err)
	assert.NotEqual(t, schemas.CodeResourceExhausted, codeOf(err))

	_, err = p.On(ctx, map[string]schemas.HostStatus{}, g, schemas.SandboxSpec{ID: "x"})
	assert.Equal(t, schemas.CodeUnavailable, codeOf(err))
}

// TestPrunePlacing forgets finished and stale placements.
func TestPrunePlacing(t *testing.T) {
	now := time.Now()
	g := schemas.GroupStatus{Sandboxes: []string{"done"}, Placing: map[string]schemas.Placed{
		"done":  {Host: "a", At: now},
		"stale": {Host: "a", At: now.Add(-placingFor - time.Second)},
		"fresh": {Host: "b", At: now.Add(-time.Second)},
	}}
	prunePlacing(&g, now)
	assert.Equal(t, map[string]schemas.Placed{"fresh": {Host: "b", At: now.Add(-time.Second)}}, g.Placing)
}

func TestShare(t *testing.T) {
	tests := []struct {
		name           string
		capacity, used int64
		want           float64
	}{
		{"unknown capacity", 0, 5, 1},
		{"half", 10, 5, 0.5},
		{"overcommitted", 10, 20, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, share(tt.capacity, tt.used))
		})
	}
}

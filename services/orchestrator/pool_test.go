package orchestrator

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/orchestrator/pool"
	"github.com/sandox/sandox/services/orchestrator/runtime"
	"github.com/sandox/sandox/services/orchestrator/wire"
)

// newPoolHarness runs a worker with a warm pool of size and waits until
// the pool is full.
func newPoolHarness(t *testing.T, size int, change ...func(*Config)) *harness {
	t.Helper()
	h := newHarness(t, append([]func(*Config){func(c *Config) { c.PoolSize = size }}, change...)...)
	h.eventually("the pool fills", func() bool { return h.w.pools.Ready("") == size })
	return h
}

// pooled lists the pool ids in the ledger.
func (h *harness) pooled() []string {
	h.t.Helper()
	var ids []string
	for id := range h.ledger() {
		if schemas.IsPoolID(id) {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// ping asks sandbox id's executor, as a client, whether it is ready.
func (h *harness) ping(id string) error {
	_, err := h.nc.Request(schemas.PingSubject(id), nil, 2*time.Second)
	return err
}

func TestPoolClaim(t *testing.T) {
	h := newPoolHarness(t, 2)
	pool := h.pooled()
	require.Len(t, pool, 2, "pooled sandboxes are in the ledger")
	for _, id := range pool {
		require.NoError(t, h.ping(id), "a pooled executor answers pings")
		_, err := h.nc.Request(schemas.ActionsSubject(id), []byte(`[]`), 500*time.Millisecond)
		require.ErrorIs(t, err, nats.ErrNoResponders, "a pooled executor runs no action")
	}
	h.createGroup("g1", schemas.GroupSpec{})
	events := h.events("sb1")

	start := time.Now()
	res := h.createSandbox("g1", "sb1", schemas.SandboxSpec{})
	require.Nil(t, res.Error)
	st := res.Sandboxes[0]
	assert.Equal(t, schemas.StateRunning, st.State)
	assert.True(t, st.FromPool)
	require.Contains(t, pool, st.PoolID)
	require.NoError(t, h.ping("sb1"), "the claimed sandbox answers under its own id")
	t.Logf("claim to first answer: %s", time.Since(start))
	ev := h.nextEvent(events, func(ev schemas.Event) bool { return ev.Kind == schemas.EventCreated })
	require.NotNil(t, ev.Sandbox)
	assert.True(t, ev.Sandbox.FromPool, "the event says the sandbox came from the pool")

	again := h.ok(h.command(schemas.StartSandbox, "g1", "sb1"))
	assert.Equal(t, schemas.StateRunning, again.Sandboxes[0].State, "start of a claimed sandbox returns at once")
	stored, err := h.sandbox("sb1")
	require.NoError(t, err)
	assert.True(t, stored.FromPool)
	assert.Equal(t, st.Container, stored.Container)
	assert.Contains(t, h.ledger(), "sb1")
	assert.NotContains(t, h.ledger(), st.PoolID, "the pool's allocation moved to the sandbox")
	assert.NoFileExists(t, filepath.Join(h.cfg.CredsDir, st.PoolID+".creds"), "the pool identity's file is gone")
	h.eventually("the pool refills", func() bool { return h.w.pools.Ready("") == 2 })

	// A restart serves the claimed sandbox again, from the claim file.
	require.NoError(t, h.rt.Restart(t.Context(), st.Container))
	h.eventually("the restarted sandbox answers", func() bool { return h.ping("sb1") == nil })

	h.ok(h.command(schemas.EndSandbox, "g1", "sb1"))
	_, err = h.sandbox(st.PoolID)
	assert.Equal(t, schemas.CodeNotFound, wire.Error(err).Code, "the pool record goes with the sandbox")
	_, err = h.rt.Inspect(t.Context(), st.Container)
	assert.ErrorIs(t, err, runtime.ErrNotFound)
	h.ok(h.command(schemas.EndGroup, "g1", ""))
	h.stop()
	h.requireNothingLeft("sb1", pool[0], pool[1])
}

// TestPoolIdentityRevoked checks that the pool identity is revoked by a
// claim (its connections dropped, a new one refused) and that a client can
// neither claim a pooled sandbox nor send it actions.
func TestPoolIdentityRevoked(t *testing.T) {
	h := newPoolHarness(t, 1)
	poolID := h.pooled()[0]
	poolCreds, err := os.ReadFile(h.w.ids.File(poolID))
	require.NoError(t, err)
	credsFile := filepath.Join(t.TempDir(), "pool.creds")
	require.NoError(t, os.WriteFile(credsFile, poolCreds, 0o600))

	// A client's claim is refused by the server.
	denied := make(chan error, 1)
	h.nc.SetErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		select {
		case denied <- err:
		default:
		}
	})
	client := h.nc
	require.NoError(t, client.Publish(schemas.ClaimSubject(poolID), []byte(`{"sandbox_id":"stolen"}`)))
	select {
	case err := <-denied:
		assert.ErrorContains(t, err, "Permissions Violation")
	case <-time.After(5 * time.Second):
		t.Fatal("a client's claim was not refused")
	}
	require.NoError(t, h.ping(poolID), "the refused claim changed nothing")

	old, err := nats.Connect(h.url, nats.UserCredentials(credsFile))
	require.NoError(t, err, "the pool identity works before the claim")
	closed := make(chan struct{})
	old.SetClosedHandler(func(*nats.Conn) { close(closed) })
	old.SetReconnectHandler(func(*nats.Conn) {})

	h.createGroup("g1", schemas.GroupSpec{})
	res := h.createSandbox("g1", "sb1", schemas.SandboxSpec{})
	require.Nil(t, res.Error)
	require.Equal(t, poolID, res.Sandboxes[0].PoolID)

	h.eventually("the pool identity's connection is dropped", func() bool { return !old.IsConnected() })
	old.Close()
	_, err = nats.Connect(h.url, nats.UserCredentials(credsFile), nats.MaxReconnects(0))
	require.Error(t, err, "the pool identity is refused after the claim")
	_, err = h.nc.Request(schemas.ActionsSubject(poolID), []byte(`[]`), 500*time.Millisecond)
	require.ErrorIs(t, err, nats.ErrNoResponders, "nothing answers under the pool id any more")
}

func TestPoolFallsBack(t *testing.T) {
	tests := []struct {
		name string
		spec schemas.SandboxSpec
	}{
		{"tool files", schemas.SandboxSpec{Tools: []schemas.ToolFile{toolFile}}},
		{"a disk size", schemas.SandboxSpec{Compute: &schemas.ComputeResources{Disk: "1GiB"}}},
		{"a CPU set", schemas.SandboxSpec{Compute: &schemas.ComputeResources{CPUSet: "1"}}},
		{"other families", schemas.SandboxSpec{Families: []string{"filesystem_tools"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newPoolHarness(t, 1)
			pool := h.pooled()
			h.createGroup("g1", schemas.GroupSpec{})
			res := h.createSandbox("g1", "sb1", tc.spec)
			require.Nil(t, res.Error, "%+v", res.Error)
			st := res.Sandboxes[0]
			assert.False(t, st.FromPool)
			assert.Equal(t, schemas.StateCreated, st.State, "a fresh create is not started")
			assert.Equal(t, pool, h.pooled(), "the pool is untouched")
			h.ok(h.command(schemas.StartSandbox, "g1", "sb1"))
			require.NoError(t, h.ping("sb1"))
		})
	}
}

func TestPoolClaimUpdatesResources(t *testing.T) {
	h := newPoolHarness(t, 1)
	h.createGroup("g1", schemas.GroupSpec{Compute: schemas.ComputeResources{Memory: "512MiB", CPU: "1", PIDs: 128}})
	res := h.createSandbox("g1", "sb1", schemas.SandboxSpec{})
	require.Nil(t, res.Error)
	st := res.Sandboxes[0]
	require.True(t, st.FromPool)
	spec, ok := h.rt.Spec(st.Container)
	require.True(t, ok, "container %s", st.Container)
	assert.Equal(t, int64(512<<20), spec.MemoryBytes)
	assert.Equal(t, int64(1e9), spec.NanoCPUs)
	assert.Equal(t, int64(128), spec.PIDs)
	assert.Equal(t, int64(512<<20), h.ledger()["sb1"].MemoryBytes)

}

// TestPoolCountsAgainstAdmission checks that pooled sandboxes hold their
// resources in the ledger: with two of one CPU each on a four-CPU host, a
// fresh create of three CPUs is refused, while a claim of three CPUs,
// which gives back its pooled sandbox's one, fits.
func TestPoolCountsAgainstAdmission(t *testing.T) {
	h := newPoolHarness(t, 2, func(c *Config) {
		c.PoolCompute = schemas.ComputeResources{CPU: "1"}
		c.PoolIdle = 0
	})
	h.createGroup("g1", schemas.GroupSpec{})
	fresh := h.command(schemas.CreateSandbox, "g1", "fresh")
	fresh.Sandbox = &schemas.SandboxSpec{Tools: []schemas.ToolFile{toolFile}, Compute: &schemas.ComputeResources{CPU: "3"}}
	h.refused(fresh, schemas.CodeResourceExhausted)

	res := h.createSandbox("g1", "claimed", schemas.SandboxSpec{Compute: &schemas.ComputeResources{CPU: "3"}})
	require.Nil(t, res.Error, "%+v", res.Error)
	assert.True(t, res.Sandboxes[0].FromPool)
	assert.Equal(t, int64(3e9), h.ledger()["claimed"].NanoCPUs)
	time.Sleep(2 * pool.Tick)
	assert.Len(t, h.pooled(), 1, "the refill does not fit: 3 + 1 of 4 CPUs")
}

func TestPoolShrinksWhenIdle(t *testing.T) {
	// The idle time leaves room to fill two sandboxes on a loaded machine
	// first (each fill counts from the pool's last use).
	h := newPoolHarness(t, 2, func(c *Config) { c.PoolIdle = 2 * time.Second })
	h.eventually("the idle pool empties", func() bool {
		containers, _ := h.rt.Counts()
		return h.w.pools.Ready("") == 0 && containers == 0 && len(h.ledger()) == 0
	})
	assert.Empty(t, h.pooled())
	// A create wakes it: it is made fresh, and the pool fills again.
	h.createGroup("g1", schemas.GroupSpec{})
	res := h.createSandbox("g1", "sb1", schemas.SandboxSpec{})
	require.Nil(t, res.Error)
	assert.False(t, res.Sandboxes[0].FromPool)
	h.eventually("the pool fills again", func() bool { return h.w.pools.Ready("") == 2 })
}

// TestPoolRefusesPoolIDs checks that a client cannot create a sandbox
// under a pool id.
func TestPoolRefusesPoolIDs(t *testing.T) {
	h := newHarness(t)
	h.createGroup("g1", schemas.GroupSpec{})
	res := h.createSandbox("g1", schemas.PoolIDPrefix+"mine", schemas.SandboxSpec{})
	require.NotNil(t, res.Error)
	assert.Equal(t, schemas.CodeBadRequest, res.Error.Code)
	assert.True(t, strings.Contains(res.Error.Message, "warm pool"), res.Error.Message)
}

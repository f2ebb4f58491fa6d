package orchestrator

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/orchestrator/pool"
	"github.com/sandox/sandox/services/orchestrator/runtime"
	"github.com/sandox/sandox/services/orchestrator/wire"
)

// groupPooled returns the records of the pooled sandboxes of group's
// pool ("" for the default pool) that wait to be claimed.
func (h *harness) groupPooled(group string) []schemas.SandboxStatus {
	h.t.Helper()
	var out []schemas.SandboxStatus
	for _, id := range h.pooled() {
		st, err := h.sandbox(id)
		if err == nil && st.Pooled && st.ClaimedBy == "" && st.PoolGroup == group {
			out = append(out, st)
		}
	}
	return out
}

// poolCount is how many sandboxes the worker's pool of key holds ready.
func (h *harness) poolCount(key string) int { return h.w.pools.Ready(key) }

// workerAnswers reports whether worker answers on its pool subject, as a
// running pool loop does.
func (h *harness) workerAnswers(worker string) bool {
	_, err := h.control.Request(schemas.PoolWorkerSubject(worker), nil, time.Second)
	return err == nil
}

// containerLabels returns the labels of the container with id.
func (h *harness) containerLabels(id string) map[string]string {
	spec, _ := h.rt.Spec(id)
	return spec.Labels
}

var pooledGroup = schemas.GroupSpec{
	Tools:   []schemas.ToolFile{toolFile},
	Compute: schemas.ComputeResources{CPU: "1", Memory: "256MiB"},
	Pool:    &schemas.PoolSpec{Size: 2},
}

func TestGroupPoolFillsAndClaims(t *testing.T) {
	h := newHarness(t)
	h.createGroup("g1", pooledGroup)
	h.eventually("the group's pool fills", func() bool { return h.poolCount("g1") == 2 })
	pool := h.groupPooled("g1")
	require.Len(t, pool, 2)
	for _, p := range pool {
		assert.Equal(t, "unit-worker", p.PoolWorker)
		assert.Equal(t, int64(1e9), p.Resources.NanoCPUs, "the group's compute")
		assert.Contains(t, p.Tools, "my_tools", "the group's tool file")
		l := h.containerLabels(p.Container)
		assert.Equal(t, "g1", l[runtime.LabelPoolGroup])
		assert.Equal(t, "unit-worker", l[runtime.LabelPoolWorker])
		assert.Empty(t, l[runtime.LabelGroup], "a pooled container is no group's sandbox")
	}
	assert.False(t, h.w.pools.Has(""), "no default pool")

	res := h.createSandbox("g1", "sb1", schemas.SandboxSpec{})
	require.Nil(t, res.Error, "%+v", res.Error)
	st := res.Sandboxes[0]
	assert.True(t, st.FromPool)
	assert.Equal(t, schemas.StateRunning, st.State)
	assert.True(t, slices.ContainsFunc(pool, func(p schemas.SandboxStatus) bool { return p.ID == st.PoolID }))
	require.NoError(t, h.ping("sb1"))
	h.eventually("the group's pool refills", func() bool { return h.poolCount("g1") == 2 })

	// A sandbox that adds tool files of its own is made afresh.
	res = h.createSandbox("g1", "sb2", schemas.SandboxSpec{Tools: []schemas.ToolFile{{Name: "more.py", Content: toolFile.Content}}})
	require.Nil(t, res.Error, "%+v", res.Error)
	assert.False(t, res.Sandboxes[0].FromPool)
}

func TestGroupPoolNeverCrossesGroups(t *testing.T) {
	tests := []struct {
		name string
		spec schemas.GroupSpec
	}{
		{"the same spec without a pool", schemas.GroupSpec{Tools: pooledGroup.Tools, Compute: pooledGroup.Compute}},
		{"a group of its own pool", pooledGroup},
		{"no tool files", schemas.GroupSpec{Compute: pooledGroup.Compute}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, func(c *Config) { c.PoolSize = 1 })
			h.createGroup("g1", pooledGroup)
			h.eventually("the pools fill", func() bool { return h.poolCount("g1") == 2 && h.poolCount("") == 1 })
			mine := h.groupPooled("g1")
			h.createGroup("g2", tc.spec)
			if tc.spec.Pool != nil {
				// With both groups' pools full the host's 4 cores are
				// taken: a create before g2's pool is ready would be
				// made fresh and refused.
				h.eventually("g2's pool fills", func() bool { return h.poolCount("g2") == tc.spec.Pool.Size })
			}
			res := h.createSandbox("g2", "sb1", schemas.SandboxSpec{})
			require.Nil(t, res.Error, "%+v", res.Error)
			st := res.Sandboxes[0]
			assert.False(t, slices.ContainsFunc(mine, func(p schemas.SandboxStatus) bool { return p.ID == st.PoolID }),
				"g2's sandbox came from g1's pool (%s)", st.PoolID)
			if st.FromPool {
				p, err := h.sandbox(st.PoolID)
				require.NoError(t, err)
				assert.Contains(t, []string{"", "g2"}, p.PoolGroup)
			}
			assert.Equal(t, mine, h.groupPooled("g1"), "g1's pool is untouched")
		})
	}
}

func TestGroupPoolDrainedOnEndGroup(t *testing.T) {
	h := newHarness(t)
	h.createGroup("g1", pooledGroup)
	h.eventually("the group's pool fills", func() bool { return h.poolCount("g1") == 2 })
	pooled := h.groupPooled("g1")
	res := h.createSandbox("g1", "sb1", schemas.SandboxSpec{})
	require.Nil(t, res.Error)
	require.True(t, res.Sandboxes[0].FromPool)

	h.ok(h.command(schemas.EndGroup, "g1", ""))
	assert.False(t, h.w.pools.Has("g1"))
	h.eventually("nothing of the group is left", func() bool {
		containers, _ := h.rt.Counts()
		return containers == 0
	})
	require.Never(t, func() bool { return h.poolCount("g1") > 0 || len(h.pooled()) > 0 }, 3*pool.Tick, 50*time.Millisecond,
		"the pool is not filled again")
	var ids []string
	for _, p := range pooled {
		ids = append(ids, p.ID)
	}
	h.requireNothingLeft(append(ids, "sb1")...)

	// A new group of the same id gets a pool again.
	h.createGroup("g1", pooledGroup)
	h.eventually("the new group's pool fills", func() bool { return h.poolCount("g1") == 2 })
}

// TestGroupPoolDrainedWhenGroupGone checks that a worker drains the pool
// of a group ended by another worker: the group's record is gone.
func TestGroupPoolDrainedWhenGroupGone(t *testing.T) {
	h := newHarness(t)
	h.createGroup("g1", pooledGroup)
	h.eventually("the group's pool fills", func() bool { return h.poolCount("g1") == 2 })
	require.NoError(t, h.w.store.DeleteGroup(t.Context(), "g1"))
	h.eventually("the pool of the group that is gone is drained", func() bool {
		containers, _ := h.rt.Counts()
		return containers == 0 && !h.w.pools.Has("g1") && len(h.ledger()) == 0
	})
	h.requireNothingLeft()
}

func TestGroupPoolShrinksWhenIdle(t *testing.T) {
	h := newHarness(t)
	spec := pooledGroup
	// The idle time leaves room to fill two sandboxes on a loaded machine.
	spec.Pool = &schemas.PoolSpec{Size: 2, IdleShrinkSeconds: 2}
	h.createGroup("g1", spec)
	h.eventually("the group's pool fills", func() bool { return h.poolCount("g1") == 2 })
	h.eventually("the idle pool empties", func() bool {
		containers, _ := h.rt.Counts()
		return h.poolCount("g1") == 0 && containers == 0 && len(h.ledger()) == 0
	})
	assert.Empty(t, h.pooled())
	res := h.createSandbox("g1", "sb1", schemas.SandboxSpec{})
	require.Nil(t, res.Error)
	assert.False(t, res.Sandboxes[0].FromPool, "the empty pool serves no claim")
	h.eventually("a create fills the pool again", func() bool { return h.poolCount("g1") == 2 })
}

func TestGroupPoolSpecChecked(t *testing.T) {
	tests := []struct {
		name string
		pool schemas.PoolSpec
	}{
		{"a negative size", schemas.PoolSpec{Size: -1}},
		{"too large", schemas.PoolSpec{Size: schemas.MaxPoolSize + 1}},
		{"a negative idle time", schemas.PoolSpec{Size: 1, IdleShrinkSeconds: -1}},
	}
	h := newHarness(t)
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cmd := h.command(schemas.CreateGroup, "bad-"+string(rune('a'+i)), "")
			cmd.Group = &schemas.GroupSpec{Pool: &tc.pool}
			h.refused(cmd, schemas.CodeBadRequest)
		})
	}
}

// TestPoolReapsDeadWorkers checks that the pooled sandboxes of workers
// that do not answer are removed by the workers that start, and those of
// a live worker are kept.
func TestPoolReapsDeadWorkers(t *testing.T) {
	h := newIdleHarness(t)
	ctx := t.Context()
	// Every worker is made before any runs (NewWorker updates the streams).
	dead, own := h.namedWorker("dead-worker", 0), h.namedWorker("unit-worker", 0)
	live := h.namedWorker("live-worker", 1)
	deadID, err := dead.sandboxes.PoolMaker().Fill(ctx, pool.Source{})
	require.NoError(t, err)
	ownID, err := own.sandboxes.PoolMaker().Fill(ctx, pool.Source{})
	require.NoError(t, err)

	t.Cleanup(runWorker(t, live))
	h.eventually("the live worker's pool fills", func() bool { return live.pools.Ready("") == 1 })
	h.start()
	// Run reaps before the pool loop answers on the worker's subject.
	h.eventually("the worker runs", func() bool { return h.workerAnswers("unit-worker") })
	for _, id := range []string{deadID, ownID} {
		h.eventually("the pooled sandbox "+id+" is reaped", func() bool {
			_, err := h.sandbox(id)
			return err != nil && wire.Error(err).Code == schemas.CodeNotFound
		})
		_, err := h.rt.Inspect(ctx, runtime.ContainerName(id))
		assert.ErrorIs(t, err, runtime.ErrNotFound)
		assert.NotContains(t, h.ledger(), id)
	}
	require.Len(t, h.pooled(), 1, "the live worker's pooled sandbox is kept")
	assert.True(t, live.pools.Ready("") == 1)
	assert.True(t, h.workerAnswers("live-worker"))
	assert.False(t, h.workerAnswers("dead-worker"))
}

// TestPoolReap checks which pooled sandboxes a reap removes: a dead
// worker's always, those of the worker's own name only when it starts.
func TestPoolReap(t *testing.T) {
	h := newIdleHarness(t)
	ctx := t.Context()
	dead := h.namedWorker("dead-worker", 0)
	deadID, err := dead.sandboxes.PoolMaker().Fill(ctx, pool.Source{})
	require.NoError(t, err)
	ownID, err := h.w.sandboxes.PoolMaker().Fill(ctx, pool.Source{})
	require.NoError(t, err)

	h.w.pools.Reap(ctx, false)
	_, err = h.sandbox(deadID)
	assert.Equal(t, schemas.CodeNotFound, wire.Error(err).Code, "a dead worker's pooled sandbox is reaped")
	_, err = h.sandbox(ownID)
	require.NoError(t, err, "a running worker keeps its own")

	h.w.pools.Reap(ctx, true)
	h.requireNothingLeft(deadID, ownID)
}

// namedWorker makes, without running it, a worker named name with a
// default pool of size on the harness's NATS and runtime.
func (h *harness) namedWorker(name string, size int) *Worker {
	h.t.Helper()
	cfg := h.cfg
	defer func() { h.cfg = cfg }()
	h.cfg.Worker, h.cfg.PoolSize = name, size
	return h.newWorker()
}

// TestPoolReapOtherHost checks the pool of a worker of another host that
// stopped answering (a lost host): a worker here releases its records,
// identities and allocations, and the containers, which only that host
// can reach, go when a worker starts there again.
func TestPoolReapOtherHost(t *testing.T) {
	h := newIdleHarness(t, func(c *Config) { c.System = "unit" })
	ctx := t.Context()
	onOther := func() *Worker {
		cfg := h.cfg
		defer func() { h.cfg = cfg }()
		h.cfg.Worker, h.cfg.Host = "other-worker", "other-host"
		return h.newWorker()
	}
	gone, back := onOther(), onOther()
	id, err := gone.sandboxes.PoolMaker().Fill(ctx, pool.Source{})
	require.NoError(t, err)
	p, err := h.sandbox(id)
	require.NoError(t, err)
	require.Equal(t, "other-host", p.Host)

	h.w.pools.Reap(ctx, false)
	_, err = h.sandbox(id)
	assert.Equal(t, schemas.CodeNotFound, wire.Error(err).Code, "the record is released")
	_, err = h.rt.Inspect(ctx, p.Container)
	require.NoError(t, err, "the container is the other host's to remove")

	t.Cleanup(runWorker(t, back))
	h.eventually("the host's worker runs", func() bool { return h.workerAnswers("other-worker") })
	h.eventually("the host's worker removes what is left of its pool", func() bool {
		containers, volumes := h.rt.Counts()
		return containers == 0 && volumes == 0 && len(h.ledger()) == 0
	})
	h.eventually("and the credentials", func() bool {
		left, _ := filepath.Glob(filepath.Join(h.cfg.CredsDir, "*"))
		return len(left) == 0
	})
}

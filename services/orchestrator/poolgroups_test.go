package orchestrator

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
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
func (h *harness) poolCount(key string) int {
	if p := h.w.pools.get(key); p != nil {
		return p.count()
	}
	return 0
}

// containerLabels returns the labels of the container with id.
func (h *harness) containerLabels(id string) map[string]string {
	h.rt.mu.Lock()
	defer h.rt.mu.Unlock()
	c, err := h.rt.find(id)
	if err != nil {
		return nil
	}
	return c.spec.Labels
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
		assert.Equal(t, "g1", l[LabelPoolGroup])
		assert.Equal(t, "unit-worker", l[LabelPoolWorker])
		assert.Empty(t, l[LabelGroup], "a pooled container is no group's sandbox")
	}
	assert.Nil(t, h.w.pools.get(""), "no default pool")

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
	pool := h.groupPooled("g1")
	res := h.createSandbox("g1", "sb1", schemas.SandboxSpec{})
	require.Nil(t, res.Error)
	require.True(t, res.Sandboxes[0].FromPool)

	h.ok(h.command(schemas.EndGroup, "g1", ""))
	assert.Nil(t, h.w.pools.get("g1"))
	h.eventually("nothing of the group is left", func() bool {
		containers, _ := h.rt.counts()
		return containers == 0
	})
	require.Never(t, func() bool { return h.poolCount("g1") > 0 || len(h.pooled()) > 0 }, 3*poolTick, 50*time.Millisecond,
		"the pool is not filled again")
	var ids []string
	for _, p := range pool {
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
	require.NoError(t, h.w.store.deleteGroup(t.Context(), "g1"))
	h.eventually("the pool of the group that is gone is drained", func() bool {
		containers, _ := h.rt.counts()
		return containers == 0 && h.w.pools.get("g1") == nil
	})
	h.requireNothingLeft()
}

func TestGroupPoolShrinksWhenIdle(t *testing.T) {
	h := newHarness(t)
	spec := pooledGroup
	spec.Pool = &schemas.PoolSpec{Size: 2, IdleShrinkSeconds: 0.5}
	h.createGroup("g1", spec)
	h.eventually("the group's pool fills", func() bool { return h.poolCount("g1") == 2 })
	h.eventually("the idle pool empties", func() bool {
		containers, _ := h.rt.counts()
		return h.poolCount("g1") == 0 && containers == 0
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

// TestPoolReapsDeadWorkers checks that a worker that starts removes the
// unclaimed pooled sandboxes of workers that do not answer (and of its own
// name, from before it started), and keeps those of a live worker.
func TestPoolReapsDeadWorkers(t *testing.T) {
	h := newIdleHarness(t)
	ctx := t.Context()
	fill := func(name string) string {
		t.Helper()
		h.cfg.Worker = name
		w := h.newWorker()
		h.cfg.Worker = "unit-worker"
		id, err := w.fillPool(ctx, poolSource{})
		require.NoError(t, err)
		return id
	}
	dead, own := fill("dead-worker"), fill("unit-worker")

	h.cfg.Worker, h.cfg.PoolSize = "live-worker", 1
	live := h.newWorker()
	h.cfg.Worker, h.cfg.PoolSize = "unit-worker", 0
	t.Cleanup(runWorker(t, live))
	h.eventually("the live worker's pool fills", func() bool { return live.pools.get("").count() == 1 })
	kept := slices.DeleteFunc(h.pooled(), func(id string) bool { return id == dead || id == own })
	require.Len(t, kept, 1)

	h.w = h.newWorker()
	h.start()
	h.createGroup("g1", schemas.GroupSpec{}) // Run reaps before it consumes
	for _, id := range []string{dead, own} {
		_, err := h.sandbox(id)
		assert.Equal(t, schemas.CodeNotFound, wireError(err).Code, "the pooled sandbox %s is reaped", id)
		_, err = h.rt.Inspect(ctx, ContainerName(id))
		assert.ErrorIs(t, err, ErrNotFound)
		assert.NotContains(t, h.ledger(), id)
	}
	assert.Equal(t, kept, h.pooled(), "the live worker's pooled sandbox is kept")
	assert.True(t, h.w.workerAlive(ctx, "live-worker"))
	assert.False(t, h.w.workerAlive(ctx, "dead-worker"))
}

// TestPoolReapWhileRunning checks that a running worker's periodic reap
// removes the pool of a worker that stopped answering.
func TestPoolReapWhileRunning(t *testing.T) {
	h := newHarness(t)
	h.cfg.Worker = "gone-worker"
	gone := h.newWorker()
	id, err := gone.fillPool(t.Context(), poolSource{})
	require.NoError(t, err)
	h.w.reapPools(context.Background(), false)
	_, err = h.sandbox(id)
	assert.Equal(t, schemas.CodeNotFound, wireError(err).Code)
	h.requireNothingLeft(id)
}

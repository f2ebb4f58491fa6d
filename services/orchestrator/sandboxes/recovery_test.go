package sandboxes

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/schemas/resources"
	"github.com/sandox/sandox/services/orchestrator/runtime"
)

// TestReconcile leaves resources of sandboxes that have no record (a
// container, a ledger allocation, a disk, an identity) beside those of a
// sandbox that has one, and checks that Reconcile releases only the
// former.
func TestReconcile(t *testing.T) {
	f := newFixture(t, func(f *fixture, _ *Parts) { f.cfg.System = "sys" })
	ctx := t.Context()
	g := f.group("g1", schemas.GroupSpec{})
	alive := f.running(g, "alive")
	ghost := f.running(g, "ghost1")
	require.NoError(t, f.store.DeleteSandbox(ctx, "ghost1")) // a worker died half way through its end
	host := resources.Host{CPUs: 4, MemoryBytes: 8 << 30}
	require.NoError(t, f.ledger.Admit(ctx, "ghost2", schemas.ResolvedResources{MemoryBytes: 1 << 30}, host, 0))
	_, err := f.disks.Attach(ctx, "ghost3", 64<<20, 0, 0)
	require.NoError(t, err)
	require.NoError(t, f.s.ids.Mint(ctx, "ghost4"))

	f.s.Reconcile(ctx)
	_, err = f.rt.Inspect(ctx, ghost.Container)
	require.ErrorIs(t, err, runtime.ErrNotFound, "the container of a sandbox without a record")
	_, err = f.rt.Inspect(ctx, alive.Container)
	require.NoError(t, err, "the container of a recorded sandbox")
	l, err := f.ledger.Read(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"alive"}, keys(l.Allocations))
	assert.Zero(t, f.disks.Count())
	holders, err := f.s.ids.Holders(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"alive"}, holders)
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestLostAndForeignContainers checks the tidying after a host comes
// back: a sandbox whose container the engine no longer has is marked lost
// (MarkMissing), what a lost sandbox holds is removed (CleanLost), and the
// container of a sandbox now recorded on another host goes
// (RemoveForeign).
func TestLostAndForeignContainers(t *testing.T) {
	f := newFixture(t, func(f *fixture, _ *Parts) { f.cfg.System = "sys" })
	ctx := t.Context()
	g := f.group("g1", schemas.GroupSpec{})
	gone := f.running(g, "gone")
	moved := f.running(g, "moved")
	kept := f.running(g, "kept")

	require.NoError(t, f.rt.Remove(ctx, gone.Container)) // removed by hand
	f.s.MarkMissing(ctx)
	st, _, err := f.store.Sandbox(ctx, "gone")
	require.NoError(t, err)
	assert.Equal(t, schemas.StateLost, st.State)
	assert.Equal(t, schemas.LostContainerMissing, st.Reason)
	assert.Contains(t, f.kinds("gone"), schemas.EventExited)

	f.s.CleanLost(ctx)
	l, err := f.ledger.Read(ctx)
	require.NoError(t, err)
	assert.NotContains(t, l.Allocations, "gone", "a lost sandbox's allocation is released")

	_, err = f.store.UpdateSandbox(ctx, "moved", func(st *schemas.SandboxStatus) error {
		st.Host = "h2"
		return nil
	})
	require.NoError(t, err)
	f.s.RemoveForeign(ctx)
	_, err = f.rt.Inspect(ctx, moved.Container)
	require.ErrorIs(t, err, runtime.ErrNotFound, "the container of a sandbox made again elsewhere")
	_, err = f.rt.Inspect(ctx, kept.Container)
	require.NoError(t, err)
}

package sandboxes

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/orchestrator/pool"
)

// TestPoolSandboxes runs a warm pool of one sandbox made by the service's
// pool side, claims it for a sandbox with other limits, checks that the
// claimed sandbox runs under its own identity and limits, and ends it:
// nothing of it or of its pooled sandbox is left.
func TestPoolSandboxes(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	pools := pool.New(pool.Config{Worker: f.cfg.Worker, Host: f.cfg.Host, Size: 1, CanUpdate: true, CredsDir: f.cfg.CredsDir}, pool.Parts{
		Maker: f.s.PoolMaker(), Claimer: f.s.PoolClaimer(), Measure: f.s.Host, Egress: f.s.isolation,
	}, f.store, f.nc, log)
	runCtx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		pools.Run(runCtx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	f.eventually("the pool is full", func() bool { return pools.Ready("") == 1 })

	g := f.group("g1", schemas.GroupSpec{})
	st, claimed, err := pools.Claim(ctx, g, schemas.SandboxSpec{ID: "sb1", Compute: &schemas.ComputeResources{Memory: "300MiB"}}, "cmd-1")
	require.NoError(t, err)
	require.True(t, claimed, "a pooled sandbox fits")
	assert.True(t, st.FromPool)
	assert.Equal(t, schemas.StateRunning, st.State)
	spec, ok := f.rt.Spec(st.Container)
	require.True(t, ok)
	assert.Equal(t, int64(300<<20), spec.MemoryBytes, "the claim's limits")
	assert.Equal(t, []schemas.EventKind{schemas.EventCreated, schemas.EventStarted}, f.kinds("sb1"))
	l, err := f.ledger.Read(ctx)
	require.NoError(t, err)
	assert.Contains(t, l.Allocations, "sb1")
	assert.NotContains(t, l.Allocations, st.PoolID, "the pool's allocation moved to the sandbox")

	cancel() // no refill while the test checks that nothing is left
	<-done
	_, err = f.s.EndSandbox(ctx, command(schemas.EndSandbox, "g1", "sb1"))
	require.NoError(t, err)
	f.requireNothingLeft("sb1", st.PoolID)
}

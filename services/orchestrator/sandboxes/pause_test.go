package sandboxes

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
)

// TestPauseResume pauses and resumes a running sandbox on an engine that
// can freeze containers: its container is frozen, its CPU leaves the
// ledger and comes back, and each command repeated is no change or
// refused as it should.
func TestPauseResume(t *testing.T) {
	f := newFixture(t, func(f *fixture, p *Parts) { p.Freezer = f.rt })
	ctx := t.Context()
	g := f.group("g1", schemas.GroupSpec{Compute: schemas.ComputeResources{CPU: "1", Memory: "256MiB"}})
	st := f.running(g, "sb1")

	_, err := f.s.PauseOrResume(ctx, command(schemas.ResumeSandbox, "g1", "sb1"))
	require.ErrorIs(t, err, schemas.CodeConflict, "resume of a running sandbox")
	res, err := f.s.PauseOrResume(ctx, command(schemas.PauseSandbox, "g1", "sb1"))
	require.NoError(t, err)
	assert.Equal(t, schemas.StatePaused, res.Sandboxes[0].State)
	assert.True(t, f.rt.Paused(st.Container))
	l, err := f.ledger.Read(ctx)
	require.NoError(t, err)
	assert.Zero(t, l.Allocations["sb1"].NanoCPUs, "a paused sandbox holds no CPU")
	assert.Positive(t, l.Allocations["sb1"].MemoryBytes, "its memory stays")
	_, err = f.s.PauseOrResume(ctx, command(schemas.PauseSandbox, "g1", "sb1"))
	require.NoError(t, err, "pausing a paused sandbox is no change")
	_, err = f.s.StartSandbox(ctx, command(schemas.StartSandbox, "g1", "sb1"))
	require.ErrorIs(t, err, schemas.CodeConflict, "a paused sandbox is resumed, not started")

	res, err = f.s.PauseOrResume(ctx, command(schemas.ResumeSandbox, "g1", "sb1"))
	require.NoError(t, err)
	assert.Equal(t, schemas.StateRunning, res.Sandboxes[0].State)
	assert.False(t, f.rt.Paused(st.Container))
	l, err = f.ledger.Read(ctx)
	require.NoError(t, err)
	assert.Equal(t, st.Resources.NanoCPUs, l.Allocations["sb1"].NanoCPUs, "its CPU is admitted again")
	assert.Equal(t, []schemas.EventKind{schemas.EventCreated, schemas.EventStarted, schemas.EventPaused, schemas.EventResumed}, f.kinds("sb1"))
}

// TestUnsupported checks that an engine without a freezer refuses pause
// and resume, that one without an archiver refuses the checkpoint
// commands and forks, and that a pooled sandbox is not paused.
func TestUnsupported(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	g := f.group("g1", schemas.GroupSpec{})
	f.running(g, "sb1")
	_, err := f.s.PauseOrResume(ctx, command(schemas.PauseSandbox, "g1", "sb1"))
	require.ErrorIs(t, err, schemas.CodeUnsupported)
	_, err = f.s.PauseOrResume(ctx, command(schemas.PauseSandbox, "g1", schemas.PoolIDPrefix+"x"))
	require.ErrorIs(t, err, schemas.CodeBadRequest)
	for _, kind := range []schemas.CommandKind{schemas.TakeCheckpoint, schemas.ListCheckpoints, schemas.DiffCheckpoints, schemas.RollbackSandbox} {
		_, err = f.s.Checkpoint(ctx, command(kind, "g1", "sb1"))
		require.ErrorIs(t, err, schemas.CodeUnsupported, "%s", kind)
	}
	_, err = f.s.Make(ctx, g, schemas.SandboxSpec{ID: "fork", FromCheckpoint: &schemas.CheckpointRef{SandboxID: "sb1", Checkpoint: "c1"}}, "cmd-fork")
	require.ErrorIs(t, err, schemas.CodeUnsupported)
	f.s.RunAutoCheckpoints(ctx) // returns at once without checkpoints
}

package sandboxes

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/orchestrator/runtime"
)

// TestSandboxLifecycle makes, starts, reads the stats of and ends a
// sandbox with a disk limit through the commands a worker hands the
// service, and checks its events and that nothing of it is left.
func TestSandboxLifecycle(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	g := f.group("g1", schemas.GroupSpec{})
	st, err := f.s.Make(ctx, g, schemas.SandboxSpec{ID: "sb1", Compute: &schemas.ComputeResources{Disk: "64MiB"}}, "cmd-1")
	require.NoError(t, err)
	assert.Equal(t, schemas.StateCreated, st.State)
	assert.Equal(t, "h1", st.Host)
	assert.NotEmpty(t, st.DiskDevice, "a disk limit gets a disk")
	spec, ok := f.rt.Spec(st.Container)
	require.True(t, ok)
	assert.True(t, spec.ReadOnlyRoot && spec.Hardened && spec.Init, "the hardened spec")
	assert.Equal(t, "sandox", spec.Network)

	res, err := f.s.StartSandbox(ctx, command(schemas.StartSandbox, "g1", "sb1"))
	require.NoError(t, err)
	assert.Equal(t, schemas.StateRunning, res.Sandboxes[0].State)
	res, err = f.s.StartSandbox(ctx, command(schemas.StartSandbox, "g1", "sb1"))
	require.NoError(t, err, "starting a running sandbox is no change")
	assert.Equal(t, schemas.StateRunning, res.Sandboxes[0].State)

	res, err = f.s.Stats(ctx, command(schemas.SandboxStats, "g1", "sb1"))
	require.NoError(t, err)
	require.NotNil(t, res.Stats)
	assert.Equal(t, "sb1", res.Stats.SandboxID)
	assert.Positive(t, res.Stats.DiskBytes, "the executor reports its workspace")

	_, err = f.s.StartSandbox(ctx, command(schemas.StartSandbox, "other-group", "sb1"))
	require.ErrorIs(t, err, schemas.CodeNotFound, "a sandbox of another group")

	res, err = f.s.EndSandbox(ctx, command(schemas.EndSandbox, "g1", "sb1"))
	require.NoError(t, err)
	assert.Equal(t, schemas.StateEnded, res.Sandboxes[0].State)
	assert.Equal(t, []schemas.EventKind{schemas.EventCreated, schemas.EventStarted, schemas.EventEnded}, f.kinds("sb1"))
	g2, _, err := f.store.Group(ctx, "g1")
	require.NoError(t, err)
	assert.Empty(t, g2.Sandboxes, "the group no longer lists it")
	f.requireNothingLeft("sb1")

	_, err = f.s.EndSandbox(ctx, command(schemas.EndSandbox, "g1", "sb1"))
	require.ErrorIs(t, err, schemas.CodeNotFound, "an ended sandbox")
}

// TestMakeRefusals checks what Make refuses before it makes anything, and
// that a refusal after the id was reserved leaves nothing behind.
func TestMakeRefusals(t *testing.T) {
	tests := []struct {
		name   string
		spec   schemas.SandboxSpec
		noDisk bool
		fail   string
		want   schemas.ErrorCode
	}{
		{name: "bad id", spec: schemas.SandboxSpec{ID: "no spaces"}, want: schemas.CodeBadRequest},
		{name: "bad compute", spec: schemas.SandboxSpec{ID: "x", Compute: &schemas.ComputeResources{CPU: "lots"}}, want: schemas.CodeBadRequest},
		{name: "disk below the minimum", spec: schemas.SandboxSpec{ID: "x", Compute: &schemas.ComputeResources{Disk: "1KiB"}}, want: schemas.CodeBadRequest},
		{name: "no disks here", spec: schemas.SandboxSpec{ID: "x", Compute: &schemas.ComputeResources{Disk: "64MiB"}}, noDisk: true, want: schemas.CodeUnsupported},
		{name: "more memory than the host", spec: schemas.SandboxSpec{ID: "x", Compute: &schemas.ComputeResources{Memory: "64GiB"}}, want: schemas.CodeResourceExhausted},
		{name: "the engine cannot create", spec: schemas.SandboxSpec{ID: "x"}, fail: "create", want: schemas.CodeInternal},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, func(_ *fixture, p *Parts) {
				if tc.noDisk {
					p.Disks = NoDisks(errors.New("no loop devices"))
				}
			})
			if tc.fail != "" {
				f.rt.SetFail(func(op, _ string) error {
					if op == tc.fail {
						return errors.New("engine says no")
					}
					return nil
				})
			}
			g := f.group("g1", schemas.GroupSpec{})
			_, err := f.s.Make(t.Context(), g, tc.spec, "cmd-1")
			require.Error(t, err)
			got, _ := schemas.CodeOf(err)
			if tc.want == schemas.CodeInternal {
				assert.False(t, errors.Is(err, schemas.CodeBadRequest), "err: %v", err)
			} else {
				assert.Equal(t, tc.want, got, "err: %v", err)
			}
			f.rt.SetFail(nil)
			if schemas.ValidateID("sandbox", tc.spec.ID) == nil {
				f.requireNothingLeft(tc.spec.ID)
			} else {
				f.requireNothingLeft()
			}
		})
	}
}

// TestRedeliveredMake checks that a create delivered again after its
// first attempt made the sandbox answers with that sandbox, and that one
// whose first attempt stopped half way makes it afresh.
func TestRedeliveredMake(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	g := f.group("g1", schemas.GroupSpec{})
	first, err := f.s.Make(ctx, g, schemas.SandboxSpec{ID: "sb1"}, "cmd-1")
	require.NoError(t, err)
	again, err := f.s.Make(ctx, g, schemas.SandboxSpec{ID: "sb1"}, "cmd-1")
	require.NoError(t, err)
	assert.Equal(t, first.Container, again.Container)
	_, err = f.s.Make(ctx, g, schemas.SandboxSpec{ID: "sb1"}, "cmd-2")
	require.ErrorIs(t, err, schemas.CodeAlreadyExists, "another command's create")

	half := schemas.SandboxStatus{ID: "sb2", GroupID: "g1", State: schemas.StateCreated, Host: "h1", CreatedBy: "cmd-3"}
	_, err = f.store.CreateSandbox(ctx, half)
	require.NoError(t, err)
	made, err := f.s.Make(ctx, g, schemas.SandboxSpec{ID: "sb2"}, "cmd-3")
	require.NoError(t, err)
	assert.NotEmpty(t, made.Container, "made afresh")
}

// TestStartRefusals checks the sandboxes start_sandbox refuses.
func TestStartRefusals(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	g := f.group("g1", schemas.GroupSpec{})
	_, err := f.store.CreateSandbox(ctx, schemas.SandboxStatus{ID: "bare", GroupID: "g1", State: schemas.StateCreated, Host: "h1"})
	require.NoError(t, err)
	_, err = f.s.StartSandbox(ctx, command(schemas.StartSandbox, "g1", "bare"))
	require.ErrorIs(t, err, schemas.CodeConflict, "no container")

	_, err = f.store.CreateSandbox(ctx, schemas.SandboxStatus{ID: "far", GroupID: "g1", State: schemas.StateCreated, Host: "h2", Container: "c-far"})
	require.NoError(t, err)
	_, err = f.s.StartSandbox(ctx, command(schemas.StartSandbox, "g1", "far"))
	require.ErrorIs(t, err, schemas.CodeUnavailable, "another host's")

	st := f.running(g, "sb1")
	require.True(t, f.s.MarkLost(ctx, "sb1", st.Container, schemas.LostContainerMissing, "a test"))
	assert.False(t, f.s.MarkLost(ctx, "sb1", st.Container, schemas.LostContainerMissing, "a test"), "lost once")
	_, err = f.s.StartSandbox(ctx, command(schemas.StartSandbox, "g1", "sb1"))
	require.ErrorIs(t, err, schemas.CodeConflict, "a lost sandbox")
	_, err = f.s.Stats(ctx, command(schemas.SandboxStats, "g1", "sb1"))
	require.ErrorIs(t, err, schemas.CodeConflict, "stats of a lost sandbox")
}

// TestStartOfAnExitingExecutor checks that a sandbox whose executor exits
// at start is recorded failed with the container's exit.
func TestStartOfAnExitingExecutor(t *testing.T) {
	f := newFixture(t)
	f.rt.SetProcess(func(_ context.Context, _ runtime.ContainerSpec) error { return errors.New("executor: crashed") })
	g := f.group("g1", schemas.GroupSpec{})
	st, err := f.s.Make(t.Context(), g, schemas.SandboxSpec{ID: "sb1"}, "cmd-1")
	require.NoError(t, err)
	st, err = f.s.Start(t.Context(), st, "cmd-2")
	require.ErrorIs(t, err, schemas.CodeUnavailable)
	assert.Equal(t, schemas.StateFailed, st.State)
	assert.Contains(t, f.kinds("sb1"), schemas.EventStartFailed)
}

// TestForget checks that a sandbox of a host that cannot be reached is
// forgotten: its record and its allocation in that host's ledger go, and
// no engine is touched.
func TestForget(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	f.group("g1", schemas.GroupSpec{})
	_, err := f.store.CreateSandbox(ctx, schemas.SandboxStatus{ID: "far", GroupID: "g1", State: schemas.StateRunning, Host: "h2", Container: "c-far"})
	require.NoError(t, err)
	require.NoError(t, f.store.JoinGroup(ctx, "g1", "far"))
	res, err := f.s.EndSandbox(ctx, command(schemas.EndSandbox, "g1", "far"))
	require.NoError(t, err)
	assert.Equal(t, schemas.StateEnded, res.Sandboxes[0].State)
	_, _, err = f.store.Sandbox(ctx, "far")
	require.ErrorIs(t, err, schemas.CodeNotFound)
}

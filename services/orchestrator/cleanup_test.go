package orchestrator

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/schemas/resources"
	"github.com/sandox/sandox/services/orchestrator/state"
)

var errInjected = errors.New("injected failure")

// fullSpec makes every kind of resource a sandbox can have: a tool image,
// a disk, a volume, a container, a ledger allocation and a record.
var fullSpec = schemas.SandboxSpec{
	Tools:   []schemas.ToolFile{toolFile},
	Compute: &schemas.ComputeResources{Memory: "256MiB", Disk: "64MiB"},
}

// TestCreateFailureLeavesNothing injects a failure at each step of
// create_sandbox and checks that nothing of the sandbox is left.
func TestCreateFailureLeavesNothing(t *testing.T) {
	tests := []struct {
		name string
		spec schemas.SandboxSpec
		// inject sets the failure up; h.rt and h.disks hooks are cleared
		// after each case.
		inject func(h *harness)
	}{
		{name: "host", spec: fullSpec, inject: func(h *harness) { h.rt.SetFail(failOn("host", "")) }},
		{name: "admission", spec: schemas.SandboxSpec{Compute: &schemas.ComputeResources{Memory: "64GiB", Disk: "64MiB"}}},
		{name: "default image", spec: fullSpec, inject: func(h *harness) { h.rt.SetFail(failOn("image", h.cfg.SandboxImage)) }},
		{name: "build", spec: fullSpec, inject: func(h *harness) { h.rt.SetFail(failOn("build", "")) }},
		{name: "disk", spec: fullSpec, inject: func(h *harness) { h.disks.SetFail(failOn("attach", "")) }},
		{name: "volume", spec: fullSpec, inject: func(h *harness) { h.rt.SetFail(failOn("volume.create", "")) }},
		{
			name: "identity", spec: fullSpec,
			inject: func(h *harness) {
				// The identity is issued, but its file cannot be written.
				require.NoError(h.t, os.Mkdir(filepath.Join(h.cfg.CredsDir, "x.creds"), 0o700))
			},
		},
		{name: "container", spec: fullSpec, inject: func(h *harness) { h.rt.SetFail(failOn("create", "")) }},
		{
			name: "group record", spec: fullSpec,
			inject: func(h *harness) {
				// The group goes away while the container is made, so
				// that adding the sandbox to it fails.
				h.rt.SetFail(func(op, _ string) error {
					if op == "create" {
						_ = h.w.store.DeleteGroup(context.Background(), "g1")
					}
					return nil
				})
			},
		},
	}
	h := newHarness(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h.createGroup("g1", schemas.GroupSpec{})
			defer h.ok(h.command(schemas.EndGroup, "g1", ""))
			h.rt.SetImages(map[string]string{h.cfg.SandboxImage: baseImageID}) // build every time
			if tt.inject != nil {
				tt.inject(h)
			}
			res := h.createSandbox("g1", "x", tt.spec)
			h.rt.SetFail(nil)
			h.disks.SetFail(nil)
			require.NotNil(t, res.Error, "create succeeded")
			h.requireNothingLeft("x")

			if tt.name == "group record" {
				h.createGroup("g1", schemas.GroupSpec{})
			}
			if tt.name != "admission" {
				require.Nil(t, h.createSandbox("g1", "x", tt.spec).Error, "the id is free again")
			}
		})
	}
	h.requireNothingLeft("x")
}

// failOn fails operation op (on arg, or on anything when arg is "").
func failOn(op, arg string) func(string, string) error {
	return func(o, a string) error {
		if o == op && (arg == "" || a == arg) {
			return errInjected
		}
		return nil
	}
}

// TestFailedUndoLeftForReconcile makes the rollback itself fail at the
// volume: the other undo steps still run, and the next worker to start
// removes the volume and the disk left behind.
func TestFailedUndoLeftForReconcile(t *testing.T) {
	h := newHarness(t)
	h.createGroup("g1", schemas.GroupSpec{})
	h.rt.SetFail(func(op, _ string) error {
		if op == "create" || op == "volume.remove" {
			return errInjected
		}
		return nil
	})
	res := h.createSandbox("g1", "x", fullSpec)
	require.NotNil(t, res.Error)
	_, volumes := h.rt.Counts()
	assert.Equal(t, 1, volumes, "the volume whose removal failed")
	assert.Equal(t, 1, h.disks.Count(), "the disk it keeps busy")
	assert.Empty(t, h.ledger(), "released though an earlier undo failed")
	_, err := h.sandbox("x")
	require.Error(t, err, "record deleted though an earlier undo failed")

	h.rt.SetFail(nil)
	h.restart()
	h.eventually("reconciled", func() bool {
		_, volumes := h.rt.Counts()
		return volumes == 0 && h.disks.Count() == 0
	})
	h.requireNothingLeft("x")
}

// TestEndTriesEveryStep fails the container's removal when a sandbox ends:
// the end is refused and the record kept, the other steps are tried, and
// a second end removes the rest.
func TestEndTriesEveryStep(t *testing.T) {
	h := newHarness(t)
	h.createGroup("g1", schemas.GroupSpec{})
	require.Nil(t, h.createSandbox("g1", "x", fullSpec).Error)
	h.ok(h.command(schemas.StartSandbox, "g1", "x"))

	h.rt.SetFail(failOn("remove", ""))
	res := h.refused(h.command(schemas.EndSandbox, "g1", "x"), schemas.CodeInternal)
	assert.Contains(t, res.Error.Message, "remove container")
	assert.Contains(t, res.Error.Message, "remove volume", "tried after the container failed")
	st, err := h.sandbox("x")
	require.NoError(t, err, "the record stays until its resources are gone")
	assert.Equal(t, schemas.StateEnding, st.State)

	h.rt.SetFail(nil)
	h.ok(h.command(schemas.EndSandbox, "g1", "x"))
	h.requireNothingLeft("x")
}

// TestReconcileLedger checks that a worker releases, when it starts, the
// allocations of sandboxes that no longer exist and keeps the others.
func TestReconcileLedger(t *testing.T) {
	h := newIdleHarness(t)
	ctx := t.Context()
	_, err := h.w.store.CreateSandbox(ctx, schemas.SandboxStatus{ID: "alive", GroupID: "g1", State: schemas.StateCreated})
	require.NoError(t, err)
	host := resources.Host{CPUs: 4, MemoryBytes: 8 << 30}
	for _, id := range []string{"alive", "ghost1", "ghost2"} {
		require.NoError(t, state.NewEngineLedger(h.w.store, h.rt).Admit(ctx, id, schemas.ResolvedResources{MemoryBytes: 1 << 30}, host, 0))
	}
	_, err = h.disks.Attach(ctx, "ghost3", 64<<20, 0, 0)
	require.NoError(t, err)
	require.NoError(t, h.w.ids.Mint(ctx, "ghost4"))
	require.NoError(t, h.w.ids.Mint(ctx, "alive"))

	h.w.sandboxes.Reconcile(ctx)
	assert.Equal(t, []string{"alive"}, keys(h.ledger()))
	assert.Zero(t, h.disks.Count())
	creds, err := filepath.Glob(filepath.Join(h.cfg.CredsDir, "*"))
	require.NoError(t, err)
	assert.Equal(t, []string{h.w.ids.File("alive")}, creds)
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

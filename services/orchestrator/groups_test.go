package orchestrator

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/orchestrator/runtime"
)

// TestGroupLifecycle starts a group with initial sandboxes, starts it
// again, adds a sandbox at run time, and ends it, with a container the
// state does not know of left over from a dead worker.
func TestGroupLifecycle(t *testing.T) {
	h := newHarness(t)
	h.createGroup("g1", schemas.GroupSpec{
		Tools:     []schemas.ToolFile{toolFile},
		Compute:   schemas.ComputeResources{Memory: "256MiB"},
		Sandboxes: []schemas.SandboxSpec{{ID: "a"}, {ID: "b", Compute: &schemas.ComputeResources{Memory: "128MiB", Disk: "64MiB"}}},
	})
	h.refused(h.command(schemas.CreateGroup, "g1", ""), schemas.CodeBadRequest)
	dup := h.command(schemas.CreateGroup, "g1", "")
	dup.Group = &schemas.GroupSpec{}
	h.refused(dup, schemas.CodeAlreadyExists)

	res := h.ok(h.command(schemas.StartGroup, "g1", ""))
	require.NotNil(t, res.Group)
	assert.Equal(t, schemas.GroupRunning, res.Group.State)
	require.Len(t, res.Sandboxes, 2)
	for _, st := range res.Sandboxes {
		assert.Equal(t, schemas.StateRunning, st.State, st.ID)
	}
	assert.Equal(t, int64(128<<20), res.Sandboxes[1].Resources.MemoryBytes, "the sandbox's own memory wins")
	assert.NotEmpty(t, res.Sandboxes[1].DiskDevice, "b has a disk")
	assert.Equal(t, 1, h.disks.Count())

	again := h.ok(h.command(schemas.StartGroup, "g1", ""))
	assert.Equal(t, schemas.GroupRunning, again.Group.State, "starting twice is harmless")

	require.Nil(t, h.createSandbox("g1", "c", schemas.SandboxSpec{}).Error)
	h.ok(h.command(schemas.StartSandbox, "g1", "c"))

	// A container of the group that no record names.
	_, err := h.rt.Create(t.Context(), runtime.ContainerSpec{Name: runtime.ContainerName("ghost"), Image: h.cfg.SandboxImage,
		Labels: map[string]string{runtime.LabelManaged: "true", runtime.LabelGroup: "g1", runtime.LabelSandbox: "ghost"}})
	require.NoError(t, err)

	res = h.ok(h.command(schemas.EndGroup, "g1", ""))
	assert.Equal(t, schemas.GroupEnded, res.Group.State)
	assert.Len(t, res.Sandboxes, 3)
	h.requireNothingLeft("a", "b", "c", "ghost")
	h.refused(h.command(schemas.EndGroup, "g1", ""), schemas.CodeNotFound)
	h.refused(h.command(schemas.StartGroup, "g1", ""), schemas.CodeNotFound)
	assert.Zero(t, h.w.locks.Size(), "lock entries left")
}

// TestStartGroupPartialFailure checks that one initial sandbox that fails
// does not stop the others, and the error names it.
func TestStartGroupPartialFailure(t *testing.T) {
	h := newHarness(t)
	h.rt.SetProcess(func(ctx context.Context, spec runtime.ContainerSpec) error {
		if spec.Labels[runtime.LabelSandbox] == "bad" {
			return errors.New("executor: crashed at start")
		}
		return h.executor(ctx, spec)
	})
	h.createGroup("g1", schemas.GroupSpec{Sandboxes: []schemas.SandboxSpec{{ID: "good"}, {ID: "bad"}}})
	res := h.refused(h.command(schemas.StartGroup, "g1", ""), schemas.CodeUnavailable)
	assert.Contains(t, res.Error.Message, "bad")
	require.Len(t, res.Sandboxes, 2)
	byID := map[string]schemas.SandboxState{}
	for _, st := range res.Sandboxes {
		byID[st.ID] = st.State
	}
	assert.Equal(t, map[string]schemas.SandboxState{"good": schemas.StateRunning, "bad": schemas.StateFailed}, byID)
	h.ok(h.command(schemas.EndGroup, "g1", ""))
	h.requireNothingLeft("good", "bad")
}

// TestCreateGroupRefused checks that a bad group spec is refused whole.
func TestCreateGroupRefused(t *testing.T) {
	tests := []struct {
		name string
		id   string
		spec schemas.GroupSpec
	}{
		{name: "bad id", id: "no spaces please", spec: schemas.GroupSpec{}},
		{name: "bad compute", id: "g", spec: schemas.GroupSpec{Compute: schemas.ComputeResources{CPU: "many"}}},
		{name: "sandbox listed twice", id: "g", spec: schemas.GroupSpec{Sandboxes: []schemas.SandboxSpec{{ID: "a"}, {ID: "a"}}}},
		{name: "bad sandbox id", id: "g", spec: schemas.GroupSpec{Sandboxes: []schemas.SandboxSpec{{ID: "a b"}}}},
		{name: "bad sandbox compute", id: "g", spec: schemas.GroupSpec{Sandboxes: []schemas.SandboxSpec{{ID: "a", Compute: &schemas.ComputeResources{Memory: "x"}}}}},
		{name: "bad tool file", id: "g", spec: schemas.GroupSpec{Tools: []schemas.ToolFile{{Name: "x.txt"}}}},
		{name: "an outside package index under none", id: "g", spec: schemas.GroupSpec{Egress: &schemas.Egress{Policy: schemas.EgressNone, PackageIndex: "https://pypi.org/simple"}}},
		{name: "bad allowlist", id: "g", spec: schemas.GroupSpec{Egress: &schemas.Egress{Policy: schemas.EgressAllowlist, Allow: []string{"10.0.0.0/99"}}}},
		{name: "bad sandbox egress", id: "g", spec: schemas.GroupSpec{Sandboxes: []schemas.SandboxSpec{{ID: "a", Egress: &schemas.Egress{Policy: "wide"}}}}},
	}
	h := newHarness(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := h.command(schemas.CreateGroup, tt.id, "")
			cmd.Group = &tt.spec
			h.refused(cmd, schemas.CodeBadRequest)
			_, _, err := h.w.store.Group(t.Context(), tt.id)
			require.Error(t, err, "refused group recorded")
		})
	}
}

package orchestrator

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/schemas/resources"
	"github.com/sandox/sandox/services/orchestrator/state"
)

// TestRedeliveredCreate plays a create whose worker died: first half-way
// (the record made, the ledger charged, no container), then after the
// sandbox was made but before the answer. Each time the same command
// delivered again finishes the create instead of answering
// already_exists, and a create under another command id is still refused.
func TestRedeliveredCreate(t *testing.T) {
	h := newHarness(t)
	ctx := t.Context()
	h.createGroup("g1", schemas.GroupSpec{})
	cmd := h.command(schemas.CreateSandbox, "g1", "sb1")
	cmd.Sandbox = &schemas.SandboxSpec{}

	// The first attempt stopped after it recorded the sandbox and charged
	// the ledger.
	half := schemas.SandboxStatus{ID: "sb1", GroupID: "g1", State: schemas.StateCreated, Host: h.w.hostName, CreatedBy: cmd.ID}
	_, err := h.w.store.CreateSandbox(ctx, half)
	require.NoError(t, err)
	host, err := h.w.sandboxes.Host(ctx)
	require.NoError(t, err)
	req, err := resources.Parse(schemas.ComputeResources{})
	require.NoError(t, err)
	limits, err := resources.Resolve(req, host)
	require.NoError(t, err)
	require.NoError(t, state.NewEngineLedger(h.w.store, h.rt).Admit(ctx, "sb1", limits, host, 1))

	start := h.command(schemas.StartSandbox, "g1", "sb1")
	res := h.refused(start, schemas.CodeConflict)
	assert.Contains(t, res.Error.Message, "its create did not finish")

	res1, err := h.w.groups.CreateSandbox(ctx, cmd, false)
	require.NoError(t, err, "the redelivered create finishes")
	require.Len(t, res1.Sandboxes, 1)
	made := res1.Sandboxes[0]
	assert.NotEmpty(t, made.Container)
	containers, _ := h.rt.Counts()
	assert.Equal(t, 1, containers)
	assert.Len(t, h.ledger(), 1, "one allocation, not two")

	// Made, but the answer was lost: delivered again, it answers with the
	// sandbox and makes nothing more.
	res2, err := h.w.groups.CreateSandbox(ctx, cmd, false)
	require.NoError(t, err)
	assert.Equal(t, made.Container, res2.Sandboxes[0].Container)
	containers, _ = h.rt.Counts()
	assert.Equal(t, 1, containers)

	other := h.command(schemas.CreateSandbox, "g1", "sb1")
	other.Sandbox = &schemas.SandboxSpec{}
	h.refused(other, schemas.CodeAlreadyExists)

	h.ok(h.command(schemas.StartSandbox, "g1", "sb1"))
	h.ok(h.command(schemas.EndGroup, "g1", ""))
	h.requireNothingLeft("sb1")
}

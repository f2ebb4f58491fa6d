package orchestrator

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
)

// TestCleanupKeepsOtherSystems runs a worker of system "sys-a" on an engine
// that also holds a container of system "sys-b" for a group of the same
// id: the worker labels its own sandboxes with its system, and end_group's
// sweep of the group's label removes its own container only.
func TestCleanupKeepsOtherSystems(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.System = "sys-a" })
	foreign, err := h.rt.Create(t.Context(), ContainerSpec{Name: ContainerName("theirs"), Image: h.cfg.SandboxImage, Labels: map[string]string{
		LabelManaged: "true", LabelGroup: "g", LabelSandbox: "theirs", LabelSystem: "sys-b",
	}})
	require.NoError(t, err)

	h.createGroup("g", schemas.GroupSpec{})
	require.Nil(t, h.createSandbox("g", "ours", schemas.SandboxSpec{}).Error)
	mine, err := h.rt.List(t.Context(), LabelSystem+"=sys-a")
	require.NoError(t, err)
	require.Len(t, mine, 1, "our sandbox carries our system's label")
	assert.Equal(t, "ours", mine[0].Labels[LabelSandbox])

	h.ok(h.command(schemas.EndGroup, "g", ""))
	left, err := h.rt.List(t.Context(), LabelManaged+"=true")
	require.NoError(t, err)
	require.Len(t, left, 1, "only the other system's container is left")
	assert.Equal(t, foreign, left[0].ID)
}

package orchestrator

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/orchestrator/runtime"
)

// TestCleanupKeepsOtherSystems runs a worker of system "sys-a" on an engine
// that also holds a container of system "sys-b" for a group of the same
// id: the worker labels its own sandboxes with its system, and end_group's
// sweep of the group's label removes its own container only.
func TestCleanupKeepsOtherSystems(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.System = "sys-a" })
	foreign, err := h.rt.Create(t.Context(), runtime.ContainerSpec{Name: runtime.ContainerName("theirs"), Image: h.cfg.SandboxImage, Labels: map[string]string{
		runtime.LabelManaged: "true", runtime.LabelGroup: "g", runtime.LabelSandbox: "theirs", runtime.LabelSystem: "sys-b",
	}})
	require.NoError(t, err)

	h.createGroup("g", schemas.GroupSpec{})
	require.Nil(t, h.createSandbox("g", "ours", schemas.SandboxSpec{}).Error)
	mine, err := h.rt.List(t.Context(), runtime.LabelSystem+"=sys-a")
	require.NoError(t, err)
	require.Len(t, mine, 1, "our sandbox carries our system's label")
	assert.Equal(t, "ours", mine[0].Labels[runtime.LabelSandbox])

	h.ok(h.command(schemas.EndGroup, "g", ""))
	left, err := h.rt.List(t.Context(), runtime.LabelManaged+"=true")
	require.NoError(t, err)
	require.Len(t, left, 1, "only the other system's container is left")
	assert.Equal(t, foreign, left[0].ID)
}

// TestRestartRebuildsView restarts a worker of system "sys-a" after a
// crash left a container without a record, and after a running sandbox's
// container vanished: the first is removed, the second marked lost
// (container_missing) with an exited event; the running sandbox that is intact keeps
// running and answering, and another system's container stays.
func TestRestartRebuildsView(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.System = "sys-a" })
	ctx := t.Context()
	theirs, err := h.rt.Create(ctx, runtime.ContainerSpec{Name: runtime.ContainerName("theirs"), Image: h.cfg.SandboxImage, Labels: map[string]string{
		runtime.LabelManaged: "true", runtime.LabelSandbox: "theirs", runtime.LabelSystem: "sys-b",
	}})
	require.NoError(t, err)
	orphan, err := h.rt.Create(ctx, runtime.ContainerSpec{Name: runtime.ContainerName("orphan"), Image: h.cfg.SandboxImage, Labels: map[string]string{
		runtime.LabelManaged: "true", runtime.LabelSandbox: "orphan", runtime.LabelSystem: "sys-a",
	}})
	require.NoError(t, err)
	kept := h.runningSandbox("kept", "")
	lost := h.runningSandbox("lost", "")
	events := h.events("lost")

	h.stop()
	require.NoError(t, h.rt.Kill(ctx, lost.Container))
	require.NoError(t, h.rt.Remove(ctx, lost.Container))
	h.w = h.newWorker()
	h.start()

	ev := h.nextEvent(events, func(ev schemas.Event) bool { return ev.Kind == schemas.EventExited })
	assert.Equal(t, schemas.LostContainerMissing, ev.Reason)
	st, err := h.sandbox("lost")
	require.NoError(t, err)
	assert.Equal(t, schemas.StateLost, st.State)

	_, err = h.rt.Inspect(ctx, orphan)
	require.ErrorIs(t, err, runtime.ErrNotFound, "the container without a record is removed")
	_, err = h.rt.Inspect(ctx, theirs)
	require.NoError(t, err, "another system's container stays")

	st, err = h.sandbox("kept")
	require.NoError(t, err)
	assert.Equal(t, schemas.StateRunning, st.State)
	_, err = h.nc.Request(schemas.PingSubject("kept"), nil, 5*time.Second)
	require.NoError(t, err, "the intact sandbox still answers")
	assert.Equal(t, kept.Container, st.Container)
}

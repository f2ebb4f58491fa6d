package orchestrator

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/orchestrator/runtime"
)

// fakeFreezer is a runtime.Freezer that records which containers are
// frozen: the in-memory runtime has no processes to freeze
// (integration.TestPauseResume freezes real ones).
type fakeFreezer struct {
	mu     sync.Mutex
	frozen map[string]bool
}

func (f *fakeFreezer) Pause(_ context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.frozen[id] = true
	return nil
}

func (f *fakeFreezer) Unpause(_ context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.frozen, id)
	return nil
}

func (f *fakeFreezer) isFrozen(id string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.frozen[id]
}

var _ runtime.Freezer = (*fakeFreezer)(nil)

// TestPauseResumeLedger pauses a sandbox that holds every CPU of the host:
// its executor stops serving, its CPU goes to 0 in the ledger (memory
// stays), another sandbox that needs the CPU is admitted, the resume is
// refused while that one runs and succeeds once it ended.
func TestPauseResumeLedger(t *testing.T) {
	h := newIdleHarness(t)
	freezer := &fakeFreezer{frozen: map[string]bool{}}
	h.freezer = freezer
	h.w = h.newWorker()
	h.start()
	h.createGroup("g", schemas.GroupSpec{Compute: schemas.ComputeResources{CPU: "4", Memory: "256MiB"}})
	require.Nil(t, h.createSandbox("g", "sb1", schemas.SandboxSpec{}).Error)
	st := h.ok(h.command(schemas.StartSandbox, "g", "sb1")).Sandboxes[0]
	events := h.events("sb1")

	h.refused(h.command(schemas.ResumeSandbox, "g", "sb1"), schemas.CodeConflict)
	res := h.ok(h.command(schemas.PauseSandbox, "g", "sb1"))
	assert.Equal(t, schemas.StatePaused, res.Sandboxes[0].State)
	assert.False(t, res.Sandboxes[0].PausedAt.IsZero())
	h.nextEvent(events, func(ev schemas.Event) bool { return ev.Kind == schemas.EventPaused })
	assert.True(t, freezer.isFrozen(st.Container))
	alloc := h.ledger()["sb1"]
	assert.Zero(t, alloc.NanoCPUs, "a paused sandbox counts no CPU")
	assert.Equal(t, int64(256<<20), alloc.MemoryBytes, "its memory stays counted")
	_, err := h.nc.Request(schemas.ActionsSubject("sb1"), []byte(`[]`), 2*time.Second)
	assert.True(t, errors.Is(err, nats.ErrNoResponders), "a held executor serves no batches: got %v", err)
	h.ok(h.command(schemas.PauseSandbox, "g", "sb1")) // paused again: no change
	h.refused(h.command(schemas.StartSandbox, "g", "sb1"), schemas.CodeConflict)

	require.Nil(t, h.createSandbox("g", "sb2", schemas.SandboxSpec{}).Error, "the paused sandbox's CPU is free")
	res = h.refused(h.command(schemas.ResumeSandbox, "g", "sb1"), schemas.CodeResourceExhausted)
	assert.Contains(t, res.Error.Message, "cpu: asked 4")
	got, err := h.sandbox("sb1")
	require.NoError(t, err)
	assert.Equal(t, schemas.StatePaused, got.State)
	assert.True(t, freezer.isFrozen(st.Container), "a refused resume thaws nothing")
	assert.Zero(t, h.ledger()["sb1"].NanoCPUs)

	h.ok(h.command(schemas.EndSandbox, "g", "sb2"))
	res = h.ok(h.command(schemas.ResumeSandbox, "g", "sb1"))
	assert.Equal(t, schemas.StateRunning, res.Sandboxes[0].State)
	assert.False(t, res.Sandboxes[0].ResumedAt.IsZero())
	h.nextEvent(events, func(ev schemas.Event) bool { return ev.Kind == schemas.EventResumed })
	assert.False(t, freezer.isFrozen(st.Container))
	assert.Equal(t, int64(4_000_000_000), h.ledger()["sb1"].NanoCPUs)
	_, err = h.nc.Request(schemas.PingSubject("sb1"), nil, 2*time.Second)
	assert.NoError(t, err, "the executor serves again")

	h.ok(h.command(schemas.PauseSandbox, "g", "sb1"))
	h.ok(h.command(schemas.EndSandbox, "g", "sb1"))
	h.refused(h.command(schemas.PauseSandbox, "g", "sb1"), schemas.CodeNotFound)
	h.requireNothingLeft("sb1", "sb2")
}

// TestPauseUnsupported: an engine without a Freezer refuses pause.
func TestPauseUnsupported(t *testing.T) {
	h := newHarness(t)
	h.createGroup("g", schemas.GroupSpec{})
	require.Nil(t, h.createSandbox("g", "sb1", schemas.SandboxSpec{}).Error)
	h.ok(h.command(schemas.StartSandbox, "g", "sb1"))
	h.refused(h.command(schemas.PauseSandbox, "g", "sb1"), schemas.CodeUnsupported)
	h.refused(h.command(schemas.PauseSandbox, "g", "pool-x"), schemas.CodeBadRequest)
}

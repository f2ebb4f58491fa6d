package sandboxes

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/orchestrator/pool"
)

// TestBuildPublishesProgress makes a sandbox with a tool file, whose image
// is built, and checks that the build's progress is published on its
// group's progress subject, ending finished.
func TestBuildPublishesProgress(t *testing.T) {
	f := newFixture(t)
	sub, err := f.nc.SubscribeSync(schemas.ProgressSubject("g1"))
	require.NoError(t, err)
	require.NoError(t, f.nc.Flush())
	g := f.group("g1", schemas.GroupSpec{})
	spec := schemas.SandboxSpec{ID: "sb1", Tools: []schemas.ToolFile{{Name: "greet.py", Content: []byte("def hello():\n    return 'hi'\n")}}}
	st, err := f.s.Make(t.Context(), g, spec, "cmd-1")
	require.NoError(t, err)
	assert.False(t, st.ImageReused)
	assert.Equal(t, 1, f.rt.Builds())
	var last schemas.Progress
	for !last.Finished {
		m, err := sub.NextMsg(5 * time.Second)
		require.NoError(t, err, "waiting for the build's progress")
		require.NoError(t, json.Unmarshal(m.Data, &last))
		assert.Equal(t, "sb1", last.SandboxID)
		assert.Equal(t, schemas.PhaseImageBuild, last.Phase)
	}
	assert.Empty(t, last.Error)
}

// TestPoolMakerRemove fills one pooled sandbox and removes it unclaimed:
// nothing of it is left.
func TestPoolMakerRemove(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	id, err := f.s.PoolMaker().Fill(ctx, pool.Source{})
	require.NoError(t, err)
	st, _, err := f.store.Sandbox(ctx, id)
	require.NoError(t, err)
	assert.True(t, st.Pooled)
	assert.Equal(t, schemas.StateRunning, st.State)
	require.NoError(t, f.s.PoolMaker().Remove(ctx, id))
	f.requireNothingLeft(id)
}

// TestOpenDisks checks that a host without a disks directory refuses disk
// limits, saying why.
func TestOpenDisks(t *testing.T) {
	p := OpenDisks("")
	require.Error(t, p.Err())
	assert.Contains(t, p.Err().Error(), "no disks directory")
	assert.NoError(t, UseDisks(nil).Err())
}

// TestAutoQueue checks that a sandbox queued for an automatic checkpoint
// many times is taken once, and that each host has its own queue group.
func TestAutoQueue(t *testing.T) {
	q := newAutoQueue()
	q.add("a")
	q.add("b")
	q.add("a")
	select {
	case <-q.wake:
	default:
		t.Fatal("adding did not wake the queue")
	}
	assert.ElementsMatch(t, []string{"a", "b"}, q.take())
	assert.Empty(t, q.take())
	assert.NotEqual(t, autoCheckpointQueue("h1"), autoCheckpointQueue("h2"))
}

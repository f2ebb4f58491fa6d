package groups_test

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
)

// TestCreateBuildsOutsideTheGroupLock checks that a create whose image
// builds holds none of its group's other commands: while the build is
// held, a create of another sandbox comes back; the first create then
// reports its image built, not reused, and a third sandbox with the same
// tools reuses it.
func TestCreateBuildsOutsideTheGroupLock(t *testing.T) {
	w := startWorker(t)
	building, release := make(chan string, 1), make(chan struct{})
	w.rt.SetBuildGate(func(tag string) {
		building <- tag
		<-release
	})
	// A failed test lets the build go before the worker stops, which waits
	// for the commands in hand.
	var once sync.Once
	letGo := func() { once.Do(func() { close(release) }) }
	t.Cleanup(letGo)
	require.Nil(t, w.send(schemas.CreateGroup, "g1", "", withGroup(schemas.GroupSpec{})).Error)
	require.Nil(t, w.send(schemas.StartGroup, "g1", "").Error)

	tools := schemas.SandboxSpec{Tools: []schemas.ToolFile{{Name: "my_tools.py", Content: []byte("def one() -> int:\n    return 1\n")}}}
	slow := w.publish(schemas.CreateSandbox, "g1", "slow", withSandbox(tools))
	var tag string
	select {
	case tag = <-building:
	case <-time.After(10 * time.Second):
		t.Fatal("the image build did not begin")
	}

	quick := w.send(schemas.CreateSandbox, "g1", "quick", withSandbox(schemas.SandboxSpec{}))
	require.Nil(t, quick.Error, "a create with an image that exists does not wait for another's build")
	assert.True(t, quick.Sandboxes[0].ImageReused)

	letGo()
	res := slow()
	require.Nil(t, res.Error)
	require.Len(t, res.Sandboxes, 1)
	assert.Equal(t, tag, res.Sandboxes[0].Image)
	assert.False(t, res.Sandboxes[0].ImageReused, "built for this create")

	w.rt.SetBuildGate(nil)
	again := w.send(schemas.CreateSandbox, "g1", "again", withSandbox(tools))
	require.Nil(t, again.Error)
	assert.Equal(t, tag, again.Sandboxes[0].Image)
	assert.True(t, again.Sandboxes[0].ImageReused)
	assert.Equal(t, 1, w.rt.Builds())
}

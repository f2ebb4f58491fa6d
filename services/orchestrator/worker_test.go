package orchestrator

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
)

// TestRedeliveredCommandAnsweredAgain delivers a create_sandbox again, as
// JetStream does when a worker dies between publishing the result and
// acknowledging: the result is published again and nothing is made twice.
func TestRedeliveredCommandAnsweredAgain(t *testing.T) {
	h := newHarness(t)
	h.createGroup("g1", schemas.GroupSpec{})
	cmd := h.command(schemas.CreateSandbox, "g1", "sb1")
	cmd.Sandbox = &schemas.SandboxSpec{Tools: []schemas.ToolFile{toolFile}}
	first := h.ok(cmd)

	// Another message id, so that the stream's duplicate window does not
	// drop it: the worker must recognise the command by its own id.
	sub, err := h.nc.SubscribeSync(schemas.ResultSubject(cmd.ID))
	require.NoError(t, err)
	defer sub.Unsubscribe()
	data, err := json.Marshal(cmd)
	require.NoError(t, err)
	_, err = h.js.Publish(t.Context(), schemas.CommandSubject(cmd.Kind), data, jetstream.WithMsgID(cmd.ID+"-again"))
	require.NoError(t, err)
	m, err := sub.NextMsg(10 * time.Second)
	require.NoError(t, err)
	var again schemas.CommandResult
	require.NoError(t, json.Unmarshal(m.Data, &again))

	require.Nil(t, again.Error, "the redelivery is answered with the first result, not already_exists")
	assert.Equal(t, first.Sandboxes[0].Container, again.Sandboxes[0].Container)
	containers, volumes := h.rt.Counts()
	assert.Equal(t, 1, containers)
	assert.Equal(t, 1, volumes)
	assert.Equal(t, 1, h.rt.Builds())
}

// TestBadCommands checks that a message that is not a command is dropped
// and a command the orchestrator does not know is refused, and that the
// worker goes on serving.
func TestBadCommands(t *testing.T) {
	h := newHarness(t)
	_, err := h.js.Publish(t.Context(), schemas.CommandSubject(schemas.CreateGroup), []byte("not json"))
	require.NoError(t, err)

	unknown := h.command("explode", "g1", "")
	h.refused(unknown, schemas.CodeBadRequest)

	h.createGroup("g1", schemas.GroupSpec{})
	info, err := h.js.Stream(t.Context(), schemas.CommandStream)
	require.NoError(t, err)
	h.eventually("the poison message is gone from the work queue", func() bool {
		si, err := info.Info(t.Context())
		return err == nil && si.State.Msgs == 0
	})
}

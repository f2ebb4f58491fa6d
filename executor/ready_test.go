package executor

import (
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
)

// TestServeAnnouncesReadiness checks that Serve publishes its modules on
// the ready subject once, and that by then it serves actions.
func TestServeAnnouncesReadiness(t *testing.T) {
	nc := startNATS(t)
	ready, err := nc.SubscribeSync(schemas.ReadySubject("sb-1"))
	require.NoError(t, err)
	require.NoError(t, nc.Flush())
	serve(t, nc, testRegistry(new([]string), new(sync.Mutex)), Config{SandboxID: "sb-1"})

	m, err := ready.NextMsg(5 * time.Second)
	require.NoError(t, err, "the announcement")
	var got schemas.ExecutorReady
	require.NoError(t, json.Unmarshal(m.Data, &got))
	assert.Equal(t, []string{"demo_tools", "other_tools"}, got.Modules)
	res := request(t, nc, `{"demo_tools.echo": {"args": {"text": "hi"}}}`, false)
	require.Len(t, res.Observations, 1)
	assert.Equal(t, "hi", res.Observations[0].Stdout)
	_, err = ready.NextMsg(100 * time.Millisecond)
	assert.ErrorIs(t, err, nats.ErrTimeout, "announced once")
}

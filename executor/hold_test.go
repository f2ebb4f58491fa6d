package executor

import (
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
)

// hold sends a HoldRequest and returns the reply.
func hold(t *testing.T, nc *nats.Conn, on bool) schemas.HoldReply {
	t.Helper()
	data, err := json.Marshal(schemas.HoldRequest{Hold: on})
	require.NoError(t, err)
	m, err := nc.Request(schemas.HoldSubject("sb-1"), data, 2*time.Second)
	require.NoError(t, err)
	var reply schemas.HoldReply
	require.NoError(t, json.Unmarshal(m.Data, &reply))
	return reply
}

// TestHoldStopsAndResumesServing: held, the executor serves none of its
// subjects (a batch gets no responders at once), held again is no change;
// released, it answers batches and pings again.
func TestHoldStopsAndResumesServing(t *testing.T) {
	var mu sync.Mutex
	var log []string
	nc := startServer(t, testRegistry(&log, &mu))

	reply := hold(t, nc, true)
	require.Nil(t, reply.Error)
	assert.True(t, reply.Held)
	assert.True(t, hold(t, nc, true).Held, "held twice")
	for _, subject := range []string{schemas.ActionsSubject("sb-1"), schemas.PingSubject("sb-1"), schemas.ToolsSubject("sb-1")} {
		_, err := nc.Request(subject, []byte(`[]`), time.Second)
		assert.True(t, errors.Is(err, nats.ErrNoResponders), "%s while held: got %v", subject, err)
	}

	reply = hold(t, nc, false)
	require.Nil(t, reply.Error)
	assert.False(t, reply.Held)
	assert.False(t, hold(t, nc, false).Held, "released twice")
	res := request(t, nc, `[{"tool": "demo_tools.echo", "args": {"text": "back"}}]`, false)
	require.Len(t, res.Observations, 1)
	assert.Nil(t, res.Observations[0].Error)
	_, err := nc.Request(schemas.PingSubject("sb-1"), nil, time.Second)
	assert.NoError(t, err)
}

// TestHoldRefusesABadRequest answers a malformed hold request with
// bad_request and leaves the subjects served.
func TestHoldRefusesABadRequest(t *testing.T) {
	var mu sync.Mutex
	var log []string
	nc := startServer(t, testRegistry(&log, &mu))
	m, err := nc.Request(schemas.HoldSubject("sb-1"), []byte(`{"hold": "yes"}`), 2*time.Second)
	require.NoError(t, err)
	var reply schemas.HoldReply
	require.NoError(t, json.Unmarshal(m.Data, &reply))
	require.NotNil(t, reply.Error)
	assert.Equal(t, schemas.CodeBadRequest, reply.Error.Code)
	_, err = nc.Request(schemas.PingSubject("sb-1"), nil, time.Second)
	assert.NoError(t, err)
}

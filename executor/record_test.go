package executor

import (
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
)

// eventStream creates the events stream on nc's server with the subjects
// the orchestrator gives it.
func eventStream(t *testing.T, nc *nats.Conn) jetstream.Stream {
	t.Helper()
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	s, err := js.CreateStream(t.Context(), jetstream.StreamConfig{
		Name: schemas.EventStream, Subjects: schemas.EventSubjects(), NoAck: true,
	})
	require.NoError(t, err)
	return s
}

// lastMsg waits for the stream's last message on subject.
func lastMsg(t *testing.T, s jetstream.Stream, subject string) *jetstream.RawStreamMsg {
	t.Helper()
	var m *jetstream.RawStreamMsg
	require.Eventually(t, func() bool {
		var err error
		m, err = s.GetLastMsgForSubject(t.Context(), subject)
		return err == nil
	}, 5*time.Second, 20*time.Millisecond, "nothing recorded on %s", subject)
	return m
}

// TestBatchesAreRecorded checks the audit trail that replaces the stream's
// capture of the actions subject: the executor records each batch as it
// received it, and the observations of a batch sent to an _INBOX (as
// `nats request` does) under sandox.obs.
func TestBatchesAreRecorded(t *testing.T) {
	var ran []string
	var mu sync.Mutex
	nc := startServer(t, testRegistry(&ran, &mu))
	events := eventStream(t, nc)
	payload := `{"demo_tools.echo": {"description": "by hand", "args": {"text": "recorded"}}}`

	t.Run("a batch without a batch id", func(t *testing.T) {
		reply, err := nc.Request(schemas.ActionsSubject("sb-1"), []byte(payload), 5*time.Second)
		require.NoError(t, err)
		var res schemas.BatchResult
		require.NoError(t, json.Unmarshal(reply.Data, &res))
		require.NotEmpty(t, res.BatchID, "the executor must name the batch")
		require.Len(t, res.Observations, 1)

		rec := lastMsg(t, events, schemas.BatchRecordSubject("sb-1"))
		assert.Equal(t, payload, string(rec.Data), "the record holds the payload as sent")
		assert.Equal(t, res.BatchID, rec.Header.Get(schemas.HeaderBatchID))
		assert.Contains(t, rec.Header.Get(schemas.HeaderReply), "_INBOX.")

		obs := lastMsg(t, events, schemas.ObservationSubject("sb-1", res.BatchID))
		assert.JSONEq(t, string(reply.Data), string(obs.Data), "the recorded observations are the reply")
	})

	t.Run("a batch sent as the SDK sends it", func(t *testing.T) {
		reply := schemas.ObservationSubject("sb-1", "sdk-batch")
		sub, err := nc.SubscribeSync(reply)
		require.NoError(t, err)
		m := nats.NewMsg(schemas.ActionsSubject("sb-1"))
		m.Reply, m.Data = reply, []byte(payload)
		m.Header.Set(schemas.HeaderBatchID, "sdk-batch")
		m.Header.Set(schemas.HeaderStopOnError, "true")
		require.NoError(t, nc.PublishMsg(m))
		_, err = sub.NextMsg(5 * time.Second)
		require.NoError(t, err)

		rec := lastMsg(t, events, schemas.BatchRecordSubject("sb-1"))
		assert.Equal(t, "sdk-batch", rec.Header.Get(schemas.HeaderBatchID))
		assert.Equal(t, "true", rec.Header.Get(schemas.HeaderStopOnError))
		assert.Equal(t, reply, rec.Header.Get(schemas.HeaderReply))
		obs := lastMsg(t, events, reply)
		info, err := events.Info(t.Context(), jetstream.WithSubjectFilter(reply))
		require.NoError(t, err)
		assert.Equal(t, uint64(1), info.State.Subjects[reply], "the observations are recorded once, not copied")
		assert.Contains(t, string(obs.Data), "recorded")
	})

	t.Run("a batch without a reply subject", func(t *testing.T) {
		m := nats.NewMsg(schemas.ActionsSubject("sb-1"))
		m.Data = []byte(payload)
		m.Header.Set(schemas.HeaderBatchID, "fire-and-forget")
		require.NoError(t, nc.PublishMsg(m))
		obs := lastMsg(t, events, schemas.ObservationSubject("sb-1", "fire-and-forget"))
		assert.Contains(t, string(obs.Data), "recorded")
	})
}

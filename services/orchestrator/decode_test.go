package orchestrator

import (
	"encoding/json"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/internal/natstest"
	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/orchestrator/runtime"
)

// testWorker starts a real embedded NATS server and a worker on it without
// a container runtime: enough for commands refused before any container
// work. It returns the worker and a client connection.
func testWorker(t *testing.T) (*Worker, *nats.Conn) {
	t.Helper()
	nc := natstest.Connect(t, natstest.Start(t))
	wcfg := DefaultConfig()
	wcfg.Worker, wcfg.DisksDir = "test-worker", ""
	w, err := NewWorker(t.Context(), nc, runtime.Engine{}, wcfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, err)
	return w, nc
}

// handleOne publishes data on subject as a command, hands the message to
// the worker as Run would, and returns the result published for id (nil
// when none came).
func handleOne(t *testing.T, w *Worker, nc *nats.Conn, subject, msgID, id string, data []byte) *schemas.CommandResult {
	t.Helper()
	sub, err := nc.SubscribeSync(schemas.ResultSubject(id))
	require.NoError(t, err)
	defer sub.Unsubscribe()
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	var opts []jetstream.PublishOpt
	if msgID != "" {
		opts = append(opts, jetstream.WithMsgID(msgID))
	}
	_, err = js.Publish(t.Context(), subject, data, opts...)
	require.NoError(t, err)
	cons, err := js.CreateOrUpdateConsumer(t.Context(), schemas.CommandStream, jetstream.ConsumerConfig{
		Durable: "test", AckPolicy: jetstream.AckExplicitPolicy,
	})
	require.NoError(t, err)
	msgs, err := cons.Fetch(1, jetstream.FetchMaxWait(5*time.Second))
	require.NoError(t, err)
	msg, ok := <-msgs.Messages()
	require.True(t, ok, "got no command message")
	w.handle(t.Context(), msg)
	m, err := sub.NextMsg(2 * time.Second)
	if err != nil {
		return nil
	}
	var res schemas.CommandResult
	require.NoError(t, json.Unmarshal(m.Data, &res))
	return &res
}

// TestEveryCommandWithAnIDIsAnswered sends commands that are wrong in one
// way each and checks that each gets a bad_request result naming what is
// wrong, instead of being dropped or carried out.
func TestEveryCommandWithAnIDIsAnswered(t *testing.T) {
	w, nc := testWorker(t)
	const at = `"issued_at":"2026-11-23T05:00:00Z"`
	tests := []struct {
		name, subject, msgID, id, body string
		want                           []string
	}{
		{"group_id a number", "sandox.cmd.start_group", "", "c1",
			`{"id":"c1","kind":"start_group","group_id":5,` + at + `}`, []string{"group_id"}},
		{"issued_at not a time", "sandox.cmd.start_group", "", "c2",
			`{"id":"c2","kind":"start_group","group_id":"g","issued_at":"yesterday"}`, []string{"yesterday"}},
		{"tool content not base64", "sandox.cmd.create_group", "", "c3",
			`{"id":"c3","kind":"create_group","group_id":"g","group":{"id":"g","compute":{},"tools":[{"name":"t.py","content":"not base64!"}]},` + at + `}`, []string{"base64"}},
		{"sandbox a string", "sandox.cmd.create_sandbox", "", "c4",
			`{"id":"c4","kind":"create_sandbox","group_id":"g","sandbox_id":"sb","sandbox":"sb",` + at + `}`, []string{"sandbox"}},
		{"kind a number", "sandox.cmd.start_group", "", "c5",
			`{"id":"c5","kind":7,"group_id":"g",` + at + `}`, []string{"kind"}},
		{"no issued_at", "sandox.cmd.start_group", "", "c6",
			`{"id":"c6","kind":"start_group","group_id":"g"}`, []string{"issued_at"}},
		{"sandbox ids differ", "sandox.cmd.create_sandbox", "", "c7",
			`{"id":"c7","kind":"create_sandbox","group_id":"g","sandbox_id":"sb-a","sandbox":{"id":"sb-b"},` + at + `}`, []string{`"sb-a"`, `"sb-b"`}},
		{"group ids differ", "sandox.cmd.create_group", "", "c8",
			`{"id":"c8","kind":"create_group","group_id":"g-a","group":{"id":"g-b","compute":{}},` + at + `}`, []string{`"g-a"`, `"g-b"`}},
		{"kind differs from subject", "sandox.cmd.end_group", "", "c9",
			`{"id":"c9","kind":"start_group","group_id":"g",` + at + `}`, []string{"sandox.cmd.end_group", "start_group"}},
		{"id differs from Nats-Msg-Id", "sandox.cmd.start_group", "other-id", "c10",
			`{"id":"c10","kind":"start_group","group_id":"g",` + at + `}`, []string{`"c10"`, `"other-id"`}},
		{"sandbox spec on start_sandbox", "sandox.cmd.start_sandbox", "", "c11",
			`{"id":"c11","kind":"start_sandbox","group_id":"g","sandbox_id":"sb","sandbox":{"id":"sb"},` + at + `}`, []string{"start_sandbox takes no sandbox spec"}},
		{"group spec on end_group", "sandox.cmd.end_group", "", "c12",
			`{"id":"c12","kind":"end_group","group_id":"g","group":{"id":"g","compute":{}},` + at + `}`, []string{"end_group takes no group spec"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := handleOne(t, w, nc, tt.subject, tt.msgID, tt.id, []byte(tt.body))
			require.NotNil(t, res, "got no result: the command was dropped")
			require.NotNil(t, res.Error, "got success, want bad_request")
			assert.Equal(t, schemas.CodeBadRequest, res.Error.Code, res.Error.Message)
			assert.Equal(t, tt.id, res.CommandID)
			for _, s := range tt.want {
				assert.Contains(t, res.Error.Message, s)
			}
		})
	}
}

// TestSameIDSaidTwiceIsAccepted checks that a command whose inner and outer
// ids agree, or whose inner id is left empty, is carried out.
func TestSameIDSaidTwiceIsAccepted(t *testing.T) {
	w, nc := testWorker(t)
	const at = `"issued_at":"2026-11-23T05:00:00Z"`
	for i, body := range []string{
		`{"id":"ok1","kind":"create_group","group_id":"g1","group":{"id":"g1","compute":{}},` + at + `}`,
		`{"id":"ok2","kind":"create_group","group_id":"g2","group":{"id":"","compute":{}},` + at + `}`,
	} {
		id := []string{"ok1", "ok2"}[i]
		res := handleOne(t, w, nc, "sandox.cmd.create_group", id, id, []byte(body))
		require.NotNil(t, res)
		require.Nil(t, res.Error, "got %+v", res.Error)
		require.NotNil(t, res.Group)
		assert.Equal(t, []string{"g1", "g2"}[i], res.Group.ID)
	}
}

func TestDecodeCommandWithoutUsableID(t *testing.T) {
	for _, body := range []string{
		`not json`, `[]`, `{}`, `{"id":""}`, `{"id":5}`, `{"id":"a.b"}`, `{"id":"a b"}`, `{"id":"a*"}`, `{"id":">"}`, `{"id":"a\nb"}`,
	} {
		t.Run(body, func(t *testing.T) {
			_, _, err := decodeCommand("sandox.cmd.start_group", nil, []byte(body))
			require.ErrorIs(t, err, errNoCommandID)
		})
	}
}

package executor

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/internal/poll"
	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/tools"
)

// TestWatchEventsSurviveABusRestart runs a file watch in a real executor
// (the filesystem family over its real NATS connection) and restarts the
// NATS server while files are being made: the watch stream still holds an
// event for every file, once, numbered without gaps, then the stop.
func TestWatchEventsSurviveABusRestart(t *testing.T) {
	ns := newRestartableNATS(t)
	url := ns.srv.ClientURL()
	admin, err := nats.Connect(url, nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	require.NoError(t, err)
	t.Cleanup(admin.Close)
	js, err := jetstream.New(admin)
	require.NoError(t, err)
	_, err = js.CreateStream(t.Context(), jetstream.StreamConfig{
		Name: schemas.WatchStream, Subjects: []string{schemas.WatchStreamSubjects},
		Storage: jetstream.FileStorage, Duplicates: 2 * time.Minute,
	})
	require.NoError(t, err)

	exec, err := nats.Connect(url, nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond),
		nats.CustomInboxPrefix(schemas.SandboxInboxPrefix("sb-1")))
	require.NoError(t, err)
	t.Cleanup(exec.Close)
	ws := t.TempDir()
	reg, closeTools, err := Tools(t.Context(), tools.Env{
		Executor:  schemas.ExecutorEnv{SandboxID: "sb-1", Workspace: ws, Families: []string{"filesystem_tools"}},
		Dir:       tools.NewWorkDir(ws),
		Publish:   Publisher(func() *nats.Conn { return exec }),
		SandboxID: func() string { return "sb-1" },
		Log:       slog.New(slog.DiscardHandler),
	})
	require.NoError(t, err)
	t.Cleanup(closeTools)
	serve(t, exec, reg, Config{SandboxID: "sb-1"})
	poll.Until(t, 5*time.Second, "the executor to answer pings", func() bool {
		_, err := admin.Request(schemas.PingSubject("sb-1"), nil, 200*time.Millisecond)
		return err == nil
	})

	res := request(t, admin, `{"filesystem_tools.watch_start": {"args": {"watch_id": "w1", "patterns": ["*.txt"]}}}`, false)
	require.Len(t, res.Observations, 1)
	require.Nil(t, res.Observations[0].Error, "%+v", res.Observations[0])

	const files = 60
	touch := func(from, to int) {
		for i := from; i < to; i++ {
			require.NoError(t, os.WriteFile(filepath.Join(ws, fmt.Sprintf("f%02d.txt", i)), nil, 0o644))
		}
	}
	touch(0, 20)
	poll.Until(t, 30*time.Second, "the first events in the watch stream", func() bool {
		st, err := js.Stream(t.Context(), schemas.WatchStream)
		return err == nil && st.CachedInfo().State.Msgs >= 5
	})
	// The bus goes away while files are made, and comes back.
	ns.srv.Shutdown()
	ns.srv.WaitForShutdown()
	touch(20, 40)
	ns.start(t)
	touch(40, files)
	poll.Until(t, 30*time.Second, "the executor back on the bus", func() bool {
		_, err := admin.Request(schemas.PingSubject("sb-1"), nil, 200*time.Millisecond)
		return err == nil
	})

	res = request(t, admin, `{"filesystem_tools.watch_stop": {"args": {"watch_id": "w1"}}}`, false)
	require.Len(t, res.Observations, 1)
	require.Nil(t, res.Observations[0].Error, "%+v", res.Observations[0])

	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	c, err := js.OrderedConsumer(ctx, schemas.WatchStream, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{schemas.WatchSubjects("sb-1", "w1")},
	})
	require.NoError(t, err)
	created := map[string]int{}
	var n int64
	for {
		m, err := c.Next(jetstream.FetchContext(ctx))
		require.NoError(t, err, "after event %d", n)
		if m.Subject() == schemas.WatchSubject("sb-1", "w1", schemas.WatchStopKind) {
			var info schemas.WatchInfo
			require.NoError(t, json.Unmarshal(m.Data(), &info))
			assert.Equal(t, n, info.Events, "the stop counts every event")
			break
		}
		if m.Subject() != schemas.WatchSubject("sb-1", "w1", schemas.WatchEventKind) {
			continue
		}
		var ev schemas.WatchEvent
		require.NoError(t, json.Unmarshal(m.Data(), &ev))
		require.Equal(t, n+1, ev.N, "an event lost or repeated")
		n = ev.N
		if ev.Kind == schemas.WatchCreate {
			created[ev.Path]++
		}
	}
	for i := range files {
		assert.Equal(t, 1, created[fmt.Sprintf("f%02d.txt", i)], "the create of f%02d.txt, once", i)
	}
}

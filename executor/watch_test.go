package executor

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/internal/natstest"
	"github.com/sandox/sandox/schemas"
)

// TestWatchEventsSurviveABusRestart runs a file watch in a real executor
// (the filesystem family over its real NATS connection) and restarts the
// NATS server while files are being made: the watch stream still holds an
// event for every file, once, numbered without gaps, then the stop.
func TestWatchEventsSurviveABusRestart(t *testing.T) {
	b := startBusExecutor(t, "filesystem_tools", schemas.WatchStream, schemas.WatchStreamSubjects)
	b.run(t, `{"filesystem_tools.watch_start": {"args": {"watch_id": "w1", "patterns": ["*.txt"]}}}`)

	const files = 60
	touch := func(from, to int) {
		for i := from; i < to; i++ {
			require.NoError(t, os.WriteFile(filepath.Join(b.Workspace, fmt.Sprintf("f%02d.txt", i)), nil, 0o644))
		}
	}
	touch(0, 20)
	b.streamHolds(t, schemas.WatchStream, 5, "the first events in the watch stream")
	// The bus goes away while files are made, and comes back.
	port := b.NS.Addr().(*net.TCPAddr).Port
	b.NS.Shutdown()
	b.NS.WaitForShutdown()
	touch(20, 40)
	natstest.Start(t, natstest.Port(port), natstest.StoreDir(b.Store))
	touch(40, files)
	b.waitForPing(t, 30*time.Second, "the executor back on the bus")
	b.run(t, `{"filesystem_tools.watch_stop": {"args": {"watch_id": "w1"}}}`)

	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	c, err := b.JS.OrderedConsumer(ctx, schemas.WatchStream, jetstream.OrderedConsumerConfig{
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

package sdk_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/executor/executortest"
	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/sdk"
)

// TestWatchEventsResumeAfterTheClientDies reads a watch's events on one
// connection, closes it mid-stream as a client that died would, and
// resumes on a new connection from the last sequence seen: every event
// comes exactly once, in order, ending with the stop.
func TestWatchEventsResumeAfterTheClientDies(t *testing.T) {
	sb := executortest.Start(t, "sb-watch", nil)
	client := func() (*nats.Conn, *sdk.Sandbox) {
		nc, err := nats.Connect(sb.URL)
		require.NoError(t, err)
		t.Cleanup(nc.Close)
		g, err := sdk.NewSandboxGroup(sdk.GroupConfig{ID: "g-watch"}, sdk.WithConn(nc))
		require.NoError(t, err)
		t.Cleanup(func() { _ = g.Close() })
		return nc, g.Attach(sb.ID)
	}
	nc1, first := client()

	w, info, err := first.Watch(t.Context(), ".", sdk.WatchOptions{ID: "w1", Patterns: []string{"**/*.txt"}})
	require.NoError(t, err)
	assert.Equal(t, "w1", w.ID())
	assert.Equal(t, "sb-watch", info.SandboxID)

	const files = 20
	for i := range files {
		p := filepath.Join(sb.Workspace, fmt.Sprintf("d%d", i%3), fmt.Sprintf("f%02d.txt", i))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte("x"), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(sb.Workspace, fmt.Sprintf("skip%d.log", i)), nil, 0o644))
	}

	var last uint64
	var got []schemas.WatchEvent
	collect := func(ev sdk.WatchEvent) {
		require.Greater(t, ev.Seq, last)
		last = ev.Seq
		if ev.Event != nil {
			require.Equal(t, int64(len(got)+1), ev.Event.N, "an event lost or repeated")
			got = append(got, *ev.Event)
		}
	}
	for ev, err := range w.Events(t.Context(), 0) {
		require.NoError(t, err)
		collect(ev)
		if len(got) == 7 {
			nc1.Close() // the client dies mid-stream, handling nothing more
			break
		}
	}

	_, second := client()
	infos, err := second.Watches(t.Context())
	require.NoError(t, err)
	require.Len(t, infos, 1)
	// Stopping first makes the stream end; the events still to read stay.
	stopped, err := second.AttachWatch("w1").Stop(t.Context())
	require.NoError(t, err)
	assert.False(t, stopped.Running)
	var stop *schemas.WatchInfo
	for ev, err := range second.AttachWatch("w1").Events(t.Context(), last) {
		require.NoError(t, err)
		collect(ev)
		stop = ev.Stop
	}
	require.NotNil(t, stop, "the last event is the stop")
	assert.Equal(t, int64(len(got)), stop.Events)

	creates := map[string]bool{}
	for _, ev := range got {
		if ev.Kind == schemas.WatchCreate {
			creates[ev.Path] = true
		}
		assert.Regexp(t, `^d\d/f\d\d\.txt$`, ev.Path, "only *.txt below the watch")
	}
	for i := range files {
		assert.True(t, creates[fmt.Sprintf("d%d/f%02d.txt", i%3, i)], "create of f%02d", i)
	}

	for _, err := range second.AttachWatch("nope").Events(t.Context(), 0) {
		assert.ErrorIs(t, err, sdk.ErrNotFound, "a watch never started")
	}
}

package integration

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/sdk"
)

// TestWatch runs a file watch in a real sandbox: its events, published
// under the sandbox's own identity into SANDOX_WATCH, read by a client
// that dies mid-stream (its connection closed) and resumed by another
// from the last sequence seen: every event once, numbered without gaps.
func TestWatch(t *testing.T) {
	group := newGroup(t, sdk.GroupConfig{ID: "it-watch"})
	sb := startSandbox(t, group, "it-watch-a", sdk.SandboxOptions{})

	first, die := jobClient(t, "it-watch", sb.ID())
	w, info, err := first.Watch(t.Context(), ".", sdk.WatchOptions{ID: "py", Patterns: []string{"**/*.py"}})
	require.NoError(t, err)
	assert.Equal(t, "/workspace", info.Path)

	const files = 30
	var writes strings.Builder
	writes.WriteString("[")
	for i := range files {
		if i > 0 {
			writes.WriteString(",")
		}
		fmt.Fprintf(&writes, `{"tool": "filesystem_tools.write_file", "args": {"path": "src/d%d/m%02d.py", "content": "x = %d\n"}}`, i%4, i, i)
		fmt.Fprintf(&writes, `,{"tool": "filesystem_tools.write_file", "args": {"path": "notes%02d.txt", "content": "not watched"}}`, i)
	}
	writes.WriteString("]")
	for _, o := range send(t, sb, writes.String()) {
		mustOK(t, o)
	}

	var last uint64
	var n int64
	created := map[string]int{}
	add := func(ev sdk.WatchEvent) {
		t.Helper()
		require.Greater(t, ev.Seq, last, "sequences go up")
		last = ev.Seq
		if ev.Event == nil {
			return
		}
		require.Equal(t, n+1, ev.Event.N, "an event lost or repeated")
		n = ev.Event.N
		require.True(t, strings.HasSuffix(ev.Event.Path, ".py") || ev.Event.Kind == schemas.WatchOverflow, "only *.py: %+v", ev.Event)
		if ev.Event.Kind == schemas.WatchCreate {
			created[ev.Event.Path]++
		}
	}
	for ev, err := range w.Events(t.Context(), 0) {
		require.NoError(t, err)
		add(ev)
		if n == 10 {
			die() // the client dies mid-stream, handling nothing more
			break
		}
	}

	second, _ := jobClient(t, "it-watch", sb.ID())
	stopped, err := second.AttachWatch("py").Stop(t.Context())
	require.NoError(t, err)
	var stop *schemas.WatchInfo
	for ev, err := range second.AttachWatch("py").Events(t.Context(), last) {
		require.NoError(t, err)
		add(ev)
		stop = ev.Stop
	}
	require.NotNil(t, stop, "the stop ends the events")
	assert.Equal(t, stopped.Events, stop.Events)
	assert.Equal(t, n, stop.Events)
	for i := range files {
		assert.Equal(t, 1, created[fmt.Sprintf("src/d%d/m%02d.py", i%4, i)], "the create of m%02d.py, once", i)
	}

	_, _, err = second.Watch(t.Context(), "/etc", sdk.WatchOptions{})
	assert.ErrorIs(t, err, sdk.ErrBadRequest, "outside the workspace")
}

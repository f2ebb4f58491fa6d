package filesystem

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/tools"
	"github.com/sandox/sandox/tools/outbox"
)

// published records what a watch set publishes, as the stream would
// store it: by subject, in order.
type published struct {
	mu   sync.Mutex
	msgs []struct{ subject, msgID string }
	evs  []schemas.WatchEvent
}

func (p *published) publish(_ context.Context, subject, msgID string, data []byte) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.msgs = append(p.msgs, struct{ subject, msgID string }{subject, msgID})
	if strings.HasSuffix(subject, "."+schemas.WatchEventKind) {
		var ev schemas.WatchEvent
		if err := json.Unmarshal(data, &ev); err != nil {
			return err
		}
		p.evs = append(p.evs, ev)
	}
	return nil
}

func (p *published) events() []schemas.WatchEvent {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]schemas.WatchEvent(nil), p.evs...)
}

// watchFixture builds the watch tools on a fresh workspace.
func watchFixture(t *testing.T, wcfg WatchConfig) (*fixture, *published) {
	t.Helper()
	dir := t.TempDir()
	pub := &published{}
	wcfg.Publish, wcfg.Root = pub.publish, dir
	wcfg.SandboxID = func() string { return "sb-w" }
	list, closeWatches := WatchTools(Config{Dir: func() string { return dir }}, wcfg)
	t.Cleanup(func() { _ = closeWatches() })
	m := map[string]tools.Tool{}
	for _, tl := range list {
		m[tl.Name] = tl
	}
	return &fixture{dir: dir, tools: m}, pub
}

// waitEvents waits until the watch published at least n events.
func waitEvents(t *testing.T, pub *published, n int) []schemas.WatchEvent {
	t.Helper()
	require.Eventually(t, func() bool { return len(pub.events()) >= n }, 10*time.Second, 10*time.Millisecond,
		"want %d events, got %v", n, pub.events())
	return pub.events()
}

func TestWatchReportsChangesRecursivelyThroughGlobs(t *testing.T) {
	fx, pub := watchFixture(t, WatchConfig{})
	require.NoError(t, os.MkdirAll(fx.path("src"), 0o755))
	res := fx.mustCall(t, "watch_start", map[string]any{"watch_id": "py", "patterns": []string{"*.py"}})
	var info schemas.WatchInfo
	require.NoError(t, json.Unmarshal(res.Return, &info))
	assert.Equal(t, "py", info.WatchID)
	assert.True(t, info.Recursive)

	require.NoError(t, os.WriteFile(fx.path("notes.txt"), []byte("not reported"), 0o644))
	require.NoError(t, os.WriteFile(fx.path("src/a.py"), []byte("x = 1\n"), 0o644))
	// A directory made after the watch started is watched too, and what
	// it holds by the time its watch takes hold is reported as created.
	require.NoError(t, os.MkdirAll(fx.path("src/pkg/deep"), 0o755))
	require.NoError(t, os.WriteFile(fx.path("src/pkg/deep/b.py"), []byte("y = 2\n"), 0o644))
	waitFor := func(kind, path string) {
		t.Helper()
		require.Eventually(t, func() bool {
			for _, ev := range pub.events() {
				if ev.Kind == kind && ev.Path == path {
					return true
				}
			}
			return false
		}, 10*time.Second, 10*time.Millisecond, "no %s of %s in %v", kind, path, pub.events())
	}
	waitFor(schemas.WatchCreate, "src/a.py")
	waitFor(schemas.WatchCreate, "src/pkg/deep/b.py")
	require.NoError(t, os.Rename(fx.path("src/a.py"), fx.path("src/c.py")))
	waitFor(schemas.WatchRename, "src/a.py")
	waitFor(schemas.WatchCreate, "src/c.py")
	require.NoError(t, os.Remove(fx.path("src/c.py")))
	waitFor(schemas.WatchRemove, "src/c.py")
	require.NoError(t, os.WriteFile(fx.path("src/pkg/deep/b.py"), []byte("y = 3\n"), 0o644))
	waitFor(schemas.WatchWrite, "src/pkg/deep/b.py")

	evs := pub.events()
	for i, ev := range evs {
		assert.Equal(t, int64(i+1), ev.N, "events are numbered without gaps")
		assert.True(t, strings.HasSuffix(ev.Path, ".py"), "only *.py: %v", ev)
	}

	res = fx.mustCall(t, "watch_events", map[string]any{"watch_id": "py", "after": 1})
	var got watchEventsReturn
	require.NoError(t, json.Unmarshal(res.Return, &got))
	require.NotEmpty(t, got.Events)
	assert.Equal(t, int64(2), got.Events[0].N, "after 1 starts at 2")

	res = fx.mustCall(t, "watch_stop", map[string]any{"watch_id": "py"})
	require.NoError(t, json.Unmarshal(res.Return, &info))
	assert.False(t, info.Running)
	pub.mu.Lock()
	last := pub.msgs[len(pub.msgs)-1]
	pub.mu.Unlock()
	assert.Equal(t, schemas.WatchSubject("sb-w", "py", schemas.WatchStopKind), last.subject, "the stop is the last record")
	assert.Equal(t, "sb-w/watch/py/stop", last.msgID)
}

func TestWatchRefusesWhatItCannotWatch(t *testing.T) {
	fx, _ := watchFixture(t, WatchConfig{MaxWatches: 2})
	require.NoError(t, os.WriteFile(fx.path("file.txt"), nil, 0o644))
	for _, tc := range []struct {
		name string
		args map[string]any
		want schemas.ErrorCode
	}{
		{name: "outside the workspace", args: map[string]any{"path": os.TempDir()}, want: schemas.CodeInvalidArgs},
		{name: "a file", args: map[string]any{"path": "file.txt"}, want: schemas.CodeInvalidArgs},
		{name: "missing", args: map[string]any{"path": "nope"}, want: schemas.CodeInvalidArgs},
		{name: "bad pattern", args: map[string]any{"patterns": []string{"[a"}}, want: schemas.CodeInvalidArgs},
		{name: "bad id", args: map[string]any{"watch_id": "a.b"}, want: schemas.CodeInvalidArgs},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := fx.call(t, "watch_start", tc.args)
			require.Error(t, err)
			assert.ErrorIs(t, err, tc.want)
		})
	}
	fx.mustCall(t, "watch_start", map[string]any{"watch_id": "one"})
	_, err := fx.call(t, "watch_start", map[string]any{"watch_id": "one"})
	assert.ErrorIs(t, err, schemas.CodeAlreadyExists)
	fx.mustCall(t, "watch_start", map[string]any{"watch_id": "two"})
	_, err = fx.call(t, "watch_start", map[string]any{"watch_id": "three"})
	assert.ErrorIs(t, err, schemas.CodeResourceExhausted, "past the per-sandbox limit")
	fx.mustCall(t, "watch_stop", map[string]any{"watch_id": "one"})
	fx.mustCall(t, "watch_start", map[string]any{"watch_id": "three"}) // a stopped watch frees its place
}

func TestWatchEndsInTruncatedOnceTheBudgetIsSpent(t *testing.T) {
	fx, pub := watchFixture(t, WatchConfig{Budget: outbox.NewBudget(1000)})
	fx.mustCall(t, "watch_start", map[string]any{"watch_id": "w"})
	for i := range 50 {
		require.NoError(t, os.WriteFile(filepath.Join(fx.dir, "f"+strings.Repeat("x", i%5)+string(rune('a'+i%26))), nil, 0o644))
	}
	require.Eventually(t, func() bool {
		evs := pub.events()
		return len(evs) > 0 && evs[len(evs)-1].Kind == schemas.WatchTruncated
	}, 10*time.Second, 10*time.Millisecond)
	n := len(pub.events())
	require.NoError(t, os.WriteFile(fx.path("after"), nil, 0o644))
	fx.mustCall(t, "watch_stop", map[string]any{"watch_id": "w"})
	evs := pub.events()
	assert.Len(t, evs, n, "nothing after truncated")
	assert.Less(t, n, 50, "the budget stopped the events early")
}

// TestWatchSaysOverflowWhenItCannotCoverADirectory: a directory beyond
// the watch's limit is not watched, and an overflow event says that
// changes may be missing, rather than losing them silently.
func TestWatchSaysOverflowWhenItCannotCoverADirectory(t *testing.T) {
	fx, pub := watchFixture(t, WatchConfig{MaxDirs: 2})
	require.NoError(t, os.MkdirAll(fx.path("a"), 0o755))
	fx.mustCall(t, "watch_start", map[string]any{"watch_id": "w"}) // the root and a
	require.NoError(t, os.MkdirAll(fx.path("b"), 0o755))
	evs := waitEvents(t, pub, 2)
	assert.Equal(t, schemas.WatchCreate, evs[0].Kind)
	assert.Equal(t, "b", evs[0].Path)
	assert.True(t, evs[0].Dir)
	assert.Equal(t, schemas.WatchOverflow, evs[1].Kind, "b cannot be watched")
}

// TestWatchOfATreePastItsLimitStartsWithAnOverflow: a tree with more
// directories than a watch covers starts, with an overflow event first.
func TestWatchOfATreePastItsLimitStartsWithAnOverflow(t *testing.T) {
	fx, pub := watchFixture(t, WatchConfig{MaxDirs: 2})
	for _, d := range []string{"a", "b", "c"} {
		require.NoError(t, os.MkdirAll(fx.path(d), 0o755))
	}
	fx.mustCall(t, "watch_start", map[string]any{"watch_id": "w"})
	evs := waitEvents(t, pub, 1)
	assert.Equal(t, schemas.WatchOverflow, evs[0].Kind)
}

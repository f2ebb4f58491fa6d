package placement

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/schemas/resources"
	"github.com/sandox/sandox/services/orchestrator/runtime"
	"github.com/sandox/sandox/services/orchestrator/state"
)

// fakeLost stands for the orchestrator, which imports this package and so
// cannot run in its tests: it records what the hosts part tells it.
type fakeLost struct {
	mu        sync.Mutex
	lost      []string
	queued    []string
	back      int
	failQueue error
}

func (f *fakeLost) MarkLost(_ context.Context, id, _, reason, _ string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lost = append(f.lost, id+":"+reason)
	return true
}

func (f *fakeLost) FailQueued(_ context.Context, host string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.queued = append(f.queued, host)
	return f.failQueue
}

func (f *fakeLost) Back(context.Context) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.back++
}

func (f *fakeLost) backs() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.back
}

// fakeEngine names an engine of id and measures a host of 4 CPUs and
// 8 GiB; err, when set, is every answer.
type fakeEngine struct {
	id  string
	err error
}

func (e fakeEngine) Host(context.Context) (runtime.Host, error) {
	return runtime.Host{ID: e.id, CPUs: 4, MemoryBytes: 8 << 30}, e.err
}

func (e fakeEngine) measure(ctx context.Context) (resources.Host, error) {
	h, err := e.Host(ctx)
	return resources.Host{CPUs: h.CPUs, MemoryBytes: h.MemoryBytes, DiskBytes: 100 << 30}, err
}

func newTestHosts(t *testing.T, st *state.Store, host string, lostAfter time.Duration) (*Hosts, *fakeLost) {
	t.Helper()
	lost := &fakeLost{}
	e := fakeEngine{id: "engine-" + host}
	cfg := HostsConfig{Worker: "worker-" + host, Host: host, Heartbeat: 20 * time.Millisecond, LostAfter: lostAfter}
	return NewHosts(cfg, st, e, e.measure, lost, slog.New(slog.DiscardHandler)), lost
}

// TestHostsJudgedOnTheJudgesClock runs the lost-host detection on a real
// JetStream bucket against a host whose clock is ten minutes behind:
// while its heartbeats come it stays up, whatever its LastSeen says; once
// they stop, it is lost after LostAfter, and not before.
func TestHostsJudgedOnTheJudgesClock(t *testing.T) {
	st := testStore(t)
	h, lost := newTestHosts(t, st, "host-a", 500*time.Millisecond)
	ctx := t.Context()
	beat := func() {
		_, err := st.UpdateHost(ctx, "skewed", nil, func(hs *schemas.HostStatus) error {
			*hs = schemas.HostStatus{Name: "skewed", State: schemas.HostUp, LastSeen: time.Now().Add(-10 * time.Minute).UTC()}
			return nil
		})
		require.NoError(t, err)
	}
	stateOf := func() schemas.HostState {
		rec, err := st.Host(ctx, "skewed")
		require.NoError(t, err)
		return rec.State
	}
	for range 8 {
		beat()
		h.detectLost(ctx)
		assert.Equal(t, schemas.HostUp, stateOf(), "a host whose heartbeats come is up, though its clock is behind")
		assert.True(t, h.Live(ctx, "skewed"))
		time.Sleep(100 * time.Millisecond) // the heartbeats' pace is what is tested
	}
	// Silent from now on.
	h.detectLost(ctx)
	assert.Equal(t, schemas.HostUp, stateOf(), "not lost before LostAfter")
	time.Sleep(700 * time.Millisecond)
	h.detectLost(ctx)
	assert.Equal(t, schemas.HostLost, stateOf(), "lost after LostAfter of silence")
	assert.False(t, h.Live(ctx, "skewed"))
	assert.Equal(t, []string{"skewed"}, lost.queued, "the commands queued for it are answered")
}

func TestHereAndLive(t *testing.T) {
	st := testStore(t)
	h, _ := newTestHosts(t, st, "host-a", time.Minute)
	assert.True(t, h.Here("host-a"))
	assert.True(t, h.Here(""), "a record from before placement")
	assert.False(t, h.Here("host-b"))
	assert.False(t, h.Live(t.Context(), "host-b"), "a host without a record")
	addHost(t, st, "host-b", 4, 8<<30)
	assert.True(t, h.Live(t.Context(), "host-b"))
}

func TestHeartbeat(t *testing.T) {
	st := testStore(t)
	ctx := t.Context()
	h, lost := newTestHosts(t, st, "host-a", time.Minute)
	require.NoError(t, st.UpdateLedger(ctx, state.LedgerKey("engine-host-a"), func(l *resources.Ledger) error {
		return l.Admit("sb1", schemas.ResolvedResources{NanoCPUs: 1e9, MemoryBytes: 1 << 30}, resources.Host{CPUs: 4, MemoryBytes: 8 << 30}, 1)
	}))
	// A worker of the host that stopped long ago.
	_, err := st.UpdateHost(ctx, "host-a", nil, func(hs *schemas.HostStatus) error {
		hs.Workers = map[string]time.Time{"old-worker": time.Now().Add(-time.Hour)}
		return nil
	})
	require.NoError(t, err)

	require.NoError(t, h.Heartbeat(ctx))
	rec, err := st.Host(ctx, "host-a")
	require.NoError(t, err)
	assert.Equal(t, schemas.HostUp, rec.State)
	assert.Equal(t, "engine-host-a", rec.EngineID)
	assert.Equal(t, 4, rec.CPUs)
	assert.Equal(t, int64(8<<30), rec.MemoryBytes)
	assert.Equal(t, int64(100<<30), rec.DiskBytes)
	assert.Equal(t, 1, rec.Sandboxes)
	assert.Equal(t, int64(1<<30), rec.Allocated.MemoryBytes)
	assert.Contains(t, rec.Workers, "worker-host-a")
	assert.NotContains(t, rec.Workers, "old-worker", "a worker silent for longer than LostAfter is forgotten")
	assert.Zero(t, lost.backs())

	// Marked lost while it was silent: the next heartbeat brings it back.
	_, err = st.UpdateHost(ctx, "host-a", nil, func(hs *schemas.HostStatus) error {
		hs.State, hs.LostAt = schemas.HostLost, time.Now()
		return nil
	})
	require.NoError(t, err)
	require.NoError(t, h.Heartbeat(ctx))
	rec, err = st.Host(ctx, "host-a")
	require.NoError(t, err)
	assert.Equal(t, schemas.HostUp, rec.State)
	assert.True(t, rec.LostAt.IsZero())
	assert.Equal(t, 1, lost.backs(), "what was lost on it is cleaned up")
}

func TestHeartbeatErrors(t *testing.T) {
	st := testStore(t)
	broken := errors.New("engine down")
	tests := []struct {
		name    string
		engine  fakeEngine
		measure func(context.Context) (resources.Host, error)
	}{
		{"the capacity", fakeEngine{id: "e"}, func(context.Context) (resources.Host, error) { return resources.Host{}, broken }},
		{"the engine", fakeEngine{id: "e", err: broken}, func(context.Context) (resources.Host, error) { return resources.Host{}, nil }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := NewHosts(HostsConfig{Host: "host-a", LostAfter: time.Minute}, st, tc.engine, tc.measure, &fakeLost{}, slog.New(slog.DiscardHandler))
			assert.ErrorIs(t, h.Heartbeat(t.Context()), broken)
		})
	}
}

// TestHostLostMarksItsSandboxes lets host-b fall silent with sandboxes on
// it: the worker of host-a marks the host lost, tells the orchestrator of
// each sandbox, forgets its pooled sandboxes no one claimed and empties
// its ledger. Only one worker does it.
func TestHostLostMarksItsSandboxes(t *testing.T) {
	st := testStore(t)
	ctx := t.Context()
	h, lost := newTestHosts(t, st, "host-a", 100*time.Millisecond)
	other, otherLost := newTestHosts(t, st, "host-c", 100*time.Millisecond)
	require.NoError(t, h.Heartbeat(ctx))
	addHost(t, st, "host-b", 4, 8<<30)
	for _, sb := range []schemas.SandboxStatus{
		{ID: "b-1", Host: "host-b"},
		{ID: "pool-unclaimed", Host: "host-b", Pooled: true},
		{ID: "pool-claimed", Host: "host-b", Pooled: true, ClaimedBy: "b-2"},
		{ID: "b-2", Host: "host-b"},
		{ID: "a-1", Host: "host-a"},
	} {
		_, err := st.CreateSandbox(ctx, sb)
		require.NoError(t, err)
	}
	require.NoError(t, st.UpdateLedger(ctx, state.LedgerKey("engine-host-b"), func(l *resources.Ledger) error {
		return l.Admit("b-1", schemas.ResolvedResources{NanoCPUs: 1e9}, resources.Host{CPUs: 4, MemoryBytes: 8 << 30}, 1)
	}))

	h.detectLost(ctx) // the first sight of host-b's record
	other.detectLost(ctx)
	time.Sleep(200 * time.Millisecond) // the silence is what is tested
	require.NoError(t, h.Heartbeat(ctx), "host-a is not silent")
	h.detectLost(ctx)
	other.detectLost(ctx)

	rec, err := st.Host(ctx, "host-b")
	require.NoError(t, err)
	assert.Equal(t, schemas.HostLost, rec.State)
	assert.False(t, rec.LostAt.IsZero())
	assert.ElementsMatch(t, []string{"b-1:" + schemas.LostHost, "b-2:" + schemas.LostHost}, lost.lost)
	assert.Equal(t, []string{"host-b"}, lost.queued)
	assert.Empty(t, otherLost.lost, "one worker marks the host lost")
	_, _, err = st.Sandbox(ctx, "pool-unclaimed")
	assert.ErrorIs(t, err, schemas.CodeNotFound, "an unclaimed pooled sandbox of a lost host is forgotten")
	_, _, err = st.Sandbox(ctx, "pool-claimed")
	assert.NoError(t, err, "a claimed one is its sandbox's")
	l, err := st.ReadLedger(ctx, state.LedgerKey("engine-host-b"))
	require.NoError(t, err)
	assert.Empty(t, l.Allocations, "the lost host's ledger is released")

	// host-a never judges itself, and a lost host is not lost again.
	h.detectLost(ctx)
	assert.Len(t, lost.lost, 2)
}

func TestRunHeartbeats(t *testing.T) {
	st := testStore(t)
	h, lost := newTestHosts(t, st, "host-a", time.Minute)
	lost.failQueue = errors.New("not asked")
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.Run(ctx)
	}()
	require.Eventually(t, func() bool {
		rec, err := st.Host(t.Context(), "host-a")
		return err == nil && rec.State == schemas.HostUp
	}, 5*time.Second, 10*time.Millisecond, "the host is recorded")
	cancel()
	<-done
	assert.Empty(t, lost.queued)
}

package pool

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/internal/natstest"
	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/schemas/resources"
	"github.com/sandox/sandox/services/orchestrator/runtime"
	"github.com/sandox/sandox/services/orchestrator/state"
)

// fakeSandboxes stands for the orchestrator's sandbox lifecycle, which
// imports this package and so cannot run in its tests: it records pooled
// sandboxes in the real store, as the orchestrator does, and says what
// it was asked. Each func, when set, replaces the default behaviour.
type fakeSandboxes struct {
	store  *state.Store
	worker string
	host   string

	fill   func(ctx context.Context, src Source) (string, error)
	claim  func(ctx context.Context, p schemas.SandboxStatus, req Request) (schemas.SandboxStatus, Outcome, error)
	revoke func(ctx context.Context, id string) error

	mu      sync.Mutex
	removed []string
	revoked []string
	claims  []Request
}

func (f *fakeSandboxes) Fill(ctx context.Context, src Source) (string, error) {
	if f.fill != nil {
		return f.fill(ctx, src)
	}
	req, err := resources.Parse(src.Compute)
	if err != nil {
		return "", err
	}
	limits, err := resources.Resolve(req, testHost)
	if err != nil {
		return "", err
	}
	id := NewID()
	_, err = f.store.CreateSandbox(ctx, schemas.SandboxStatus{
		ID: id, State: schemas.StateRunning, Host: f.host, Pooled: true, PoolGroup: src.Group, PoolWorker: f.worker,
		Families: []string{"filesystem_tools"}, Egress: &schemas.Egress{Policy: schemas.EgressNone}, Resources: limits,
	})
	return id, err
}

func (f *fakeSandboxes) Remove(ctx context.Context, poolID string) error {
	f.mu.Lock()
	f.removed = append(f.removed, poolID)
	f.mu.Unlock()
	return f.store.DeleteSandbox(ctx, poolID)
}

func (f *fakeSandboxes) Revoke(ctx context.Context, id string) error {
	f.mu.Lock()
	f.revoked = append(f.revoked, id)
	f.mu.Unlock()
	if f.revoke != nil {
		return f.revoke(ctx, id)
	}
	return nil
}

func (f *fakeSandboxes) Claim(ctx context.Context, p schemas.SandboxStatus, req Request) (schemas.SandboxStatus, Outcome, error) {
	f.mu.Lock()
	f.claims = append(f.claims, req)
	f.mu.Unlock()
	if f.claim != nil {
		return f.claim(ctx, p, req)
	}
	st := schemas.SandboxStatus{ID: req.Spec.ID, GroupID: req.Group.ID, FromPool: true, PoolID: p.ID}
	_, err := f.store.UpdateSandbox(ctx, p.ID, func(p *schemas.SandboxStatus) error {
		p.ClaimedBy = st.ID
		return nil
	})
	return st, Taken, err
}

func (f *fakeSandboxes) removedIDs() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.removed...)
}

// testHost is the host the tests' pools measure.
var testHost = resources.Host{CPUs: 4, MemoryBytes: 8 << 30}

// fakeEgress resolves every policy to the sandbox's, else the group's,
// else none, as the isolation part does without a NATS socket.
type fakeEgress struct{}

func (fakeEgress) Resolve(group, sandbox *schemas.Egress) (schemas.Egress, error) {
	switch {
	case sandbox != nil:
		return *sandbox, nil
	case group != nil:
		return *group, nil
	}
	return schemas.Egress{Policy: schemas.EgressNone}, nil
}

// testPools is a worker's pools on a real embedded NATS server with
// sandox's buckets, acting through a fakeSandboxes.
type testPools struct {
	*Pools
	nc    *nats.Conn
	store *state.Store
	fake  *fakeSandboxes
}

func newTestPools(t *testing.T, cfg Config) *testPools {
	t.Helper()
	nc := natstest.Connect(t, natstest.Start(t))
	js := natstest.JetStream(t, nc)
	require.NoError(t, state.Setup(t.Context(), js))
	store, err := state.OpenStore(t.Context(), js)
	require.NoError(t, err)
	return withPools(t, nc, store, cfg)
}

// withPools makes the pools of cfg on the NATS and store of another.
func withPools(t *testing.T, nc *nats.Conn, store *state.Store, cfg Config) *testPools {
	t.Helper()
	if cfg.Worker == "" {
		cfg.Worker = "unit-worker"
	}
	if cfg.Host == "" {
		cfg.Host = "host-a"
	}
	fake := &fakeSandboxes{store: store, worker: cfg.Worker, host: cfg.Host}
	measure := func(context.Context) (resources.Host, error) { return testHost, nil }
	p := New(cfg, Parts{Maker: fake, Claimer: fake, Measure: measure, Egress: fakeEgress{}}, store, nc, slog.New(slog.DiscardHandler))
	return &testPools{Pools: p, nc: nc, store: store, fake: fake}
}

// run runs the pool loop until the test ends, and waits for it.
func (tp *testPools) run(t *testing.T) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		tp.Run(ctx)
	}()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(stop)
	return stop
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	require.Eventually(t, cond, 10*time.Second, 10*time.Millisecond, what)
}

func TestCheckSpec(t *testing.T) {
	tests := []struct {
		name string
		spec *schemas.PoolSpec
		ok   bool
	}{
		{"none", nil, true},
		{"a size", &schemas.PoolSpec{Size: 2}, true},
		{"the largest size", &schemas.PoolSpec{Size: schemas.MaxPoolSize}, true},
		{"a negative size", &schemas.PoolSpec{Size: -1}, false},
		{"too large", &schemas.PoolSpec{Size: schemas.MaxPoolSize + 1}, false},
		{"a negative idle time", &schemas.PoolSpec{Size: 1, IdleShrinkSeconds: -1}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckSpec(tc.spec)
			if tc.ok {
				assert.NoError(t, err)
			} else {
				assert.ErrorIs(t, err, schemas.CodeBadRequest)
			}
		})
	}
}

func TestFits(t *testing.T) {
	pooled := schemas.SandboxStatus{
		Families:  []string{"filesystem_tools", "terminal_tools"},
		Egress:    &schemas.Egress{Policy: schemas.EgressNone},
		Resources: schemas.ResolvedResources{NanoCPUs: 1e9, MemoryBytes: 1 << 30, PIDs: 256},
	}
	same := Shape{Families: pooled.Families, Egress: *pooled.Egress, Limits: pooled.Resources}
	with := func(change func(*Shape)) Shape {
		s := same
		change(&s)
		return s
	}
	tests := []struct {
		name      string
		shape     Shape
		canUpdate bool
		want      bool
	}{
		{"the pool's shape", same, true, true},
		{"the pool's shape, no updates", same, false, true},
		{"more memory", with(func(s *Shape) { s.Limits.MemoryBytes = 2 << 30 }), true, true},
		{"more memory, no updates", with(func(s *Shape) { s.Limits.MemoryBytes = 2 << 30 }), false, false},
		{"fewer CPUs", with(func(s *Shape) { s.Limits.NanoCPUs = 5e8 }), true, true},
		{"unlimited memory", with(func(s *Shape) { s.Limits.MemoryBytes = 0 }), true, false},
		{"a disk", with(func(s *Shape) { s.Limits.DiskBytes = 1 << 30 }), true, false},
		{"a CPU set", with(func(s *Shape) { s.Limits.CPUSet = "0" }), true, false},
		{"other families", with(func(s *Shape) { s.Families = []string{"filesystem_tools"} }), true, false},
		{"other egress", with(func(s *Shape) { s.Egress = schemas.Egress{Policy: schemas.EgressOpen} }), true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := &Pools{cfg: Config{CanUpdate: tc.canUpdate}}
			assert.Equal(t, tc.want, s.fits(pooled, tc.shape))
		})
	}
	t.Run("a pooled sandbox without egress", func(t *testing.T) {
		p := pooled
		p.Egress = nil
		assert.False(t, (&Pools{}).fits(p, same))
	})
}

func TestLabelsAndIDs(t *testing.T) {
	id := NewID()
	assert.True(t, schemas.IsPoolID(id), "got %q, want a pool id", id)
	assert.NotEqual(t, id, NewID())

	l := map[string]string{}
	Labels(l, &schemas.SandboxStatus{ID: "sb1"})
	assert.Empty(t, l, "a sandbox that is not pooled")
	Labels(l, &schemas.SandboxStatus{ID: id, Pooled: true, PoolWorker: "w1"})
	assert.Equal(t, map[string]string{runtime.LabelPoolWorker: "w1"}, l)
	Labels(l, &schemas.SandboxStatus{ID: id, Pooled: true, PoolWorker: "w1", PoolGroup: "g1"})
	assert.Equal(t, "g1", l[runtime.LabelPoolGroup])
}

func TestWarmPool(t *testing.T) {
	p := newWarm(Source{}, 2, 0)
	_, ok := p.take()
	assert.False(t, ok, "an empty pool")
	p.put("a")
	p.put("b")
	id, ok := p.take()
	require.True(t, ok)
	assert.Equal(t, "a", id, "the oldest first")
	assert.Equal(t, 2, p.held(), "a pool id being claimed still counts")
	assert.Equal(t, 1, p.count())
	p.giveBack(id)
	assert.Equal(t, 2, p.count())
	id, _ = p.drop()
	assert.Equal(t, "a", id, "drop takes the newest")
	_, _ = p.take()
	p.claimed()
	assert.Equal(t, 0, p.held())
	_, ok = p.drop()
	assert.False(t, ok)

	idle := newWarm(Source{}, 3, time.Millisecond)
	assert.Equal(t, 3, idle.target())
	time.Sleep(5 * time.Millisecond) // the idle time is what is tested
	assert.Equal(t, 0, idle.target(), "idle too long")
	idle.touch()
	assert.Equal(t, 3, idle.target(), "touched")
}

func TestRunFillsAndDrains(t *testing.T) {
	tp := newTestPools(t, Config{Size: 2})
	assert.True(t, tp.Has(""))
	stop := tp.run(t)
	eventually(t, "the default pool fills", func() bool { return tp.Ready("") == 2 })
	_, err := tp.nc.Request(schemas.PoolWorkerSubject("unit-worker"), nil, time.Second)
	assert.NoError(t, err, "the worker answers on its pool subject while it runs")
	assert.True(t, tp.workerAlive(t.Context(), "unit-worker"))

	stop()
	assert.Len(t, tp.fake.removedIDs(), 2, "a stopped loop removes what its pools hold")
	assert.Equal(t, 0, tp.Ready(""))
	assert.False(t, tp.workerAlive(t.Context(), "unit-worker"), "a stopped worker does not answer")
}

func TestRunRetriesAFailedFill(t *testing.T) {
	tp := newTestPools(t, Config{Size: 1})
	var mu sync.Mutex
	fails := 1
	tp.fake.fill = func(ctx context.Context, src Source) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		if fails > 0 {
			fails--
			return "", errors.New("the host is full")
		}
		tp.fake.fill = nil
		return tp.fake.Fill(ctx, src)
	}
	tp.run(t)
	eventually(t, "the pool fills at a later tick", func() bool { return tp.Ready("") == 1 })
}

func TestIdlePoolShrinks(t *testing.T) {
	// The idle time leaves room to fill two sandboxes on a loaded machine.
	tp := newTestPools(t, Config{Size: 2, Idle: time.Second})
	tp.run(t)
	eventually(t, "the idle pool empties", func() bool {
		return tp.get("").target() == 0 && tp.get("").held() == 0 && len(tp.fake.removedIDs()) > 0
	})
	// A claim it could serve wakes it up again.
	_, ok, err := tp.Claim(t.Context(), schemas.GroupStatus{ID: "g1"}, schemas.SandboxSpec{ID: "sb1"}, "c1")
	require.NoError(t, err)
	assert.False(t, ok, "nothing ready")
	eventually(t, "the pool fills again", func() bool { return tp.Ready("") == 2 })
}

// createGroup records group id, which asks for a pool of size.
func (tp *testPools) createGroup(t *testing.T, id string, size int) schemas.GroupStatus {
	t.Helper()
	g := schemas.GroupStatus{ID: id, State: schemas.GroupCreated, CreatedAt: time.Now().UTC(),
		Spec: schemas.GroupSpec{Pool: &schemas.PoolSpec{Size: size, IdleShrinkSeconds: 60}}}
	require.NoError(t, tp.store.CreateGroup(t.Context(), &g))
	return g
}

func TestGroupPools(t *testing.T) {
	tp := newTestPools(t, Config{})
	tp.run(t)
	g := tp.createGroup(t, "g1", 2)
	eventually(t, "the group's pool fills", func() bool { return tp.Ready("g1") == 2 })
	assert.False(t, tp.Has(""), "no default pool")

	tp.DropGroup(t.Context(), g)
	assert.False(t, tp.Has("g1"))
	assert.Len(t, tp.fake.removedIDs(), 2)
	require.Never(t, func() bool { return tp.Has("g1") }, 3*Tick, 50*time.Millisecond, "the ended group's pool is not made again")

	// The record goes, and a new group of the same id gets a pool again.
	require.NoError(t, tp.store.DeleteGroup(t.Context(), "g1"))
	tp.createGroup(t, "g1", 1)
	eventually(t, "the new group's pool fills", func() bool { return tp.Ready("g1") == 1 })

	// A group that asks for no pool any more has its pool drained.
	_, err := tp.store.UpdateGroup(t.Context(), "g1", func(g *schemas.GroupStatus) error {
		g.Spec.Pool = nil
		return nil
	})
	require.NoError(t, err)
	eventually(t, "the pool is drained", func() bool { return !tp.Has("g1") && len(tp.fake.removedIDs()) == 3 })
}

func TestGroupPoolOfAnotherWorkersGroupGone(t *testing.T) {
	tp := newTestPools(t, Config{})
	tp.run(t)
	tp.createGroup(t, "g2", 1)
	eventually(t, "the group's pool fills", func() bool { return tp.Ready("g2") == 1 })
	require.NoError(t, tp.store.DeleteGroup(t.Context(), "g2"))
	eventually(t, "the pool of a group ended elsewhere is drained", func() bool { return !tp.Has("g2") && len(tp.fake.removedIDs()) == 1 })
}

// fill fills the pools of tp once, without the loop.
func (tp *testPools) fill(t *testing.T) {
	t.Helper()
	for _, p := range tp.all() {
		tp.resize(t.Context(), p)
	}
}

func TestClaim(t *testing.T) {
	ctx := t.Context()
	spec := func(id string) schemas.SandboxSpec {
		return schemas.SandboxSpec{ID: id, Families: []string{"filesystem_tools"}}
	}
	g := schemas.GroupStatus{ID: "g1"}

	t.Run("taken", func(t *testing.T) {
		tp := newTestPools(t, Config{Size: 1})
		tp.fill(t)
		st, ok, err := tp.Claim(ctx, g, spec("sb1"), "c1")
		require.NoError(t, err)
		require.True(t, ok)
		assert.Equal(t, "sb1", st.ID)
		assert.Equal(t, 0, tp.Ready(""))
		assert.Equal(t, 0, tp.get("").held(), "a pool id taken leaves the pool")
		require.Len(t, tp.fake.claims, 1)
		assert.Equal(t, Shape{
			Families: []string{"filesystem_tools"}, Egress: schemas.Egress{Policy: schemas.EgressNone},
			Host: resources.Host{CPUs: 4, MemoryBytes: 8 << 30}, Limits: tp.fake.claims[0].Shape.Limits,
		}, tp.fake.claims[0].Shape)
		assert.Equal(t, "sb1", tp.SandboxOf(ctx, st.PoolID), "the pool id's container is the claimed sandbox's")
		assert.Equal(t, "sb1", tp.SandboxOf(ctx, "sb1"))
	})
	t.Run("given back", func(t *testing.T) {
		tp := newTestPools(t, Config{Size: 1})
		tp.fill(t)
		tp.fake.claim = func(context.Context, schemas.SandboxStatus, Request) (schemas.SandboxStatus, Outcome, error) {
			return schemas.SandboxStatus{}, GivenBack, schemas.Errorf(schemas.CodeAlreadyExists, "taken")
		}
		_, ok, err := tp.Claim(ctx, g, spec("sb1"), "c1")
		assert.True(t, ok, "the refusal is the create's answer")
		assert.ErrorIs(t, err, schemas.CodeAlreadyExists)
		assert.Equal(t, 1, tp.Ready(""), "the pooled sandbox is ready again")
	})
	t.Run("failed", func(t *testing.T) {
		tp := newTestPools(t, Config{Size: 1})
		tp.fill(t)
		tp.fake.claim = func(context.Context, schemas.SandboxStatus, Request) (schemas.SandboxStatus, Outcome, error) {
			return schemas.SandboxStatus{}, Failed, nil
		}
		_, ok, err := tp.Claim(ctx, g, spec("sb1"), "c1")
		assert.NoError(t, err)
		assert.False(t, ok, "created afresh")
		assert.Equal(t, 0, tp.get("").held())
	})
	t.Run("a record that is gone", func(t *testing.T) {
		tp := newTestPools(t, Config{Size: 1})
		tp.fill(t)
		id, _ := tp.get("").take()
		tp.get("").giveBack(id)
		require.NoError(t, tp.store.DeleteSandbox(ctx, id))
		_, ok, _ := tp.Claim(ctx, g, spec("sb1"), "c1")
		assert.False(t, ok)
		assert.Equal(t, []string{id}, tp.fake.removedIDs(), "what is left of it is removed")
		assert.Equal(t, 0, tp.get("").held())
		assert.Empty(t, tp.SandboxOf(ctx, id), "a pool id without a record")
	})
	t.Run("does not fit", func(t *testing.T) {
		tp := newTestPools(t, Config{Size: 1})
		tp.fill(t)
		_, ok, err := tp.Claim(ctx, g, schemas.SandboxSpec{ID: "sb1", Families: []string{"terminal_tools"}}, "c1")
		assert.NoError(t, err)
		assert.False(t, ok)
		assert.Equal(t, 1, tp.Ready(""), "given back")
		assert.Empty(t, tp.SandboxOf(ctx, tp.get("").ready[0]), "a pooled sandbox not claimed concerns no sandbox")
	})

	tp := newTestPools(t, Config{Size: 1})
	tp.fill(t)
	toolFile := []schemas.ToolFile{{Name: "t.py"}}
	refused := []struct {
		name string
		g    schemas.GroupStatus
		spec schemas.SandboxSpec
	}{
		{"a bad id", g, schemas.SandboxSpec{ID: "no spaces"}},
		{"the sandbox's tool files", g, schemas.SandboxSpec{ID: "sb1", Tools: toolFile}},
		{"the group's tool files", schemas.GroupStatus{ID: "g1", Spec: schemas.GroupSpec{Tools: toolFile}}, spec("sb1")},
		{"an unknown family", g, schemas.SandboxSpec{ID: "sb1", Families: []string{"no_such_tools"}}},
		{"bad compute", g, schemas.SandboxSpec{ID: "sb1", Families: []string{"filesystem_tools"}, Compute: &schemas.ComputeResources{CPU: "lots"}}},
		{"more CPUs than the host", g, schemas.SandboxSpec{ID: "sb1", Families: []string{"filesystem_tools"}, Compute: &schemas.ComputeResources{CPU: "64"}}},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			_, ok, err := tp.Claim(ctx, tc.g, tc.spec, "c1")
			assert.NoError(t, err)
			assert.False(t, ok)
			assert.Equal(t, 1, tp.Ready(""), "the pool keeps its sandbox")
		})
	}
	t.Run("a host that does not measure", func(t *testing.T) {
		tp := newTestPools(t, Config{Size: 1})
		tp.fill(t)
		tp.measure = func(context.Context) (resources.Host, error) { return resources.Host{}, errors.New("no engine") }
		_, ok, _ := tp.Claim(ctx, g, spec("sb1"), "c1")
		assert.False(t, ok)
	})
}

func TestClaimFromTheGroupsPoolFirst(t *testing.T) {
	tp := newTestPools(t, Config{Size: 1})
	tp.run(t)
	g := tp.createGroup(t, "g1", 1)
	eventually(t, "both pools fill", func() bool { return tp.Ready("g1") == 1 && tp.Ready("") == 1 })
	st, ok, err := tp.Claim(t.Context(), g, schemas.SandboxSpec{ID: "sb1", Families: []string{"filesystem_tools"}}, "c1")
	require.NoError(t, err)
	require.True(t, ok)
	p, _, err := tp.store.Sandbox(t.Context(), st.PoolID)
	require.NoError(t, err)
	assert.Equal(t, "g1", p.PoolGroup)

	// The pool of an earlier group of the same id serves no later one.
	later := g
	later.CreatedAt = g.CreatedAt.Add(time.Second)
	eventually(t, "the group's pool refills", func() bool { return tp.Ready("g1") == 1 })
	_, ok, err = tp.Claim(t.Context(), later, schemas.SandboxSpec{ID: "sb2", Families: []string{"filesystem_tools"}}, "c2")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, 1, tp.Ready("g1"), "the default pool served it")
}

func TestReap(t *testing.T) {
	ctx := t.Context()
	tp := newTestPools(t, Config{CredsDir: t.TempDir()})
	dead := withPools(t, tp.nc, tp.store, Config{Worker: "dead-worker"})
	live := withPools(t, tp.nc, tp.store, Config{Worker: "live-worker"})
	other := withPools(t, tp.nc, tp.store, Config{Worker: "other-worker", Host: "host-b"})
	live.run(t)
	eventually(t, "the live worker answers", func() bool { return tp.workerAlive(ctx, "live-worker") })

	fill := func(f *testPools) string {
		id, err := f.fake.Fill(ctx, Source{})
		require.NoError(t, err)
		return id
	}
	deadID, ownID, liveID, otherID := fill(dead), fill(tp), fill(live), fill(other)
	claimedID := fill(dead)
	_, err := tp.store.UpdateSandbox(ctx, claimedID, func(p *schemas.SandboxStatus) error {
		p.ClaimedBy = "sb1"
		return nil
	})
	require.NoError(t, err)
	_, err = tp.store.CreateSandbox(ctx, schemas.SandboxStatus{ID: "sb1", Host: "host-a"})
	require.NoError(t, err)
	// The other host's ledger holds its pooled sandbox.
	_, err = tp.store.UpdateHost(ctx, "host-b", nil, func(h *schemas.HostStatus) error {
		h.Name, h.EngineID, h.State = "host-b", "engine-b", schemas.HostUp
		return nil
	})
	require.NoError(t, err)
	require.NoError(t, tp.store.UpdateLedger(ctx, state.LedgerKey("engine-b"), func(l *resources.Ledger) error {
		return l.Admit(otherID, schemas.ResolvedResources{NanoCPUs: 1e9}, resources.Host{CPUs: 4, MemoryBytes: 8 << 30}, 1)
	}))
	// A credentials directory whose pooled sandbox has no record.
	stale := filepath.Join(tp.cfg.CredsDir, schemas.PoolIDPrefix+"gone.d")
	require.NoError(t, os.Mkdir(stale, 0o700))
	kept := tp.credsDir(liveID)
	require.NoError(t, os.Mkdir(kept, 0o700))

	exists := func(id string) bool {
		_, _, err := tp.store.Sandbox(ctx, id)
		return err == nil
	}
	tp.Reap(ctx, false)
	assert.False(t, exists(deadID), "a dead worker's pooled sandbox is reaped")
	assert.True(t, exists(ownID), "a running worker keeps its own")
	assert.True(t, exists(liveID), "a live worker's is kept")
	assert.True(t, exists(claimedID), "a claimed one is its sandbox's")
	assert.False(t, exists(otherID), "another host's silent worker's record is released")
	assert.Equal(t, []string{deadID}, tp.fake.removedIDs(), "removed here: only what is on this host")
	assert.Equal(t, []string{otherID}, tp.fake.revoked, "the other host's sandbox's identity is revoked")
	l, err := tp.store.ReadLedger(ctx, state.LedgerKey("engine-b"))
	require.NoError(t, err)
	assert.Empty(t, l.Allocations, "and its allocation released")
	assert.DirExists(t, stale, "credentials are swept only at start")

	tp.Reap(ctx, true)
	assert.False(t, exists(ownID), "at start, those of its own name go too")
	assert.NoDirExists(t, stale)
	assert.DirExists(t, kept, "the directory of a pooled sandbox that has a record stays")
	assert.Equal(t, "", (&Pools{}).credsDir("x"), "no credentials directory")
}

func TestReapLogsFailures(t *testing.T) {
	ctx := t.Context()
	tp := newTestPools(t, Config{})
	other := withPools(t, tp.nc, tp.store, Config{Worker: "other-worker", Host: "host-b"})
	id, err := other.fake.Fill(ctx, Source{})
	require.NoError(t, err)
	tp.fake.revoke = func(context.Context, string) error { return errors.New("auth is down") }
	tp.Reap(ctx, false)
	_, _, err = tp.store.Sandbox(ctx, id)
	assert.Error(t, err, "the record goes even when the identity could not be revoked")
	assert.Equal(t, []string{id}, tp.fake.revoked)

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	tp.Reap(cancelled, true) // a reap whose context is done does nothing
}

package groupdb

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/internal/natstest"
	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/orchestrator/runtime"
	"github.com/sandox/sandox/services/orchestrator/state"
)

// memEngine is an in-memory Engine and runtime.DatabaseRuntime: containers
// by name, volumes, and one address for every container.
type memEngine struct {
	mu         sync.Mutex
	containers map[string]*memContainer
	volumes    map[string]bool
	networks   []string
	ip         string
	starts     int
}

type memContainer struct {
	spec    runtime.ContainerSpec
	running bool
}

func newMemEngine(ip string) *memEngine {
	return &memEngine{containers: map[string]*memContainer{}, volumes: map[string]bool{}, ip: ip}
}

func (m *memEngine) Create(_ context.Context, spec runtime.ContainerSpec) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.containers[spec.Name]; ok {
		return "", fmt.Errorf("container %s exists", spec.Name)
	}
	m.containers[spec.Name] = &memContainer{spec: spec}
	return spec.Name, nil
}

func (m *memEngine) Start(_ context.Context, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.containers[id]
	if !ok {
		return fmt.Errorf("container %s: %w", id, runtime.ErrNotFound)
	}
	c.running = true
	m.starts++
	return nil
}

func (m *memEngine) Remove(_ context.Context, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.containers, id)
	return nil
}

func (m *memEngine) Inspect(_ context.Context, id string) (runtime.ContainerState, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.containers[id]
	if !ok {
		return runtime.ContainerState{}, fmt.Errorf("container %s: %w", id, runtime.ErrNotFound)
	}
	return c.state(), nil
}

func (c *memContainer) state() runtime.ContainerState {
	st := runtime.ContainerState{ID: c.spec.Name, Name: c.spec.Name, Running: c.running, Status: runtime.StatusExited, Labels: c.spec.Labels}
	if c.running {
		st.Status = runtime.StatusRunning
	}
	return st
}

func (m *memEngine) List(_ context.Context, labels ...string) ([]runtime.ContainerState, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []runtime.ContainerState
next:
	for _, c := range m.containers {
		for _, l := range labels {
			k, v, hasValue := strings.Cut(l, "=")
			have, ok := c.spec.Labels[k]
			if !ok || hasValue && have != v {
				continue next
			}
		}
		out = append(out, c.state())
	}
	return out, nil
}

func (m *memEngine) Logs(context.Context, string, int) (string, error) { return "no answer yet", nil }

func (m *memEngine) CreateVolume(_ context.Context, spec runtime.VolumeSpec) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.volumes[spec.Name] = true
	return nil
}

func (m *memEngine) RemoveVolume(_ context.Context, name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.volumes, name)
	return nil
}

func (m *memEngine) EnsureNetwork(_ context.Context, name string, _ map[string]string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.networks = append(m.networks, name)
	return nil
}

func (m *memEngine) ContainerIP(context.Context, string, string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.ip, nil
}

func (m *memEngine) setIP(ip string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ip = ip
}

func (m *memEngine) counts() (containers, volumes int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.containers), len(m.volumes)
}

// testBus starts an embedded NATS server with sandox's streams and
// buckets, and returns a connection and the store.
func testBus(t *testing.T) (*nats.Conn, *state.Store) {
	t.Helper()
	nc := natstest.Connect(t, natstest.Start(t))
	js := natstest.JetStream(t, nc)
	require.NoError(t, state.Setup(t.Context(), js))
	st, err := state.OpenStore(t.Context(), js)
	require.NoError(t, err)
	return nc, st
}

func testConfig() Config {
	return Config{Network: "sandox-data", System: "unit", Host: "host-a", QdrantImage: "sandox/qdrant:x", QdrantDataDir: "/data",
		ReadyTimeout: 300 * time.Millisecond, PopulateTimeout: 5 * time.Second}
}

func codeOf(err error) schemas.ErrorCode {
	var se *schemas.Error
	if errors.As(err, &se) {
		return se.Code
	}
	return ""
}

// qdrantGroup records a group that needs Qdrant.
func qdrantGroup(t *testing.T, st *state.Store, id string) schemas.GroupStatus {
	t.Helper()
	g := schemas.GroupStatus{ID: id, State: schemas.GroupCreated, Spec: schemas.GroupSpec{
		DatabaseAccess: schemas.DatabaseAccess{{Database: schemas.DatabaseQdrant, Namespace: "docs", Read: true}},
	}}
	require.NoError(t, st.CreateGroup(t.Context(), &g))
	return g
}

// TestStartAQdrant starts a group's Qdrant on an engine whose container
// answers on its address: the network is made, the endpoint recorded in
// the group with this host, and Stop removes container and volume.
func TestStartAQdrant(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.77:6334")
	if err != nil {
		t.Skipf("cannot listen where the fake Qdrant answers: %v", err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	nc, st := testBus(t)
	rt := newMemEngine("127.0.0.77")
	d := New(testConfig(), rt, rt, st, nc, slog.New(slog.DiscardHandler))
	g := qdrantGroup(t, st, "g1")

	g, err = d.Start(t.Context(), g)
	require.NoError(t, err)
	require.Len(t, g.Databases, 1)
	assert.Equal(t, schemas.DatabaseEndpoint{Database: "qdrant", Address: "127.0.0.77:6334", Container: Name("g1", "qdrant"), Volume: Name("g1", "qdrant")}, g.Databases[0])
	assert.Equal(t, "host-a", g.DatabaseHost)
	assert.Equal(t, []string{"sandox-data"}, rt.networks)
	containers, volumes := rt.counts()
	assert.Equal(t, 1, containers)
	assert.Equal(t, 1, volumes)

	require.NoError(t, d.Stop(t.Context(), g))
	containers, volumes = rt.counts()
	assert.Zero(t, containers)
	assert.Zero(t, volumes)
}

// TestStartFailures checks a group without databases (nothing to do), an
// engine that cannot run databases, and a database that never answers:
// unavailable with its logs, and nothing left behind.
func TestStartFailures(t *testing.T) {
	nc, st := testBus(t)
	log := slog.New(slog.DiscardHandler)
	rt := newMemEngine("127.0.0.78")

	plain := schemas.GroupStatus{ID: "plain"}
	g, err := New(testConfig(), rt, nil, st, nc, log).Start(t.Context(), plain)
	require.NoError(t, err)
	assert.Equal(t, plain, g)

	g = qdrantGroup(t, st, "g1")
	_, err = New(testConfig(), rt, nil, st, nc, log).Start(t.Context(), g)
	assert.Equal(t, schemas.CodeUnsupported, codeOf(err))

	noImage := testConfig()
	noImage.QdrantImage = ""
	_, err = New(noImage, rt, rt, st, nc, log).Start(t.Context(), g)
	assert.Equal(t, schemas.CodeUnsupported, codeOf(err))

	_, err = New(testConfig(), rt, rt, st, nc, log).Start(t.Context(), g)
	assert.Equal(t, schemas.CodeUnavailable, codeOf(err))
	assert.ErrorContains(t, err, "no answer yet", "the database's logs come with the error")
	containers, volumes := rt.counts()
	assert.Zero(t, containers, "the failed start is undone")
	assert.Zero(t, volumes)
}

// TestPopulate asks the data service to populate a group, over NATS.
func TestPopulate(t *testing.T) {
	nc, st := testBus(t)
	d := New(testConfig(), nil, nil, st, nc, slog.New(slog.DiscardHandler))
	require.NoError(t, d.Populate(t.Context(), schemas.GroupStatus{ID: "g"}), "nothing to populate")
	g := schemas.GroupStatus{ID: "g", Spec: schemas.GroupSpec{PopulationConfig: "databases: {}\n"}}
	assert.Equal(t, schemas.CodeUnavailable, codeOf(d.Populate(t.Context(), g)), "no data service")

	var reply schemas.PopulateReply
	sub, err := nc.Subscribe(schemas.PopulateSubject, func(m *nats.Msg) {
		data, _ := json.Marshal(reply)
		_ = m.Respond(data)
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	require.NoError(t, d.Populate(t.Context(), g))
	reply.Error = schemas.Errorf(schemas.CodeBadRequest, "bad config")
	assert.Equal(t, schemas.CodeBadRequest, codeOf(d.Populate(t.Context(), g)))
}

// TestOnDied starts a database that stopped by itself again, records its
// new address, and leaves alone those of other hosts and ended groups.
func TestOnDied(t *testing.T) {
	nc, st := testBus(t)
	rt := newMemEngine("10.0.0.2")
	d := New(testConfig(), rt, rt, st, nc, slog.New(slog.DiscardHandler))
	ctx := t.Context()
	name := Name("g1", "qdrant")
	g := qdrantGroup(t, st, "g1")
	_, err := st.UpdateGroup(ctx, g.ID, func(g *schemas.GroupStatus) error {
		g.DatabaseHost = "host-a"
		g.Databases = []schemas.DatabaseEndpoint{{Database: "qdrant", Address: "10.0.0.1:6334", Container: name, Volume: name}}
		return nil
	})
	require.NoError(t, err)
	spec, _, err := d.spec("g1", "qdrant")
	require.NoError(t, err)
	_, err = rt.Create(ctx, spec)
	require.NoError(t, err)
	died := runtime.Event{Kind: runtime.ContainerDied, ContainerID: name, Labels: spec.Labels, ExitCode: 137}

	d.OnDied(ctx, died)
	assert.Equal(t, 1, rt.starts)
	g, _, err = st.Group(ctx, "g1")
	require.NoError(t, err)
	assert.Equal(t, "10.0.0.2:6334", g.Databases[0].Address, "the new address is recorded")

	d.OnDied(ctx, died)
	assert.Equal(t, 1, rt.starts, "a running database is not started again")

	other := New(testConfig(), rt, rt, st, nc, slog.New(slog.DiscardHandler))
	other.cfg.Host = "host-b"
	rt.containers[name].running = false
	other.OnDied(ctx, died)
	assert.Equal(t, 1, rt.starts, "another host's database is not this worker's")

	for range dbRestartLimit - 1 {
		rt.containers[name].running = false
		d.OnDied(ctx, died)
	}
	assert.Equal(t, dbRestartLimit, rt.starts)
	rt.containers[name].running = false
	d.OnDied(ctx, died)
	assert.Equal(t, dbRestartLimit, rt.starts, "one that keeps stopping is left stopped")

	ended := runtime.Event{Kind: runtime.ContainerDied, ContainerID: "x", Labels: map[string]string{runtime.LabelGroup: "gone", runtime.LabelDatabase: "qdrant"}}
	d.OnDied(ctx, ended)
	assert.Equal(t, dbRestartLimit, rt.starts, "an ended group's database is left")
}

// TestReconcile removes the databases of groups that no longer exist, of
// this system only, and keeps the others.
func TestReconcile(t *testing.T) {
	nc, st := testBus(t)
	rt := newMemEngine("10.0.0.2")
	ctx := t.Context()
	d := New(testConfig(), rt, rt, st, nc, slog.New(slog.DiscardHandler))
	qdrantGroup(t, st, "live")
	for _, group := range []string{"live", "gone"} {
		spec, _, err := d.spec(group, "qdrant")
		require.NoError(t, err)
		_, err = rt.Create(ctx, spec)
		require.NoError(t, err)
	}
	foreign, _, err := New(Config{Network: "n", System: "other", QdrantImage: "q"}, rt, rt, st, nc, slog.New(slog.DiscardHandler)).spec("gone2", "qdrant")
	require.NoError(t, err)
	_, err = rt.Create(ctx, foreign)
	require.NoError(t, err)

	noSystem := testConfig()
	noSystem.System = ""
	New(noSystem, rt, rt, st, nc, slog.New(slog.DiscardHandler)).Reconcile(ctx)
	containers, _ := rt.counts()
	assert.Equal(t, 3, containers, "without a system name nothing is reconciled")

	d.Reconcile(ctx)
	_, err = rt.Inspect(ctx, Name("live", "qdrant"))
	assert.NoError(t, err, "a live group's database stays")
	_, err = rt.Inspect(ctx, Name("gone", "qdrant"))
	assert.ErrorIs(t, err, runtime.ErrNotFound, "an ended group's database goes")
	_, err = rt.Inspect(ctx, Name("gone2", "qdrant"))
	assert.NoError(t, err, "another system's database stays")
}

package sandboxes

import (
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/internal/egress"
	"github.com/sandox/sandox/internal/natstest"
	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/auth"
	"github.com/sandox/sandox/services/natsd"
	"github.com/sandox/sandox/services/orchestrator/egressnet"
	"github.com/sandox/sandox/services/orchestrator/identity"
	"github.com/sandox/sandox/services/orchestrator/images"
	"github.com/sandox/sandox/services/orchestrator/internal/memruntime"
	"github.com/sandox/sandox/services/orchestrator/locks"
	"github.com/sandox/sandox/services/orchestrator/runtime"
	"github.com/sandox/sandox/services/orchestrator/state"
)

var _ Disks = (*memruntime.Disks)(nil)

// fixture is a Service on a real embedded NATS server with the real auth
// service, driving an in-memory engine whose containers run a real
// executor.Server (memruntime.Executor).
type fixture struct {
	t      *testing.T
	s      *Service
	rt     *memruntime.Runtime
	disks  *memruntime.Disks
	store  *state.Store
	nc     *nats.Conn // the control-plane identity the service uses
	ledger *state.EngineLedger
	cfg    Config

	mu     sync.Mutex
	events []schemas.Event
}

const sandboxImage = "sandox/sandbox:latest"

// newFixture starts NATS and returns a Service of host "h1"; change edits
// its configuration (f.cfg) and parts first.
func newFixture(t *testing.T, change ...func(*fixture, *Parts)) *fixture {
	t.Helper()
	authority, err := auth.NewAuthority()
	require.NoError(t, err)
	ns := natstest.Start(t, func(c *natsd.Config) { c.Auth = authority })
	creds, err := authority.Mint("unit control", auth.RoleControl, "")
	require.NoError(t, err)
	nc := natstest.Connect(t, ns, creds.Option())
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	require.NoError(t, state.SetupWith(t.Context(), js, state.DefaultRetention(), 1))
	store, err := state.OpenStore(t.Context(), js)
	require.NoError(t, err)

	rt := memruntime.New()
	t.Cleanup(rt.Close)
	rt.SetProcess(memruntime.Executor(t, ns.ClientURL()))
	rt.AddImage(sandboxImage, "sha256:base")
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	f := &fixture{t: t, rt: rt, disks: memruntime.NewDisks(rt), store: store, nc: nc, ledger: state.NewEngineLedger(store, rt)}
	f.cfg = Config{
		Worker: "unit-worker", Host: "h1", Network: "sandox", CredsDir: t.TempDir(),
		TmpSize: "64m", ShmSize: "64m", MaxToolFileBytes: 1 << 20,
		ReadyTimeout: 3 * time.Second, RestartGrace: 100 * time.Millisecond,
	}
	proxies := &egress.Proxies{Dir: t.TempDir(), Log: log}
	parts := Parts{
		Runtime: rt, Updater: rt, Builder: images.NewBuilder(rt, sandboxImage), Store: store, Ledger: f.ledger,
		IDs:       identity.New(nc, f.cfg.CredsDir, false, UID),
		Isolation: egressnet.NewIsolation("", "sandox-egress", nil, proxies, log), Egress: proxies,
		Disks: UseDisks(f.disks), Locks: &locks.Keyed{}, Publish: f.record,
	}
	for _, c := range change {
		c(f, &parts)
	}
	f.s = New(f.cfg, parts, nc, log)
	return f
}

// record keeps a published event.
func (f *fixture) record(ev schemas.Event) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.events = append(f.events, ev)
}

// kinds lists the kinds of the events published for sandbox id.
func (f *fixture) kinds(id string) []schemas.EventKind {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []schemas.EventKind
	for _, ev := range f.events {
		if ev.SandboxID == id {
			out = append(out, ev.Kind)
		}
	}
	return out
}

// group records group id with spec.
func (f *fixture) group(id string, spec schemas.GroupSpec) schemas.GroupStatus {
	f.t.Helper()
	spec.ID = id
	g := schemas.GroupStatus{ID: id, State: schemas.GroupCreated, Spec: spec, Sandboxes: []string{}, CreatedAt: time.Now().UTC()}
	require.NoError(f.t, f.store.CreateGroup(f.t.Context(), &g))
	return g
}

// running makes and starts sandbox id of group g.
func (f *fixture) running(g schemas.GroupStatus, id string) schemas.SandboxStatus {
	f.t.Helper()
	st, err := f.s.Make(f.t.Context(), g, schemas.SandboxSpec{ID: id}, "cmd-make-"+id)
	require.NoError(f.t, err)
	st, err = f.s.Start(f.t.Context(), st, "cmd-start-"+id)
	require.NoError(f.t, err)
	require.Equal(f.t, schemas.StateRunning, st.State)
	return st
}

// command is a command of kind on sandbox id of group.
func command(kind schemas.CommandKind, group, id string) schemas.Command {
	return schemas.Command{ID: "cmd-" + string(kind) + "-" + id, Kind: kind, GroupID: group, SandboxID: id}
}

// requireNothingLeft checks that no container, volume, disk, credentials
// file, ledger allocation or record of sandboxes is left.
func (f *fixture) requireNothingLeft(sandboxes ...string) {
	f.t.Helper()
	containers, volumes := f.rt.Counts()
	require.Zero(f.t, containers, "containers left")
	require.Zero(f.t, volumes, "volumes left")
	require.Zero(f.t, f.disks.Count(), "disks left")
	creds, err := filepath.Glob(filepath.Join(f.cfg.CredsDir, "*"))
	require.NoError(f.t, err)
	require.Empty(f.t, creds, "credentials left")
	l, err := f.ledger.Read(f.t.Context())
	require.NoError(f.t, err)
	require.Empty(f.t, l.Allocations, "ledger allocations left")
	for _, id := range sandboxes {
		_, _, err := f.store.Sandbox(f.t.Context(), id)
		require.ErrorIs(f.t, err, schemas.CodeNotFound, "record of sandbox %s left", id)
	}
}

// eventually waits until cond holds.
func (f *fixture) eventually(what string, cond func() bool) {
	f.t.Helper()
	require.Eventually(f.t, cond, 10*time.Second, 10*time.Millisecond, what)
}

// containerOf returns the container of sandbox id as the engine has it.
func (f *fixture) containerOf(id string) (runtime.ContainerState, error) {
	st, _, err := f.store.Sandbox(f.t.Context(), id)
	if err != nil {
		return runtime.ContainerState{}, err
	}
	return f.rt.Inspect(f.t.Context(), st.Container)
}

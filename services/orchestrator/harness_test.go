package orchestrator

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/internal/natstest"
	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/auth"
	"github.com/sandox/sandox/services/natsd"
	"github.com/sandox/sandox/services/orchestrator/internal/memruntime"
	"github.com/sandox/sandox/services/orchestrator/runtime"
	"github.com/sandox/sandox/services/orchestrator/sandboxes"
	"github.com/sandox/sandox/services/orchestrator/state"
	"github.com/sandox/sandox/services/orchestrator/wire"
)

// harness is a worker on a real embedded NATS server, with the real auth
// service, driving a memRuntime whose containers run a real
// executor.Server in this process, connected with the sandbox's own
// credentials.
type harness struct {
	t       *testing.T
	url     string
	nc      *nats.Conn // a client identity, as the SDK has
	js      jetstream.JetStream
	control *nats.Conn // the worker's control-plane identity
	rt      *memruntime.Runtime
	disks   *memruntime.Disks
	cfg     Config
	w       *Worker
	stop    func()
	seq     atomic.Int64
	// authority signs every identity of the harness's server.
	authority *auth.Authority
	// noDisks, when set, is why the worker's host cannot enforce disk
	// limits; otherwise its sandboxes get disks of disks.
	noDisks error
	// freezer, when set, pauses and resumes the worker's sandboxes.
	freezer runtime.Freezer
}

const baseImageID = "sha256:base"

// newHarness starts NATS, makes the runtime and the worker, and runs the
// worker; change edits the worker's configuration first.
func newHarness(t *testing.T, change ...func(*Config)) *harness {
	t.Helper()
	h := newIdleHarness(t, change...)
	h.start()
	return h
}

// newIdleHarness is newHarness without running the worker.
func newIdleHarness(t *testing.T, change ...func(*Config)) *harness {
	t.Helper()
	authority, err := auth.NewAuthority()
	require.NoError(t, err)
	ns := natstest.Start(t, func(c *natsd.Config) { c.Auth = authority })
	connect := func(role auth.Role) *nats.Conn {
		creds, err := authority.Mint("unit "+string(role), role, "")
		require.NoError(t, err)
		return natstest.Connect(t, ns, creds.Option())
	}
	nc := connect(auth.RoleClient)
	js, err := jetstream.New(nc)
	require.NoError(t, err)

	h := &harness{t: t, url: ns.ClientURL(), nc: nc, js: js, control: connect(auth.RoleControl), rt: memruntime.New()}
	h.authority = authority
	h.disks = memruntime.NewDisks(h.rt)
	h.rt.SetProcess(h.executor)
	t.Cleanup(h.rt.Close)
	h.cfg = DefaultConfig()
	h.cfg.Worker = "unit-worker"
	h.cfg.DisksDir = ""
	h.cfg.CredsDir = t.TempDir()
	// The in-memory executors dial NATS over TCP, so sandbox identities
	// must not be bound to the server's socket.
	h.cfg.NATSSocket = ""
	h.cfg.ReadyTimeout = 3 * time.Second
	h.cfg.AckWait = 5 * time.Second
	for _, c := range change {
		c(&h.cfg)
	}
	h.rt.AddImage(h.cfg.SandboxImage, baseImageID)
	h.w = h.newWorker()
	return h
}

func (h *harness) newWorker() *Worker {
	h.t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if testing.Verbose() {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	disks := h.noDisks
	if disks == nil {
		return h.newWorkerWith(sandboxes.UseDisks(h.disks), log)
	}
	return h.newWorkerWith(sandboxes.NoDisks(disks), log)
}

// newWorkerWith makes the worker with the disk pool disks.
func (h *harness) newWorkerWith(disks sandboxes.DiskPool, log *slog.Logger) *Worker {
	h.t.Helper()
	w, err := newWorker(h.t.Context(), h.control, runtime.Engine{Runtime: h.rt, Updater: h.rt, Freezer: h.freezer}, h.cfg, disks, log)
	require.NoError(h.t, err)
	return w
}

// start runs the worker until the test ends.
func (h *harness) start() {
	h.t.Helper()
	h.stop = runWorker(h.t, h.w)
	h.t.Cleanup(h.stop)
}

// runWorker runs w until the returned func is first called, which waits
// for Run to return and requires it to return nil.
func runWorker(t *testing.T, w *Worker) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	return sync.OnceFunc(func() {
		cancel()
		require.NoError(t, <-done)
	})
}

// restart stops the worker and runs a new one on the same NATS and runtime.
func (h *harness) restart() {
	h.t.Helper()
	h.stop()
	h.w = h.newWorker()
	h.start()
}

// executor is the process of a sandbox container: a real executor.Server
// for the sandbox (memruntime.Executor).
func (h *harness) executor(ctx context.Context, spec runtime.ContainerSpec) error {
	return memruntime.Executor(h.t, h.url)(ctx, spec)
}

// command builds a command of kind on group (and sandbox) with a fresh id.
func (h *harness) command(kind schemas.CommandKind, group, sandbox string) schemas.Command {
	return schemas.Command{
		ID:        fmt.Sprintf("cmd-%s-%d", h.t.Name(), h.seq.Add(1)),
		Kind:      kind,
		GroupID:   group,
		SandboxID: sandbox,
		IssuedAt:  time.Now().UTC(),
	}
}

// send publishes cmd on the command stream, as the SDK does, and waits for
// its result.
func (h *harness) send(cmd schemas.Command) schemas.CommandResult {
	h.t.Helper()
	sub, err := h.nc.SubscribeSync(schemas.ResultSubject(cmd.ID))
	require.NoError(h.t, err)
	defer sub.Unsubscribe()
	data, err := json.Marshal(cmd)
	require.NoError(h.t, err)
	_, err = h.js.Publish(h.t.Context(), schemas.CommandSubject(cmd.Kind), data, jetstream.WithMsgID(cmd.ID))
	require.NoError(h.t, err)
	m, err := sub.NextMsg(15 * time.Second)
	require.NoError(h.t, err, "result of %s %s", cmd.Kind, cmd.ID)
	var res schemas.CommandResult
	require.NoError(h.t, json.Unmarshal(m.Data, &res))
	return res
}

// ok sends cmd and requires success.
func (h *harness) ok(cmd schemas.Command) schemas.CommandResult {
	h.t.Helper()
	res := h.send(cmd)
	require.Nil(h.t, res.Error, "%s %s", cmd.Kind, cmd.ID)
	return res
}

// refused sends cmd and requires an error with code.
func (h *harness) refused(cmd schemas.Command, code schemas.ErrorCode) schemas.CommandResult {
	h.t.Helper()
	res := h.send(cmd)
	require.NotNil(h.t, res.Error, "%s %s succeeded", cmd.Kind, cmd.ID)
	require.Equal(h.t, code, res.Error.Code, "message: %s", res.Error.Message)
	return res
}

// createGroup creates group with spec.
func (h *harness) createGroup(group string, spec schemas.GroupSpec) {
	h.t.Helper()
	cmd := h.command(schemas.CreateGroup, group, "")
	cmd.Group = &spec
	h.ok(cmd)
}

// createSandbox sends create_sandbox for id in group with spec.
func (h *harness) createSandbox(group, id string, spec schemas.SandboxSpec) schemas.CommandResult {
	h.t.Helper()
	cmd := h.command(schemas.CreateSandbox, group, id)
	cmd.Sandbox = &spec
	return h.send(cmd)
}

// sandbox reads a sandbox's record.
func (h *harness) sandbox(id string) (schemas.SandboxStatus, error) {
	st, _, err := h.w.store.Sandbox(h.t.Context(), id)
	return st, err
}

// ledger reads the engine's ledger.
func (h *harness) ledger() map[string]schemas.ResolvedResources {
	h.t.Helper()
	l, err := state.NewEngineLedger(h.w.store, h.rt).Read(h.t.Context())
	require.NoError(h.t, err)
	return l.Allocations
}

// requireNothingLeft checks that no container, volume, disk, credentials
// file, ledger allocation or sandbox record is left.
func (h *harness) requireNothingLeft(sandboxes ...string) {
	h.t.Helper()
	containers, volumes := h.rt.Counts()
	require.Zero(h.t, containers, "containers left")
	require.Zero(h.t, volumes, "volumes left")
	require.Zero(h.t, h.disks.Count(), "disks left")
	creds, err := filepath.Glob(filepath.Join(h.cfg.CredsDir, "*"))
	require.NoError(h.t, err)
	require.Empty(h.t, creds, "credentials left")
	require.Empty(h.t, h.ledger(), "ledger allocations left")
	for _, id := range sandboxes {
		_, err := h.sandbox(id)
		require.Error(h.t, err, "record of sandbox %s left", id)
		require.Equal(h.t, schemas.CodeNotFound, wire.Error(err).Code)
	}
}

// events subscribes to a sandbox's events.
func (h *harness) events(sandbox string) *nats.Subscription {
	h.t.Helper()
	sub, err := h.nc.SubscribeSync(schemas.SandboxEventSubject(sandbox))
	require.NoError(h.t, err)
	// The server must know the subscription before the test makes
	// anything happen.
	require.NoError(h.t, h.nc.Flush())
	h.t.Cleanup(func() { _ = sub.Unsubscribe() })
	return sub
}

// nextEvent waits for the next event on sub that matches.
func (h *harness) nextEvent(sub *nats.Subscription, match func(schemas.Event) bool) schemas.Event {
	h.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		m, err := sub.NextMsg(time.Until(deadline))
		require.NoError(h.t, err, "waiting for an event")
		var ev schemas.Event
		require.NoError(h.t, json.Unmarshal(m.Data, &ev))
		if match(ev) {
			return ev
		}
	}
}

// eventually waits until cond holds.
func (h *harness) eventually(what string, cond func() bool) {
	h.t.Helper()
	require.Eventually(h.t, cond, 10*time.Second, 10*time.Millisecond, what)
}

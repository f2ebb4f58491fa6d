package groups_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/internal/natstest"
	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/auth"
	"github.com/sandox/sandox/services/natsd"
	"github.com/sandox/sandox/services/orchestrator"
	"github.com/sandox/sandox/services/orchestrator/internal/memruntime"
	"github.com/sandox/sandox/services/orchestrator/runtime"
)

// worker is an orchestrator worker, whose group commands are this
// package's, on a real embedded NATS server with the real auth service,
// driving an in-memory engine whose containers run real executors.
type worker struct {
	t   *testing.T
	js  jetstream.JetStream
	nc  *nats.Conn
	rt  *memruntime.Runtime
	seq atomic.Int64
	// control publishes as the workers do, on the hosts' subjects.
	control jetstream.JetStream
	url     string
	connect func(auth.Role) *nats.Conn
}

// startWorker runs a worker until the test ends.
func startWorker(t *testing.T) *worker {
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
	control := connect(auth.RoleControl)
	cjs, err := jetstream.New(control)
	require.NoError(t, err)
	w := &worker{t: t, js: js, nc: nc, control: cjs, url: ns.ClientURL(), connect: connect}
	w.rt = w.runHost("h1")
	return w
}

// runHost runs a worker of host name, on an engine of its own, until the
// test ends, and returns its engine.
func (w *worker) runHost(name string) *memruntime.Runtime {
	t := w.t
	t.Helper()
	rt := memruntime.New()
	t.Cleanup(rt.Close)
	rt.SetHost(runtime.Host{ID: "engine-" + name, CPUs: 4, MemoryBytes: 8 << 30}, name)
	rt.SetProcess(memruntime.Executor(t, w.url))
	cfg := orchestrator.DefaultConfig()
	cfg.Worker, cfg.Host, cfg.DisksDir, cfg.CredsDir, cfg.NATSSocket = "worker-"+name, name, "", t.TempDir(), ""
	cfg.ReadyTimeout, cfg.AckWait = 3*time.Second, 5*time.Second
	cfg.HostHeartbeat, cfg.HostLostAfter = 100*time.Millisecond, 5*time.Second
	rt.AddImage(cfg.SandboxImage, "sha256:base")
	ow, err := orchestrator.NewWorker(t.Context(), w.connect(auth.RoleControl), runtime.Engine{Runtime: rt, Updater: rt}, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ow.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	return rt
}

// send publishes a command of kind, as the SDK does, and returns its
// result; edit fills in the command's spec.
func (w *worker) send(kind schemas.CommandKind, group, sandbox string, edit ...func(*schemas.Command)) schemas.CommandResult {
	w.t.Helper()
	return w.publish(kind, group, sandbox, edit...)()
}

// publish sends a command and returns a func that waits for its result
// (up to 15 s), so that a test can do more while the command runs.
func (w *worker) publish(kind schemas.CommandKind, group, sandbox string, edit ...func(*schemas.Command)) func() schemas.CommandResult {
	w.t.Helper()
	cmd := schemas.Command{ID: fmt.Sprintf("cmd-%s-%d", w.t.Name(), w.seq.Add(1)), Kind: kind, GroupID: group, SandboxID: sandbox, IssuedAt: time.Now().UTC()}
	for _, e := range edit {
		e(&cmd)
	}
	subject := schemas.CommandSubject(kind)
	js := w.js
	if cmd.Kind != kind { // a part forwarded to host h1 (see forwarded)
		cmd.Kind, subject, js = kind, schemas.HostCommandSubject("h1", kind), w.control
	}
	sub, err := w.nc.SubscribeSync(schemas.ResultSubject(cmd.ID))
	require.NoError(w.t, err)
	w.t.Cleanup(func() { _ = sub.Unsubscribe() })
	data, err := json.Marshal(cmd)
	require.NoError(w.t, err)
	_, err = js.Publish(w.t.Context(), subject, data, jetstream.WithMsgID(cmd.ID))
	require.NoError(w.t, err)
	return func() schemas.CommandResult {
		w.t.Helper()
		m, err := sub.NextMsg(15 * time.Second)
		require.NoError(w.t, err, "result of %s", kind)
		var res schemas.CommandResult
		require.NoError(w.t, json.Unmarshal(m.Data, &res))
		return res
	}
}

// code is the error code of res, "" for success.
func code(res schemas.CommandResult) schemas.ErrorCode {
	if res.Error == nil {
		return ""
	}
	return res.Error.Code
}

// forwarded sends the command as a worker of another host forwards it to
// host h1: as its part, which takes no group lock.
func forwarded(c *schemas.Command) { c.Kind = "forwarded" }

func withGroup(spec schemas.GroupSpec) func(*schemas.Command) {
	return func(c *schemas.Command) { c.Group = &spec }
}

func withSandbox(spec schemas.SandboxSpec) func(*schemas.Command) {
	return func(c *schemas.Command) { c.Sandbox = &spec }
}

// TestCreateGroupChecksTheWholeSpec checks that a group spec with any bad
// part is refused whole, before anything is recorded.
func TestCreateGroupChecksTheWholeSpec(t *testing.T) {
	w := startWorker(t)
	bad := []struct {
		name string
		spec schemas.GroupSpec
	}{
		{"bad compute", schemas.GroupSpec{Compute: schemas.ComputeResources{CPU: "lots"}}},
		{"a sandbox listed twice", schemas.GroupSpec{Sandboxes: []schemas.SandboxSpec{{ID: "a"}, {ID: "a"}}}},
		{"a bad sandbox id", schemas.GroupSpec{Sandboxes: []schemas.SandboxSpec{{ID: "no spaces"}}}},
		{"a bad sandbox compute", schemas.GroupSpec{Sandboxes: []schemas.SandboxSpec{{ID: "a", Compute: &schemas.ComputeResources{Memory: "much"}}}}},
		{"a tool file that is no module", schemas.GroupSpec{Tools: []schemas.ToolFile{{Name: "notes.txt", Content: []byte("x")}}}},
		{"a bad egress policy", schemas.GroupSpec{Egress: &schemas.Egress{Policy: "sometimes"}}},
		{"a bad sandbox egress policy", schemas.GroupSpec{Sandboxes: []schemas.SandboxSpec{{ID: "a", Egress: &schemas.Egress{Policy: "sometimes"}}}}},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			res := w.send(schemas.CreateGroup, "g-bad", "", withGroup(tc.spec))
			assert.Equal(t, schemas.CodeBadRequest, code(res), "message: %v", res.Error)
		})
	}
	assert.Equal(t, schemas.CodeBadRequest, code(w.send(schemas.CreateGroup, "g1", "")), "no spec")
	assert.Equal(t, schemas.CodeBadRequest, code(w.send(schemas.CreateGroup, "no spaces", "", withGroup(schemas.GroupSpec{}))), "a bad group id")
	assert.Equal(t, schemas.ErrorCode(""), code(w.send(schemas.CreateGroup, "g1", "", withGroup(schemas.GroupSpec{}))))
	assert.Equal(t, schemas.CodeAlreadyExists, code(w.send(schemas.CreateGroup, "g1", "", withGroup(schemas.GroupSpec{}))))
	assert.Equal(t, schemas.CodeNotFound, code(w.send(schemas.StartGroup, "g-bad", "")), "nothing was recorded")
}

// TestGroupLifecycle starts a group whose one initial sandbox fails, adds
// a sandbox at run time, and ends the group with a container the records
// do not know of.
func TestGroupLifecycle(t *testing.T) {
	w := startWorker(t)
	exec := w.rt.Process()
	w.rt.SetProcess(func(ctx context.Context, spec runtime.ContainerSpec) error {
		if spec.Labels[runtime.LabelSandbox] == "bad" {
			return errors.New("executor: crashed at start")
		}
		return exec(ctx, spec)
	})
	require.Nil(t, w.send(schemas.CreateGroup, "g1", "", withGroup(schemas.GroupSpec{Sandboxes: []schemas.SandboxSpec{{ID: "good"}, {ID: "bad"}}})).Error)
	res := w.send(schemas.StartGroup, "g1", "")
	require.NotNil(t, res.Error, "one initial sandbox failed")
	assert.Contains(t, res.Error.Message, "bad")
	require.Len(t, res.Sandboxes, 2)
	assert.Equal(t, schemas.GroupRunning, res.Group.State, "the group runs with the others")
	res = w.send(schemas.StartGroup, "g1", "")
	require.Nil(t, res.Error, "starting twice is harmless")

	assert.Equal(t, schemas.CodeBadRequest, code(w.send(schemas.CreateSandbox, "g1", "c")), "no spec")
	assert.Equal(t, schemas.CodeBadRequest, code(w.send(schemas.CreateSandbox, "g1", schemas.PoolIDPrefix+"x", withSandbox(schemas.SandboxSpec{}))), "a pool id")
	assert.Equal(t, schemas.CodeNotFound, code(w.send(schemas.CreateSandbox, "g2", "c", withSandbox(schemas.SandboxSpec{}))), "no such group")
	require.Nil(t, w.send(schemas.CreateSandbox, "g1", "c", withSandbox(schemas.SandboxSpec{})).Error)

	_, err := w.rt.Create(t.Context(), runtime.ContainerSpec{Name: runtime.ContainerName("ghost"), Image: "sandox/sandbox:latest",
		Labels: map[string]string{runtime.LabelManaged: "true", runtime.LabelGroup: "g1", runtime.LabelSandbox: "ghost"}})
	require.NoError(t, err)
	res = w.send(schemas.EndGroup, "g1", "")
	require.Nil(t, res.Error)
	assert.Equal(t, schemas.GroupEnded, res.Group.State)
	assert.Len(t, res.Sandboxes, 3)
	containers, volumes := w.rt.Counts()
	assert.Zero(t, containers, "containers left")
	assert.Zero(t, volumes, "volumes left")
	assert.Equal(t, schemas.CodeNotFound, code(w.send(schemas.EndGroup, "g1", "")))
}

// TestHostParts sends a create_sandbox and an end_group as the parts a
// worker of another host forwards to this one: the sandbox is made, and
// the end ends the group's sandboxes here but leaves the group's record
// to the worker that sent it.
func TestHostParts(t *testing.T) {
	w := startWorker(t)
	require.Nil(t, w.send(schemas.CreateGroup, "g1", "", withGroup(schemas.GroupSpec{})).Error)
	res := w.send(schemas.CreateSandbox, "g1", "a", withSandbox(schemas.SandboxSpec{}), forwarded)
	require.Nil(t, res.Error)
	require.Nil(t, w.send(schemas.StartSandbox, "g1", "a").Error)
	res = w.send(schemas.EndGroup, "g1", "", forwarded)
	require.Nil(t, res.Error)
	require.Len(t, res.Sandboxes, 1)
	assert.Equal(t, schemas.StateEnded, res.Sandboxes[0].State)
	assert.Nil(t, res.Group, "the part leaves the group to its sender")
	assert.Nil(t, w.send(schemas.EndGroup, "g2", "", forwarded).Error, "a group ended meanwhile is no error")
	res = w.send(schemas.EndGroup, "g1", "")
	require.Nil(t, res.Error)
	assert.Equal(t, schemas.GroupEnded, res.Group.State)
}

// TestGroupOverTwoHosts spreads a group's initial sandboxes over two
// hosts: the other host's are created and started by its workers (the
// start_group delegates them), and the end_group ends them there.
func TestGroupOverTwoHosts(t *testing.T) {
	w := startWorker(t)
	other := w.runHost("h2")
	spec := schemas.GroupSpec{Placement: schemas.PlacementSpread, Sandboxes: []schemas.SandboxSpec{{ID: "a"}, {ID: "b"}, {ID: "c"}, {ID: "d"}}}
	require.Nil(t, w.send(schemas.CreateGroup, "g1", "", withGroup(spec)).Error)
	res := w.send(schemas.StartGroup, "g1", "")
	require.Nil(t, res.Error)
	hosts := map[string]int{}
	for _, st := range res.Sandboxes {
		assert.Equal(t, schemas.StateRunning, st.State, st.ID)
		hosts[st.Host]++
	}
	assert.Equal(t, map[string]int{"h1": 2, "h2": 2}, hosts, "spread over both hosts")
	res = w.send(schemas.EndGroup, "g1", "")
	require.Nil(t, res.Error)
	assert.Len(t, res.Sandboxes, 4)
	for _, rt := range []*memruntime.Runtime{w.rt, other} {
		containers, _ := rt.Counts()
		assert.Zero(t, containers, "containers left")
	}
}

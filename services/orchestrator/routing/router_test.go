package routing

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/internal/natstest"
	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/schemas/resources"
	"github.com/sandox/sandox/services/orchestrator/internal/memruntime"
	"github.com/sandox/sandox/services/orchestrator/placement"
	"github.com/sandox/sandox/services/orchestrator/runtime"
	"github.com/sandox/sandox/services/orchestrator/state"
)

// fixture is the router of host h1 on a real embedded NATS server, with
// the real placement parts, and a live host h2 whose record says it has
// memory where h1 has almost none.
type fixture struct {
	t      *testing.T
	r      *Router
	nc     *nats.Conn
	js     jetstream.JetStream
	store  *state.Store
	answer map[string]schemas.CommandResult // previous results by command id
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	nc := natstest.Connect(t, natstest.Start(t))
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	require.NoError(t, state.SetupWith(t.Context(), js, state.DefaultRetention(), 1))
	store, err := state.OpenStore(t.Context(), js)
	require.NoError(t, err)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	var here *placement.Hosts
	for _, h := range []struct {
		name   string
		memory int64
	}{{"h1", 64 << 20}, {"h2", 8 << 30}} {
		rt := memruntime.New()
		t.Cleanup(rt.Close)
		rt.SetHost(runtime.Host{ID: "engine-" + h.name, CPUs: 4, MemoryBytes: h.memory}, h.name)
		measure := func(context.Context) (resources.Host, error) {
			return resources.Host{CPUs: 4, MemoryBytes: h.memory}, nil
		}
		hosts := placement.NewHosts(placement.HostsConfig{Worker: "worker-" + h.name, Host: h.name, Heartbeat: time.Minute, LostAfter: time.Hour},
			store, rt, measure, nil, log) // no placement.Lost: the test runs no lost-host sweep
		require.NoError(t, hosts.Heartbeat(t.Context()))
		if h.name == "h1" {
			here = hosts
		}
	}
	f := &fixture{t: t, nc: nc, js: js, store: store, answer: map[string]schemas.CommandResult{}}
	previous := func(_ context.Context, id string) (schemas.CommandResult, bool) {
		res, ok := f.answer[id]
		return res, ok
	}
	f.r = New(Config{Host: "h1", Heartbeat: 50 * time.Millisecond}, store, placement.New(store, "h1", time.Hour), here, js, nc, previous, log)
	g := schemas.GroupStatus{ID: "g1", State: schemas.GroupCreated, Sandboxes: []string{}}
	require.NoError(t, store.CreateGroup(t.Context(), &g))
	return f
}

// sandbox records sandbox id of g1 on host in state.
func (f *fixture) sandbox(id, host string, state schemas.SandboxState) {
	f.t.Helper()
	_, err := f.store.CreateSandbox(f.t.Context(), schemas.SandboxStatus{ID: id, GroupID: "g1", Host: host, State: state, Container: "c-" + id})
	require.NoError(f.t, err)
}

func create(id, memory string) schemas.Command {
	return schemas.Command{ID: "cmd-create-" + id, Kind: schemas.CreateSandbox, GroupID: "g1", SandboxID: id,
		Sandbox: &schemas.SandboxSpec{Compute: &schemas.ComputeResources{Memory: memory}}}
}

// TestClientSubject checks that a forwarded command's subject maps back
// to the one its client published on.
func TestClientSubject(t *testing.T) {
	got, forwarded := ClientSubject(schemas.HostCommandSubject("h2", schemas.StartSandbox))
	assert.True(t, forwarded)
	assert.Equal(t, schemas.CommandSubject(schemas.StartSandbox), got)
	got, forwarded = ClientSubject(schemas.CommandSubject(schemas.EndGroup))
	assert.False(t, forwarded)
	assert.Equal(t, schemas.CommandSubject(schemas.EndGroup), got)
}

// TestRoute checks which host each command is routed to.
func TestRoute(t *testing.T) {
	f := newFixture(t)
	f.sandbox("here", "h1", schemas.StateRunning)
	f.sandbox("there", "h2", schemas.StateRunning)
	f.sandbox("lost", "h2", schemas.StateLost)
	f.sandbox("silent", "h3", schemas.StateRunning)
	on := func(kind schemas.CommandKind, id string) schemas.Command {
		return schemas.Command{ID: "cmd-" + id, Kind: kind, GroupID: "g1", SandboxID: id}
	}
	tests := []struct {
		name string
		cmd  schemas.Command
		want string
	}{
		{"a create goes where placement puts it", create("new", "1GiB"), "h2"},
		{"a create of a taken id goes to its host", create("there", "1GiB"), "h2"},
		{"a create of an id taken here runs here", create("here", "1GiB"), ""},
		{"a create without a spec runs here", schemas.Command{Kind: schemas.CreateSandbox, GroupID: "g1", SandboxID: "x"}, ""},
		{"a create in a group that does not exist runs here", schemas.Command{Kind: schemas.CreateSandbox, GroupID: "nope", SandboxID: "x", Sandbox: &schemas.SandboxSpec{}}, ""},
		{"a create with a bad spec runs here", create("bad", "much"), ""},
		{"a start goes to the sandbox's host", on(schemas.StartSandbox, "there"), "h2"},
		{"a checkpoint goes to the sandbox's host", on(schemas.TakeCheckpoint, "there"), "h2"},
		{"an end of a sandbox here", on(schemas.EndSandbox, "here"), ""},
		{"an end of a lost sandbox", on(schemas.EndSandbox, "lost"), ""},
		{"an end of a sandbox of a silent host", on(schemas.EndSandbox, "silent"), ""},
		{"a command on no sandbox", on(schemas.PauseSandbox, "nobody"), ""},
		{"a group command", schemas.Command{Kind: schemas.EndGroup, GroupID: "g1"}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := f.r.Route(t.Context(), tc.cmd)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
	_, err := f.r.Route(t.Context(), create("huge", "64GiB"))
	require.ErrorIs(t, err, schemas.CodeResourceExhausted, "a create that fits no host")
}

// take publishes cmd on the command stream, as a client does, and takes
// it from a consumer of its own, as a worker does.
func (f *fixture) take(cmd schemas.Command, hdr nats.Header) jetstream.Msg {
	f.t.Helper()
	data, err := json.Marshal(cmd)
	require.NoError(f.t, err)
	m := nats.NewMsg(schemas.CommandSubject(cmd.Kind))
	m.Data = data
	for k, v := range hdr {
		m.Header[k] = v
	}
	_, err = f.js.PublishMsg(f.t.Context(), m, jetstream.WithMsgID(cmd.ID))
	require.NoError(f.t, err)
	// One consumer a kind: a work queue takes one consumer a subject.
	cons, err := f.js.CreateOrUpdateConsumer(f.t.Context(), schemas.CommandStream, jetstream.ConsumerConfig{
		Durable: "test-" + string(cmd.Kind), FilterSubject: schemas.CommandSubject(cmd.Kind), AckPolicy: jetstream.AckExplicitPolicy,
	})
	require.NoError(f.t, err)
	msg, err := cons.Next(jetstream.FetchMaxWait(5 * time.Second))
	require.NoError(f.t, err)
	return msg
}

// forwardedTo waits for the copy of command id on host's subject and
// returns its headers.
func (f *fixture) forwardedTo(host string, kind schemas.CommandKind, id string) nats.Header {
	f.t.Helper()
	stream, err := f.js.Stream(f.t.Context(), schemas.CommandStream)
	require.NoError(f.t, err)
	m, err := stream.GetLastMsgForSubject(f.t.Context(), schemas.HostCommandSubject(host, kind))
	require.NoError(f.t, err, "a copy on host %s's subject", host)
	var cmd schemas.Command
	require.NoError(f.t, json.Unmarshal(m.Data, &cmd))
	assert.Equal(f.t, id, cmd.ID)
	return m.Header
}

// TestForwardAndRetryElsewhere checks that a forwarded command is stored
// on its host's subject, and that a create this host refused goes on to
// the next host, unless every live host was tried.
func TestForwardAndRetryElsewhere(t *testing.T) {
	f := newFixture(t)
	cmd := schemas.Command{ID: "cmd-start", Kind: schemas.StartSandbox, GroupID: "g1", SandboxID: "there"}
	f.r.Forward(t.Context(), f.take(cmd, nil), cmd, "h2")
	f.forwardedTo("h2", schemas.StartSandbox, "cmd-start")

	refused := create("sb1", "1GiB")
	msg := f.take(refused, nil)
	require.True(t, f.r.RetryElsewhere(t.Context(), msg, msg.Headers(), refused))
	hdr := f.forwardedTo("h2", schemas.CreateSandbox, refused.ID)
	assert.Equal(t, "h1", hdr.Get(HeaderTried))

	again := create("sb2", "1GiB")
	msg = f.take(again, nats.Header{HeaderTried: []string{"h2"}})
	assert.False(t, f.r.RetryElsewhere(t.Context(), msg, msg.Headers(), again), "every live host was tried")
	assert.False(t, f.r.RetryElsewhere(t.Context(), msg, msg.Headers(), schemas.Command{Kind: schemas.CreateSandbox}), "no spec")
}

// TestDelegate has host h2 run a part of a group command: a part answered
// before is answered from its result, a live host's answer is waited for,
// and a host that is not live is refused as unavailable.
func TestDelegate(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	f.answer["cmd-old"] = schemas.CommandResult{CommandID: "cmd-old", Worker: "worker-h2"}
	res, err := f.r.Delegate(ctx, "h2", schemas.Command{ID: "cmd-old", Kind: schemas.EndGroup, GroupID: "g1"})
	require.NoError(t, err)
	assert.Equal(t, "worker-h2", res.Worker)

	_, err = f.r.Delegate(ctx, "h3", schemas.Command{ID: "cmd-h3", Kind: schemas.EndGroup, GroupID: "g1"})
	require.ErrorIs(t, err, schemas.CodeUnavailable)

	// h2's worker, reduced to its answer: it takes the part from its
	// host's subject and publishes the result.
	sub, err := f.nc.Subscribe(schemas.HostCommandSubject("h2", schemas.EndGroup), func(m *nats.Msg) {
		var cmd schemas.Command
		if json.Unmarshal(m.Data, &cmd) != nil {
			return
		}
		data, _ := json.Marshal(schemas.CommandResult{CommandID: cmd.ID, Kind: cmd.Kind, Worker: "worker-h2"})
		_ = f.nc.Publish(schemas.ResultSubject(cmd.ID), data)
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	require.NoError(t, f.nc.Flush())
	res, err = f.r.Delegate(ctx, "h2", schemas.Command{ID: "cmd-new", Kind: schemas.EndGroup, GroupID: "g1"})
	require.NoError(t, err)
	assert.Equal(t, "cmd-new", res.CommandID)
	assert.Equal(t, "worker-h2", res.Worker)
}

package orchestrator

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/orchestrator/internal/memruntime"
	"github.com/sandox/sandox/services/orchestrator/runtime"
	"github.com/sandox/sandox/services/orchestrator/state"
)

// engine is one host of a multi-host test: a memRuntime with its own
// engine id, and the worker that drives it.
type engine struct {
	name string
	rt   *memruntime.Runtime
	cfg  Config
	w    *Worker
	stop func()

	mu  sync.Mutex
	ops []string // "op arg" of every runtime call
}

// seen lists the runtime calls whose argument names one of refs (a
// sandbox id, a container id).
func (e *engine) seen(refs ...string) []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	for _, op := range e.ops {
		_, arg, _ := strings.Cut(op, " ")
		if slices.ContainsFunc(refs, func(r string) bool { return r != "" && strings.Contains(arg, r) }) {
			out = append(out, op)
		}
	}
	return out
}

// multiHost runs two hosts, host-a (the harness's own runtime and worker)
// and host-b, on one NATS server, each with 4 CPUs and memA and memB of
// memory, and waits until both are recorded up.
func multiHost(t *testing.T, memA, memB int64, change ...func(*Config)) (*harness, *engine, *engine) {
	t.Helper()
	fast := func(c *Config) {
		c.HostHeartbeat, c.HostLostAfter = 100*time.Millisecond, 5*time.Second
		c.System = "sys"
	}
	h := newIdleHarness(t, append([]func(*Config){fast, func(c *Config) { c.Host = "host-a" }}, change...)...)
	a := &engine{name: "host-a", rt: h.rt, cfg: h.cfg}
	h.rt.SetHost(runtime.Host{ID: "engine-a", CPUs: 4, MemoryBytes: memA}, "a")
	a.w = h.w

	b := &engine{name: "host-b", rt: memruntime.New(), cfg: h.cfg}
	b.rt.SetHost(runtime.Host{ID: "engine-b", CPUs: 4, MemoryBytes: memB}, "b")
	b.rt.SetProcess(h.executor)
	b.rt.AddImage(h.cfg.SandboxImage, baseImageID)
	t.Cleanup(b.rt.Close)
	b.cfg.Host, b.cfg.Worker, b.cfg.CredsDir = "host-b", "unit-worker-b", t.TempDir()
	b.w = h.newWorkerOn(b.rt, b.cfg)

	for _, e := range []*engine{a, b} {
		e.rt.SetFail(func(op, arg string) error {
			e.mu.Lock()
			e.ops = append(e.ops, op+" "+arg)
			e.mu.Unlock()
			return nil
		})
	}
	h.start()
	a.stop = h.stop
	b.stop = runWorker(t, b.w)
	t.Cleanup(func() { b.stop() })
	h.eventually("both hosts up", func() bool {
		live, err := h.w.store.LiveHosts(t.Context(), time.Minute)
		return err == nil && len(live) == 2
	})
	return h, a, b
}

// newWorkerOn makes a worker on rt with cfg, on the harness's NATS.
func (h *harness) newWorkerOn(rt *memruntime.Runtime, cfg Config) *Worker {
	h.t.Helper()
	saved, savedCfg := h.rt, h.cfg
	h.rt, h.cfg = rt, cfg
	defer func() { h.rt, h.cfg = saved, savedCfg }()
	return h.newWorker()
}

// hostsOf maps each sandbox to the host its record names.
func (h *harness) hostsOf(ids ...string) map[string]string {
	h.t.Helper()
	out := map[string]string{}
	for _, id := range ids {
		st, err := h.sandbox(id)
		require.NoError(h.t, err)
		out[id] = st.Host
	}
	return out
}

func count(hosts map[string]string, host string) int {
	n := 0
	for _, h := range hosts {
		if h == host {
			n++
		}
	}
	return n
}

// TestPlacementPolicies creates four sandboxes of 1 GiB in a group with
// each policy on two hosts of 8 GiB: spread puts two on each, pack all
// four on one.
func TestPlacementPolicies(t *testing.T) {
	tests := []struct {
		name       string
		placement  schemas.Placement
		wantA      int
		wantB      int
		eitherHost bool
	}{
		{name: "spread by default", placement: "", wantA: 2, wantB: 2},
		{name: "spread", placement: schemas.PlacementSpread, wantA: 2, wantB: 2},
		{name: "pack", placement: schemas.PlacementPack, wantA: 4, wantB: 0, eitherHost: true},
	}
	h, a, b := multiHost(t, 8<<30, 8<<30)
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			group := fmt.Sprintf("g-place-%d", i)
			h.createGroup(group, schemas.GroupSpec{Compute: schemas.ComputeResources{Memory: "1GiB"}, Placement: tt.placement})
			var ids []string
			for j := range 4 {
				id := fmt.Sprintf("place-%d-%d", i, j)
				ids = append(ids, id)
				res := h.createSandbox(group, id, schemas.SandboxSpec{})
				require.Nil(t, res.Error, "create %s", id)
				assert.NotEmpty(t, res.Sandboxes[0].Host, "the result names the host")
			}
			hosts := h.hostsOf(ids...)
			gotA, gotB := count(hosts, a.name), count(hosts, b.name)
			if tt.eitherHost && gotB > gotA {
				gotA, gotB = gotB, gotA
			}
			assert.Equal(t, tt.wantA, gotA, "sandboxes on one host: %v", hosts)
			assert.Equal(t, tt.wantB, gotB, "sandboxes on the other: %v", hosts)
			for id, host := range hosts {
				owner, other := a, b
				if host == b.name {
					owner, other = b, a
				}
				assert.NotEmpty(t, owner.seen(id), "the host of %s made it", id)
				assert.Empty(t, other.seen(id), "the other host touched %s", id)
			}
			h.ok(h.command(schemas.EndGroup, group, ""))
		})
	}
	h.eventually("nothing left on either engine", func() bool {
		ca, va := a.rt.Counts()
		cb, vb := b.rt.Counts()
		return ca+va+cb+vb == 0
	})
}

// TestConcurrentCreatesSpread sends a group's four creates at once, taken
// by both workers: each placement is chosen and written in one
// compare-and-set of the group's record (GroupStatus.Placing), so they
// spread as creates sent one by one do.
func TestConcurrentCreatesSpread(t *testing.T) {
	h, a, b := multiHost(t, 8<<30, 8<<30)
	h.createGroup("g-together", schemas.GroupSpec{Compute: schemas.ComputeResources{Memory: "1GiB"}})
	ids := []string{"tog-1", "tog-2", "tog-3", "tog-4"}
	var wg sync.WaitGroup
	for _, id := range ids {
		wg.Go(func() {
			cmd := h.command(schemas.CreateSandbox, "g-together", id)
			cmd.Sandbox = &schemas.SandboxSpec{}
			res := h.send(cmd)
			assert.Nil(t, res.Error, "create %s", id)
		})
	}
	wg.Wait()
	hosts := h.hostsOf(ids...)
	assert.Equal(t, 2, count(hosts, a.name), "spread: %v", hosts)
	assert.Equal(t, 2, count(hosts, b.name), "spread: %v", hosts)
	g, _, err := h.w.store.Group(t.Context(), "g-together")
	require.NoError(t, err)
	assert.Empty(t, g.Placing, "the finished creates' placements are gone from the record")
	h.ok(h.command(schemas.EndGroup, "g-together", ""))
}

// TestCommandsRunOnTheOwningHost creates sandboxes on both hosts and
// sends every later command for them through the shared subjects: start,
// stats (command and request), end. Each runs on the sandbox's host only.
func TestCommandsRunOnTheOwningHost(t *testing.T) {
	h, a, b := multiHost(t, 8<<30, 8<<30)
	h.createGroup("g-own", schemas.GroupSpec{Compute: schemas.ComputeResources{Memory: "1GiB"}})
	ids := []string{"own-1", "own-2", "own-3", "own-4"}
	for _, id := range ids {
		require.Nil(t, h.createSandbox("g-own", id, schemas.SandboxSpec{}).Error)
	}
	hosts := h.hostsOf(ids...)
	require.Equal(t, 2, count(hosts, a.name), "spread: %v", hosts)
	containers := map[string]string{}
	for _, id := range ids {
		st := h.ok(h.command(schemas.StartSandbox, "g-own", id)).Sandboxes[0]
		containers[id] = st.Container
		assert.Equal(t, schemas.StateRunning, st.State)
		assert.Equal(t, hosts[id], st.Host)

		stats := h.ok(h.command(schemas.SandboxStats, "g-own", id))
		require.NotNil(t, stats.Stats, "stats of %s", id)

		m, err := h.nc.Request(schemas.SandboxStatsSubject(id), nil, 10*time.Second)
		require.NoError(t, err)
		var reply schemas.StatusReply
		require.NoError(t, json.Unmarshal(m.Data, &reply))
		require.Nil(t, reply.Error, "stats request of %s", id)
		require.NotNil(t, reply.Stats)
		assert.Equal(t, id, reply.Stats.SandboxID)
	}
	for _, id := range ids {
		h.ok(h.command(schemas.EndSandbox, "g-own", id))
	}
	for _, id := range ids {
		owner, other := a, b
		if hosts[id] == b.name {
			owner, other = b, a
		}
		ops := owner.seen(id, containers[id])
		for _, want := range []string{"create ", "start ", "stats ", "remove "} {
			assert.True(t, slices.ContainsFunc(ops, func(op string) bool { return strings.HasPrefix(op, want) }), "%s ran %q on its host; ran %v", id, want, ops)
		}
		assert.Empty(t, other.seen(id, containers[id]), "the other host touched %s", id)
	}
	ca, va := a.rt.Counts()
	cb, vb := b.rt.Counts()
	assert.Zero(t, ca+va+cb+vb, "containers and volumes left")
	h.ok(h.command(schemas.EndGroup, "g-own", ""))
}

// TestPlacementFallsThrough fills the hosts unevenly: a create the host
// first in order refuses goes to the next; one no host takes is refused
// with resource_exhausted naming each host's reason.
func TestPlacementFallsThrough(t *testing.T) {
	h, a, b := multiHost(t, 1<<30, 8<<30)
	h.createGroup("g-fit", schemas.GroupSpec{})
	// host-a comes first (both empty, ties by name) but has 1 GiB.
	res := h.createSandbox("g-fit", "big", schemas.SandboxSpec{Compute: &schemas.ComputeResources{Memory: "4GiB"}})
	require.Nil(t, res.Error)
	assert.Equal(t, b.name, res.Sandboxes[0].Host, "the host with room")
	assert.Empty(t, a.seen("big"))

	cmd := h.command(schemas.CreateSandbox, "g-fit", "huge")
	cmd.Sandbox = &schemas.SandboxSpec{Compute: &schemas.ComputeResources{Memory: "6GiB"}}
	res = h.refused(cmd, schemas.CodeResourceExhausted)
	assert.Contains(t, res.Error.Message, "host host-a: ")
	assert.Contains(t, res.Error.Message, "host host-b: ")
	_, err := h.sandbox("huge")
	require.Error(t, err, "no record of the refused sandbox")
	assert.Empty(t, a.seen("huge"))
	assert.Empty(t, b.seen("huge"))
	h.ok(h.command(schemas.EndGroup, "g-fit", ""))
}

// TestGroupAcrossHosts starts a group whose initial sandboxes spread over
// both hosts, adds one, and ends the group: nothing is left on either
// engine, and no record.
func TestGroupAcrossHosts(t *testing.T) {
	h, a, b := multiHost(t, 8<<30, 8<<30)
	spec := schemas.GroupSpec{Compute: schemas.ComputeResources{Memory: "512MiB"}}
	for i := range 4 {
		spec.Sandboxes = append(spec.Sandboxes, schemas.SandboxSpec{ID: fmt.Sprintf("init-%d", i)})
	}
	h.createGroup("g-span", spec)
	res := h.ok(h.command(schemas.StartGroup, "g-span", ""))
	require.Len(t, res.Sandboxes, 4)
	for _, st := range res.Sandboxes {
		assert.Equal(t, schemas.StateRunning, st.State, "%s", st.ID)
		assert.NoError(t, h.ping(st.ID), "%s answers", st.ID)
	}
	require.Nil(t, h.createSandbox("g-span", "extra", schemas.SandboxSpec{}).Error)
	hosts := h.hostsOf("init-0", "init-1", "init-2", "init-3", "extra")
	m, err := h.nc.Request(schemas.GroupStatusSubject("g-span"), nil, 10*time.Second)
	require.NoError(t, err)
	var reply schemas.StatusReply
	require.NoError(t, json.Unmarshal(m.Data, &reply))
	require.Nil(t, reply.Error)
	assert.Equal(t, map[string]int{a.name: count(hosts, a.name), b.name: count(hosts, b.name)}, reply.Group.Hosts, "the group status counts its sandboxes per host")
	for _, st := range reply.Sandboxes {
		assert.Equal(t, hosts[st.ID], st.Host, "host of %s in the group status", st.ID)
	}
	assert.Equal(t, 5, count(hosts, a.name)+count(hosts, b.name), "all placed: %v", hosts)
	assert.GreaterOrEqual(t, count(hosts, a.name), 2, "spread: %v", hosts)
	assert.GreaterOrEqual(t, count(hosts, b.name), 2, "spread: %v", hosts)

	// A leftover container of the group on host-b that no record knows.
	_, err = b.rt.Create(t.Context(), runtime.ContainerSpec{Name: runtime.ContainerName("stray"), Image: h.cfg.SandboxImage, Labels: map[string]string{
		runtime.LabelManaged: "true", runtime.LabelGroup: "g-span", runtime.LabelSandbox: "stray", runtime.LabelSystem: "sys",
	}})
	require.NoError(t, err)

	end := h.ok(h.command(schemas.EndGroup, "g-span", ""))
	assert.Len(t, end.Sandboxes, 5)
	ca, va := a.rt.Counts()
	cb, vb := b.rt.Counts()
	assert.Zero(t, ca+va, "left on host-a")
	assert.Zero(t, cb+vb, "left on host-b")
	for id := range hosts {
		_, err := h.sandbox(id)
		assert.Error(t, err, "record of %s", id)
	}
	_, _, err = h.w.store.Group(t.Context(), "g-span")
	assert.Error(t, err, "group record")
}

// TestHostLost stops host-b's worker: after HostLostAfter host-a's worker
// marks the host lost, its sandboxes lost (exited, reason host_lost) and
// its ledger empty, while host-a's sandbox runs on. Ending a lost sandbox
// forgets it. When host-b's worker runs again it removes what its lost
// sandboxes left on its engine, and new sandboxes can go there again.
func TestHostLost(t *testing.T) {
	h, a, b := multiHost(t, 8<<30, 8<<30, func(c *Config) { c.HostLostAfter = time.Second })
	h.createGroup("g-lost", schemas.GroupSpec{Compute: schemas.ComputeResources{Memory: "1GiB"}})
	ids := []string{"l-1", "l-2", "l-3", "l-4"}
	for _, id := range ids {
		require.Nil(t, h.createSandbox("g-lost", id, schemas.SandboxSpec{}).Error)
		h.ok(h.command(schemas.StartSandbox, "g-lost", id))
	}
	hosts := h.hostsOf(ids...)
	var onB, onA []string
	for id, host := range hosts {
		if host == b.name {
			onB = append(onB, id)
		} else {
			onA = append(onA, id)
		}
	}
	require.Len(t, onB, 2, "spread: %v", hosts)
	subs := map[string]*nats.Subscription{}
	for _, id := range onB {
		subs[id] = h.events(id)
	}

	b.stop()
	// A start sent now is forwarded to host-b, which is silent but not
	// yet lost: the worker that marks it lost answers it.
	queued := make(chan schemas.CommandResult, 1)
	go func() { queued <- h.send(h.command(schemas.StartSandbox, "g-lost", onB[1])) }()
	for _, id := range onB {
		ev := h.nextEvent(subs[id], func(ev schemas.Event) bool { return ev.Kind == schemas.EventExited })
		assert.Equal(t, schemas.LostHost, ev.Reason)
		st, err := h.sandbox(id)
		require.NoError(t, err)
		assert.Equal(t, schemas.StateLost, st.State)
	}
	rec, err := h.w.store.Host(t.Context(), b.name)
	require.NoError(t, err)
	assert.Equal(t, schemas.HostLost, rec.State)
	res := <-queued
	require.NotNil(t, res.Error, "a start of a sandbox of a lost host")
	assert.Contains(t, []schemas.ErrorCode{schemas.CodeUnavailable, schemas.CodeConflict}, res.Error.Code, res.Error.Message)
	t.Logf("the start sent as host-b went silent: %s: %s", res.Error.Code, res.Error.Message)
	l, err := h.w.store.ReadLedger(t.Context(), state.LedgerKey("engine-b"))
	require.NoError(t, err)
	assert.Empty(t, l.Allocations, "host-b's ledger released")
	for _, id := range onA {
		assert.NoError(t, h.ping(id), "%s on host-a still answers", id)
	}
	// Commands for a lost sandbox: a start is refused, an end forgets it.
	h.refused(h.command(schemas.StartSandbox, "g-lost", onB[0]), schemas.CodeConflict)
	h.ok(h.command(schemas.EndSandbox, "g-lost", onB[0]))
	_, err = h.sandbox(onB[0])
	require.Error(t, err, "the ended lost sandbox is forgotten")
	// New sandboxes go to the live host only.
	res = h.createSandbox("g-lost", "l-5", schemas.SandboxSpec{})
	require.Nil(t, res.Error)
	assert.Equal(t, a.name, res.Sandboxes[0].Host)
	cb, _ := b.rt.Counts()
	require.Equal(t, 2, cb, "host-b's containers outlive its worker")

	// onB[0] is made again, on host-a: host-b's old container of it must go
	// when host-b returns, without touching the new one.
	res = h.createSandbox("g-lost", onB[0], schemas.SandboxSpec{})
	require.Nil(t, res.Error)
	require.Equal(t, a.name, res.Sandboxes[0].Host)
	h.ok(h.command(schemas.StartSandbox, "g-lost", onB[0]))

	// host-b comes back.
	b.w = h.newWorkerOn(b.rt, b.cfg)
	b.stop = runWorker(t, b.w)
	h.eventually("host-b's leftovers removed", func() bool {
		c, v := b.rt.Counts()
		return c == 0 && v == 0
	})
	rec, err = h.w.store.Host(t.Context(), b.name)
	require.NoError(t, err)
	assert.Equal(t, schemas.HostUp, rec.State)
	st, err := h.sandbox(onB[1])
	require.NoError(t, err)
	assert.Equal(t, schemas.StateLost, st.State, "a lost sandbox stays lost until it is ended")
	assert.NoError(t, h.ping(onB[0]), "the sandbox made again on host-a still answers")
	h.ok(h.command(schemas.EndGroup, "g-lost", ""))
	ca, va := a.rt.Counts()
	assert.Zero(t, ca+va, "left on host-a")
}

// TestSharedConsumerMigrates starts a worker where the shared consumer of
// an older version exists, without a filter, with a command waiting: the
// worker narrows it to the clients' subjects (so that it does not overlap
// its host's consumer on the work queue) and the waiting command is still
// answered.
func TestSharedConsumerMigrates(t *testing.T) {
	h := newIdleHarness(t) // its worker set the stream up
	ctx := t.Context()
	control, err := jetstream.New(h.control)
	require.NoError(t, err)
	_, err = control.CreateOrUpdateConsumer(ctx, schemas.CommandStream, jetstream.ConsumerConfig{
		Durable: schemas.CommandConsumer, AckPolicy: jetstream.AckExplicitPolicy,
	})
	require.NoError(t, err)
	cmd := h.command(schemas.CreateGroup, "g-migrate", "")
	cmd.Group = &schemas.GroupSpec{}
	sub, err := h.nc.SubscribeSync(schemas.ResultSubject(cmd.ID))
	require.NoError(t, err)
	data, err := json.Marshal(cmd)
	require.NoError(t, err)
	_, err = h.js.Publish(ctx, schemas.CommandSubject(cmd.Kind), data, jetstream.WithMsgID(cmd.ID))
	require.NoError(t, err)

	h.start()
	m, err := sub.NextMsg(10 * time.Second)
	require.NoError(t, err, "the waiting command is answered")
	var res schemas.CommandResult
	require.NoError(t, json.Unmarshal(m.Data, &res))
	require.Nil(t, res.Error)
	for _, tt := range []struct{ name, filter string }{
		{schemas.CommandConsumer, schemas.SharedCommandFilter},
		{schemas.HostConsumer(h.w.hostName), schemas.HostCommandFilter(h.w.hostName)},
	} {
		c, err := control.Consumer(ctx, schemas.CommandStream, tt.name)
		require.NoError(t, err)
		info, err := c.Info(ctx)
		require.NoError(t, err)
		assert.Equal(t, tt.filter, info.Config.FilterSubject, "filter of %s", tt.name)
	}
}

// TestHostRecord checks what a worker records of its host: named after
// its engine's id when no name is set, with its capacity, its ledger's
// allocations and itself among the workers.
func TestHostRecord(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.HostHeartbeat = 50 * time.Millisecond })
	require.Equal(t, "mem-engine", h.w.hostName)
	h.createGroup("g-rec", schemas.GroupSpec{Compute: schemas.ComputeResources{Memory: "1GiB", CPU: "1"}})
	require.Nil(t, h.createSandbox("g-rec", "rec-1", schemas.SandboxSpec{}).Error)
	st, err := h.sandbox("rec-1")
	require.NoError(t, err)
	assert.Equal(t, "mem-engine", st.Host)
	h.eventually("the heartbeat counts the sandbox", func() bool {
		rec, err := h.w.store.Host(t.Context(), "mem-engine")
		return err == nil && rec.Sandboxes == 1
	})
	rec, err := h.w.store.Host(t.Context(), "mem-engine")
	require.NoError(t, err)
	assert.Equal(t, schemas.HostUp, rec.State)
	assert.Equal(t, "mem-engine", rec.EngineID)
	assert.Equal(t, 4, rec.CPUs)
	assert.Equal(t, int64(8<<30), rec.MemoryBytes)
	assert.Equal(t, int64(1<<30), rec.Allocated.MemoryBytes)
	assert.Equal(t, int64(1e9), rec.Allocated.NanoCPUs)
	assert.Contains(t, rec.Workers, h.cfg.Worker)
	assert.WithinDuration(t, time.Now(), rec.LastSeen, 5*time.Second)
}

func TestHostNameIsASubjectToken(t *testing.T) {
	tests := []struct {
		name, host, engine, want string
		wantErr                  bool
	}{
		{name: "engine id", engine: "ABCD:EFGH:1234", want: "ABCD_EFGH_1234"},
		{name: "configured", host: "host-1", engine: "x", want: "host-1"},
		{name: "configured with a dot", host: "host.1", engine: "x", wantErr: true},
		{name: "no id", engine: "", want: "local"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := memruntime.New()
			rt.SetHost(runtime.Host{ID: tt.engine, CPUs: 4, MemoryBytes: 8 << 30}, "")
			got, err := hostName(t.Context(), Config{Host: tt.host}, rt)
			if tt.wantErr {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

// TestAdmissionRaceFallsThrough makes host-a's record promise more memory
// than its engine has (as when another create took the room after
// placement's dry run): host-a's own admission refuses the create it was
// given, and the create goes on to host-b.
func TestAdmissionRaceFallsThrough(t *testing.T) {
	h, a, b := multiHost(t, 8<<30, 8<<30, func(c *Config) {
		// One heartbeat, at start: the records keep what they said then.
		c.HostHeartbeat, c.HostLostAfter = time.Hour, 2*time.Hour
	})
	a.rt.SetHost(runtime.Host{ID: "engine-a", CPUs: 4, MemoryBytes: 1 << 30}, "a")
	h.createGroup("g-race", schemas.GroupSpec{})
	spec := schemas.SandboxSpec{ID: "raced", Compute: &schemas.ComputeResources{Memory: "2GiB"}}
	g, _, err := h.w.store.Group(t.Context(), "g-race")
	require.NoError(t, err)
	first, err := h.w.placer.Place(t.Context(), g, spec)
	require.NoError(t, err)
	require.Equal(t, a.name, first, "placement's dry run chooses host-a, whose record promises room")

	res := h.createSandbox("g-race", "raced", spec)
	require.Nil(t, res.Error)
	assert.Equal(t, b.name, res.Sandboxes[0].Host)
	ca, va := a.rt.Counts()
	assert.Zero(t, ca+va, "host-a's failed create left nothing")
	assert.Empty(t, h.ledgerOf("mem-engine"), "nor an allocation")
	h.ok(h.command(schemas.EndGroup, "g-race", ""))
}

// ledgerOf reads the ledger of engine.
func (h *harness) ledgerOf(engine string) map[string]schemas.ResolvedResources {
	h.t.Helper()
	l, err := h.w.store.ReadLedger(h.t.Context(), state.LedgerKey(engine))
	require.NoError(h.t, err)
	return l.Allocations
}

// TestForwardedCommandRunsOnce delivers the forwarded copy of a create to
// its host a second time, as a redelivery would: the host answers it from
// the result already published, and its engine makes one container.
func TestForwardedCommandRunsOnce(t *testing.T) {
	h, _, b := multiHost(t, 8<<30, 8<<30)
	h.createGroup("g-once", schemas.GroupSpec{Compute: schemas.ComputeResources{Memory: "1GiB"}})
	require.Nil(t, h.createSandbox("g-once", "first", schemas.SandboxSpec{}).Error) // ties go to host-a
	cmd := h.command(schemas.CreateSandbox, "g-once", "once")
	cmd.Sandbox = &schemas.SandboxSpec{}
	res := h.send(cmd)
	require.Nil(t, res.Error)
	require.Equal(t, b.name, res.Sandboxes[0].Host, "spread")

	sub, err := h.nc.SubscribeSync(schemas.ResultSubject(cmd.ID))
	require.NoError(t, err)
	data, err := json.Marshal(cmd)
	require.NoError(t, err)
	control, err := jetstream.New(h.control)
	require.NoError(t, err)
	_, err = control.Publish(t.Context(), schemas.HostCommandSubject(b.name, cmd.Kind), data, jetstream.WithMsgID(cmd.ID+"-again"))
	require.NoError(t, err)
	m, err := sub.NextMsg(10 * time.Second)
	require.NoError(t, err)
	var again schemas.CommandResult
	require.NoError(t, json.Unmarshal(m.Data, &again))
	assert.Equal(t, res, again, "the same result, published again")
	creates := 0
	for _, op := range b.seen("once") {
		if strings.HasPrefix(op, "create ") {
			creates++
		}
	}
	assert.Equal(t, 1, creates, "containers made for the sandbox")
}

// TestConcurrentGroupEndsAcrossHosts sends two end_group commands for one
// group with sandboxes on both hosts at once, several times: each worker
// may take one and wait for its part on the other's host; neither waits
// for the other's group lock, so both are answered and nothing is left.
func TestConcurrentGroupEndsAcrossHosts(t *testing.T) {
	h, a, b := multiHost(t, 8<<30, 8<<30)
	for i := range 4 {
		group := fmt.Sprintf("g-ends-%d", i)
		h.createGroup(group, schemas.GroupSpec{})
		for j := range 4 {
			require.Nil(t, h.createSandbox(group, fmt.Sprintf("ends-%d-%d", i, j), schemas.SandboxSpec{}).Error)
		}
		var wg sync.WaitGroup
		results := make([]schemas.CommandResult, 2)
		for k := range results {
			wg.Go(func() { results[k] = h.send(h.command(schemas.EndGroup, group, "")) })
		}
		wg.Wait()
		for _, res := range results {
			if res.Error != nil {
				assert.Equal(t, schemas.CodeNotFound, res.Error.Code, "end_group of %s: %s", group, res.Error.Message)
			}
		}
		_, _, err := h.w.store.Group(t.Context(), group)
		require.Error(t, err, "group %s ended", group)
	}
	ca, va := a.rt.Counts()
	cb, vb := b.rt.Counts()
	assert.Zero(t, ca+va+cb+vb, "containers and volumes left")
}

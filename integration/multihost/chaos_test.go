package multihost

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/sdk"
	"github.com/sandox/sandox/services/auth"
	"github.com/sandox/sandox/services/orchestrator/runtime"
)

// The load: groups of sandboxes, placed with spread, each sandbox sent
// batches one after another once it runs.
const (
	groupCount      = 3
	sandboxesPerGrp = 4
	batchesPerSb    = 4
	// killAfter is how many sandboxes run when the chaos starts: each
	// group's first two, placed one on each host (spread), so that both
	// hosts hold sandboxes; the others are being created or started then.
	killAfter = 2 * groupCount
)

// timeline logs what happened when, relative to the load's start.
type timeline struct {
	t     *testing.T
	start time.Time
	mu    sync.Mutex
	marks []string
}

func (tl *timeline) mark(format string, args ...any) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	m := fmt.Sprintf("%6.2fs ", time.Since(tl.start).Seconds()) + fmt.Sprintf(format, args...)
	tl.marks = append(tl.marks, m)
	tl.t.Log(m)
}

// TestChaosTwoHostsThreeNodes runs two hosts (two Docker engines, one
// worker process each) on a three-node NATS cluster, creates and uses
// sandboxes of several spread groups, and meanwhile SIGKILLs the node that
// leads the command stream (through whose socket h1's sandboxes reach the
// bus) and host h1's worker, which it restarts at once. Afterwards every sandbox
// runs exactly once, on the host its status names, every batch got its
// observations or a typed error, every sandbox answers a batch again,
// ending the groups leaves nothing of the run on either engine, and the
// audit log shows every command once.
func TestChaosTwoHostsThreeNodes(t *testing.T) {
	began := time.Now()
	e1, e2 := requireEngines(t)
	engines := map[string]*engine{e1.host: e1, e2.host: e2}
	ensureImages(t, e1, e2, "sandox/sandbox:latest")

	bin := t.TempDir()
	natsBin := buildBinary(t, bin, "sandox-nats", "./services/natsd/cmd/sandox-nats")
	workerBin := buildBinary(t, bin, "sandox-orchestrator", "./services/orchestrator/cmd/sandox-orchestrator")

	c := startCluster(t, natsBin)
	control := c.connect(t, auth.RoleControl, "multihost control")
	js, err := jetstream.New(control)
	require.NoError(t, err)
	c.setup(t, js)
	for _, name := range []string{schemas.CommandStream, schemas.EventStream, "KV_" + schemas.SandboxBucket} {
		s, err := js.Stream(t.Context(), name)
		require.NoError(t, err, name)
		require.Equal(t, 3, s.CachedInfo().Config.Replicas, "replicas of %s", name)
	}

	// Everything of the run carries its system label; whatever a failed
	// run leaves is removed by it, on both engines.
	system := fmt.Sprintf("sandox-mh-%d", os.Getpid())
	t.Cleanup(func() {
		for _, e := range engines {
			_ = e.removeLabelled(context.Background(), runtime.LabelSystem+"="+system)
		}
	})
	// The node to kill leads the command stream, so that the kill moves
	// the leadership of the commands in flight. Its socket goes with it:
	// h1's sandboxes reach the bus through it (it is first in their list)
	// and must move to another node's socket; h2's use another node.
	victim, err := streamLeader(t.Context(), js, schemas.CommandStream)
	require.NoError(t, err)
	w1 := startWorker(t, workerBin, c, e1, system, victim)
	w2 := startWorker(t, workerBin, c, e2, system, c.names[(slices.Index(c.names, victim)+1)%len(c.names)])
	t.Cleanup(func() { dumpLogs(t, append([]*proc{w1, w2}, c.nodes...)...) })
	waitHostsUp(t, js, e1.host, e2.host)
	victimIdx := map[string]int{c.names[0]: 0, c.names[1]: 1, c.names[2]: 2}[victim]
	t.Logf("cluster up: %s; the node to kill: %s; setup took %s", c.urlList(), victim, time.Since(began).Round(time.Millisecond))

	// Each group has its own client connection, preferring another node:
	// one group's is on the node that will be killed.
	var groups []*sdk.SandboxGroup
	var groupIDs, sandboxIDs []string
	for i := range groupCount {
		first := (victimIdx + i) % len(c.urls)
		urls := append([]string{c.urls[first]}, c.urls...)
		nc := c.connect(t, auth.RoleClient, fmt.Sprintf("multihost client %d", i), urls...)
		id := fmt.Sprintf("mh%d-g%d", os.Getpid(), i)
		g, err := sdk.NewSandboxGroup(sdk.GroupConfig{ID: id, Placement: schemas.PlacementSpread}, sdk.WithConn(nc), sdk.WithCommandTimeout(commandTimeout))
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(t.Context(), commandTimeout)
		require.NoError(t, g.Start(ctx), "start group %s", id)
		cancel()
		groups, groupIDs = append(groups, g), append(groupIDs, id)
	}

	tl := &timeline{t: t, start: time.Now()}
	l := &load{}
	chaos := make(chan struct{})
	var once sync.Once
	l.onStarted = func(n int) {
		if n >= killAfter {
			once.Do(func() { close(chaos) })
		}
	}
	var chaosDone sync.WaitGroup
	chaosDone.Go(func() {
		select {
		case <-chaos:
		case <-time.After(3 * time.Minute):
			tl.mark("no sandbox started: no chaos")
			return
		}
		// Mid-command: wait (a while) until h1's workers hold a command
		// forwarded to them, unacknowledged.
		if waitInHand(t, js, schemas.HostConsumer(e1.host), 10*time.Second) {
			tl.mark("%d sandboxes run, h1 holds a command: SIGKILL %s and worker-h1", killAfter, victim)
		} else {
			tl.mark("%d sandboxes run (h1 holds no forwarded command): SIGKILL %s and worker-h1", killAfter, victim)
		}
		c.nodes[victimIdx].kill(t)
		tl.mark("%s killed", victim)
		w1.kill(t)
		tl.mark("worker-h1 killed")
		time.Sleep(time.Second)
		w1.start(t)
		tl.mark("worker-h1 restarted")
	})

	var drivers sync.WaitGroup
	for _, g := range groups {
		var ids []string
		for j := range sandboxesPerGrp {
			ids = append(ids, fmt.Sprintf("%s-s%d", g.ID(), j))
		}
		sandboxIDs = append(sandboxIDs, ids...)
		drivers.Go(func() { l.driveGroup(t.Context(), g, ids, batchesPerSb) })
	}
	finished := make(chan struct{})
	go func() { drivers.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-time.After(sandboxesPerGrp*maxTries*2*commandTimeout + batchesPerSb*batchTimeout):
		t.Fatal("the load did not finish within its deadlines: something hangs")
	}
	chaosDone.Wait()
	tl.mark("load done")
	// The restarted worker heartbeats again: its host is up.
	waitHostsUp(t, js, e1.host, e2.host)
	tl.mark("both hosts up")

	// Every requested sandbox was created and started, and every batch got
	// its observations or a typed error.
	var okBatches, failedBatches int
	for _, r := range l.runs {
		if !assert.NoError(t, r.createErr, "create %s", r.id) || !assert.NoError(t, r.startErr, "start %s", r.id) {
			continue
		}
		assert.Len(t, r.batches, batchesPerSb, "batches of %s", r.id)
		for _, b := range r.batches {
			switch {
			case b.ok():
				okBatches++
			case b.err != nil && typed(b.err):
				failedBatches++
				tl.mark("batch %s on %s: %v (after %s)", b.marker, r.id, b.err, b.took.Round(time.Millisecond))
			default:
				assert.Fail(t, "a batch got neither its observation nor a typed error", "%s: obs %+v, err %v", b.marker, b.obs, b.err)
			}
		}
	}
	var tries, existed, remade int
	for _, r := range l.runs {
		tries += r.creates + r.starts
		existed += r.existed
		remade += r.remade
	}
	t.Logf("%d sandboxes, %d batches: %d answered, %d with a typed error; %d lifecycle commands sent (retries included), %d creates answered already_exists, %d half-made sandboxes ended and made again",
		len(l.runs), okBatches+failedBatches, okBatches, failedBatches, tries, existed, remade)

	// After the chaos every sandbox answers again.
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	var after sync.WaitGroup
	for _, r := range l.running() {
		after.Go(func() {
			b := l.send(ctx, r, r.id+"-after")
			assert.True(t, b.ok(), "batch after the chaos on %s: obs %+v, err %v", r.id, b.obs, b.err)
		})
	}
	after.Wait()
	tl.mark("every sandbox answered after the chaos")

	// Each sandbox exists once, on one host: its status names the host,
	// and that host's engine alone has its container.
	counts := map[string]map[string]int{}
	for name, e := range engines {
		counts[name], err = e.sandboxContainers(t.Context(), system)
		require.NoError(t, err)
	}
	perHost := map[string]int{}
	for _, r := range l.running() {
		st, err := r.sb.Refresh(ctx)
		if !assert.NoError(t, err, "status of %s", r.id) {
			continue
		}
		assert.Equal(t, schemas.StateRunning, st.State, "state of %s", r.id)
		if !assert.Contains(t, engines, st.Host, "host of %s", r.id) {
			continue
		}
		perHost[st.Host]++
		for name := range engines {
			want := 0
			if name == st.Host {
				want = 1
			}
			assert.Equal(t, want, counts[name][r.id], "containers of %s on %s (placed on %s)", r.id, name, st.Host)
		}
	}
	t.Logf("sandboxes per host: %v", perHost)
	assert.Positive(t, perHost[e1.host], "sandboxes on %s", e1.host)
	assert.Positive(t, perHost[e2.host], "sandboxes on %s", e2.host)
	// h1's sandboxes reached the bus through the killed node's socket:
	// those that ran at the kill moved to another node's.
	moved, all, err := e1.logsContaining(ctx, system, "reconnected to the bus")
	require.NoError(t, err)
	t.Logf("sandboxes on %s whose executor moved to another node's socket: %d of %d", e1.host, moved, all)
	assert.Positive(t, moved, "no executor on %s logged its move off the killed node's socket", e1.host)

	// Ending the groups leaves nothing of the run on either engine.
	for _, g := range groups {
		assert.NoError(t, g.End(ctx), "end group %s", g.ID())
	}
	tl.mark("groups ended")
	for name, e := range engines {
		left, err := e.labelled(t.Context(), runtime.LabelSystem+"="+system)
		require.NoError(t, err)
		assert.True(t, left.empty(), "left on %s: %+v", name, left)
		for _, id := range sandboxIDs {
			_, err := e.api.VolumeInspect(t.Context(), runtime.VolumeName(id))
			assert.Error(t, err, "volume of %s left on %s", id, name)
		}
	}

	// The audit log shows every command once.
	auditor := c.connect(t, auth.RoleAudit, "multihost audit")
	ajs, err := jetstream.New(auditor)
	require.NoError(t, err)
	prefix := fmt.Sprintf("mh%d-", os.Getpid())
	entries := auditCommands(t, ajs, prefix)
	assertCommandsOnce(t, entries, groupIDs, l.runs)
	redelivered := 0
	for _, n := range recordsInStream(t, ajs, prefix) {
		if n > 1 {
			redelivered++
		}
	}
	t.Logf("audit: %d commands shown once each; %d of them recorded more than once in the stream (redelivered after the kill); worker restarts by supervision: h1 %d, h2 %d; the test took %s",
		len(entries), redelivered, w1.restartCount(), w2.restartCount(), time.Since(began).Round(time.Millisecond))
	// A worker started while the cluster elects its leaders waits for them
	// (Config.BusWait) instead of exiting.
	assert.Zero(t, w1.restartCount()+w2.restartCount(), "a worker exited by itself and supervision started it again: see its log")
}

// waitHostsUp waits until every named host has a record that is up.
func waitHostsUp(t *testing.T, js jetstream.JetStream, hosts ...string) {
	t.Helper()
	eventually(t, 90*time.Second, "hosts up", func() error {
		kv, err := js.KeyValue(t.Context(), schemas.HostsBucket)
		if err != nil {
			return err
		}
		for _, h := range hosts {
			e, err := kv.Get(t.Context(), h)
			if err != nil {
				return fmt.Errorf("host %s: %w", h, err)
			}
			var st schemas.HostStatus
			if err := json.Unmarshal(e.Value(), &st); err != nil {
				return fmt.Errorf("host %s: %w", h, err)
			}
			if st.State != schemas.HostUp {
				return fmt.Errorf("host %s is %s", h, st.State)
			}
		}
		return nil
	})
}

// waitInHand waits, at most d, until the durable consumer has a message
// delivered and not yet acknowledged: a command a worker is running.
func waitInHand(t *testing.T, js jetstream.JetStream, consumer string, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		c, err := js.Consumer(ctx, schemas.CommandStream, consumer)
		if err == nil {
			info, err := c.Info(ctx)
			if err == nil && info.NumAckPending > 0 {
				cancel()
				return true
			}
		}
		cancel()
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

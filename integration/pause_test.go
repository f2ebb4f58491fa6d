package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/internal/docker"
	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/sdk"
	"github.com/sandox/sandox/services/auth"
	"github.com/sandox/sandox/services/orchestrator"
)

// TestPauseResume pauses a real sandbox while a job counts: its cgroup's
// CPU use stands still, a batch sent to it fails at once with ErrPaused,
// admission gives its CPU to another sandbox (and refuses the resume
// while that one holds it), it stays paused across another worker's
// start, and after the resume the job goes on where it was and its output
// is complete. Pausing an ended sandbox and resuming a running one are
// refused.
func TestPauseResume(t *testing.T) {
	ctx := timeoutCtx(t, 8*time.Minute)
	// Each sandbox asks for every core of the host, so that two cannot
	// run at once.
	host, err := env.docker.Host(ctx)
	require.NoError(t, err)
	group := newGroup(t, sdk.GroupConfig{
		ID:               "it-pause",
		ComputeResources: schemas.ComputeResources{CPU: strconv.Itoa(host.CPUs), Memory: "256MiB"},
	})
	sb := startSandbox(t, group, "it-pause-a", sdk.SandboxOptions{})

	const lines = 80
	job, _, err := sb.StartJob(ctx, fmt.Sprintf(`for i in $(seq 1 %d); do echo $i; sleep 0.1; done`, lines), sdk.JobOptions{ID: "counter"})
	require.NoError(t, err)
	var out jobStreams
	for ev, err := range job.Output(ctx, 0) {
		require.NoError(t, err)
		out.add(t, ev)
		if out.stdout.Len() > 0 {
			break
		}
	}

	require.NoError(t, sb.Pause(ctx))
	assert.Equal(t, schemas.StatePaused, sb.Status().State)
	container := sb.Status().Container
	assertFrozen(t, container)
	require.NoError(t, sb.Pause(ctx), "pausing a paused sandbox is no error")

	before := cpuUsage(t, container)
	require.Never(t, func() bool { return cpuUsage(t, container) != before }, 1500*time.Millisecond, 100*time.Millisecond,
		"the paused sandbox's cgroup used CPU")

	start := time.Now()
	_, err = sb.SendActionsJSON(ctx, []byte(`{"terminal_tools.run": {"args": {"command": "echo hi"}}}`))
	require.ErrorIs(t, err, sdk.ErrPaused)
	assert.Less(t, time.Since(start), 5*time.Second, "a batch to a paused sandbox is refused at once, not timed out")

	// Its CPU is free: another sandbox that needs all of it is admitted,
	// and the paused one cannot resume while that one holds it.
	other := startSandbox(t, group, "it-pause-b", sdk.SandboxOptions{})
	err = sb.Resume(ctx)
	require.ErrorIs(t, err, sdk.ErrResourceExhausted)
	assert.Contains(t, err.Error(), "cpu: asked")
	st, err := sb.Refresh(ctx)
	require.NoError(t, err)
	assert.Equal(t, schemas.StatePaused, st.State, "a refused resume leaves the sandbox paused")

	restartWorker(t, sb.ID())
	st, err = sb.Refresh(ctx)
	require.NoError(t, err)
	assert.Equal(t, schemas.StatePaused, st.State, "paused across a worker's start")
	assertFrozen(t, container)

	require.NoError(t, other.End(ctx))
	require.NoError(t, sb.Resume(ctx))
	assert.Equal(t, schemas.StateRunning, sb.Status().State)
	obs := send(t, sb, `{"terminal_tools.run": {"args": {"command": "echo back"}}}`)
	require.Len(t, obs, 1)
	assert.Nil(t, obs[0].Error)

	// The job went on where it was: every line once, in order.
	for ev, err := range job.Output(ctx, out.last) {
		require.NoError(t, err)
		out.add(t, ev)
	}
	require.NotNil(t, out.exit)
	assert.Equal(t, 0, out.exit.ExitCode)
	want := make([]string, 0, lines)
	for i := 1; i <= lines; i++ {
		want = append(want, strconv.Itoa(i))
	}
	assert.Equal(t, strings.Join(want, "\n")+"\n", out.stdout.String())

	err = sb.Resume(ctx)
	require.ErrorIs(t, err, sdk.ErrConflict, "resuming a running sandbox")
	require.NoError(t, sb.End(ctx))
	err = sb.Pause(ctx)
	require.ErrorIs(t, err, sdk.ErrNotFound, "pausing an ended sandbox")
}

// assertFrozen checks that the engine has container paused.
func assertFrozen(t *testing.T, container string) {
	t.Helper()
	st, err := env.docker.Inspect(t.Context(), container)
	require.NoError(t, err)
	assert.Equal(t, "paused", st.Status, "container %s", container)
}

// cpuUsage reads the CPU time (ns) container's cgroup used (cgroup v1
// cpuacct; cgroup v2 cpu.stat).
func cpuUsage(t *testing.T, container string) int64 {
	t.Helper()
	for _, p := range []string{
		"/sys/fs/cgroup/cpuacct/docker/" + container + "/cpuacct.usage",
		"/sys/fs/cgroup/cpu,cpuacct/docker/" + container + "/cpuacct.usage",
		"/sys/fs/cgroup/cpuacct/system.slice/docker-" + container + ".scope/cpuacct.usage",
	} {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		require.NoError(t, err, "read %s", p)
		return n
	}
	for _, p := range []string{
		"/sys/fs/cgroup/system.slice/docker-" + container + ".scope/cpu.stat",
		"/sys/fs/cgroup/docker/" + container + "/cpu.stat",
	} {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		for line := range strings.Lines(string(b)) {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), "usage_usec "); ok {
				n, err := strconv.ParseInt(v, 10, 64)
				require.NoError(t, err, "read %s", p)
				return n * 1000
			}
		}
	}
	matches, _ := filepath.Glob("/sys/fs/cgroup/*/*/" + container + "*")
	t.Fatalf("no CPU accounting file of container %s found (cgroup dirs named for it: %v)", container, matches)
	return 0
}

// restartWorker runs another orchestrator worker on the test system's
// engine through its start (reconcile, lost sandboxes, pools, …), until it
// answers a status request for sandbox, then stops it: what a restarted
// worker does to the system's sandboxes.
func restartWorker(t *testing.T, sandbox string) {
	t.Helper()
	control, err := connectAs(auth.RoleControl)
	require.NoError(t, err)
	defer control.Close()
	cfg := env.worker
	cfg.Worker = "it-pause-worker"
	cfg.DisksDir = ""
	cfg.CredsDir = t.TempDir()
	w, err := orchestrator.NewWorker(t.Context(), control, docker.NewRuntime(env.docker).Engine(), cfg, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	require.NoError(t, err)
	wctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(wctx) }()
	defer func() {
		cancel()
		assert.NoError(t, <-done)
	}()
	require.Eventually(t, func() bool {
		m, err := env.nc.Request(schemas.SandboxStatusSubject(sandbox), nil, 2*time.Second)
		if err != nil {
			return false
		}
		var reply schemas.StatusReply
		return json.Unmarshal(m.Data, &reply) == nil && reply.Worker == cfg.Worker
	}, 2*time.Minute, 50*time.Millisecond, "the second worker never answered")
}

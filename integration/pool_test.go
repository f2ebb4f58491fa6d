package integration

import (
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/internal/docker"
	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/sdk"
	"github.com/sandox/sandox/services/orchestrator/runtime"
)

// claimTries bounds the creates TestPoolClaim sends until one is claimed:
// the pooled container runs a moment before its executor is ready to be
// claimed.
const claimTries = 3

// TestPoolClaim runs a worker with a warm pool in a system of its own
// (ownSystem: the only worker, so every command is its) and creates a
// sandbox from its pool: the claimed sandbox runs at once on real Docker,
// answers actions under its own id with the limits of its group (docker
// update), and its workspace is empty. A start_group claims its initial
// sandbox from the pool too.
func TestPoolClaim(t *testing.T) {
	ctx := t.Context()
	cfg := env.worker
	cfg.Worker = "it-pool-worker"
	cfg.System = env.network + "-pool"
	cfg.EgressNetwork = env.network + "-pool-egress"
	cfg.PoolSize = 1
	cfg.DisksDir = ""
	nc := ownSystem(t, cfg)
	waitPooled := func() {
		require.Eventually(t, func() bool {
			left, err := env.docker.List(ctx, runtime.LabelSystem+"="+cfg.System)
			return err == nil && slices.ContainsFunc(left, func(c docker.State) bool {
				return schemas.IsPoolID(c.Labels[runtime.LabelSandbox]) && c.Running
			})
		}, 2*time.Minute, 100*time.Millisecond, "a pooled sandbox runs")
	}

	g := newGroupOn(t, nc, sdk.GroupConfig{ID: "it-pool", ComputeResources: schemas.ComputeResources{CPU: "1", Memory: "256MiB", PIDs: 200}})
	var sb *sdk.Sandbox
	for i := 0; i < claimTries && sb == nil; i++ {
		waitPooled()
		// Let the pool worker's readiness settle into its ready list.
		time.Sleep(200 * time.Millisecond)
		start := time.Now()
		s := startSandbox(t, g, fmt.Sprintf("it-pool-%d", i), sdk.SandboxOptions{})
		obs := send(t, s, `{"terminal_tools.run": {"description": "look", "args": {"command": "ls -A /workspace | wc -l"}}}`)
		took := time.Since(start)
		if !s.Status().FromPool {
			t.Logf("try %d: created afresh, the pooled sandbox was not ready yet", i)
			require.NoError(t, s.End(ctx))
			continue
		}
		t.Logf("claim to first answer (create, start, one terminal action): %s", took)
		sb = s
		require.Len(t, obs, 1)
		mustOK(t, obs[0])
		assert.Equal(t, "0\n", obs[0].Stdout, "an empty workspace")
	}
	require.NotNil(t, sb, "no create was claimed from the pool")
	st := sb.Status()
	assert.Equal(t, schemas.StateRunning, st.State)
	assert.True(t, schemas.IsPoolID(st.PoolID), "pool id %q", st.PoolID)
	// docker update gave the pooled container the group's limits.
	out, err := exec.CommandContext(ctx, "docker", "inspect", "-f", "{{.HostConfig.NanoCpus}} {{.HostConfig.Memory}} {{.HostConfig.PidsLimit}}", st.Container).Output()
	require.NoError(t, err)
	assert.Equal(t, "1000000000 268435456 200", strings.TrimSpace(string(out)))
	require.NoError(t, sb.End(ctx))
	c, err := env.docker.List(ctx, runtime.LabelSandbox+"="+st.PoolID)
	require.NoError(t, err)
	assert.Empty(t, c, "the claimed container is removed with its sandbox")

	// start_group claims its initial sandboxes too.
	var initial schemas.SandboxStatus
	for i := 0; i < claimTries && !initial.FromPool; i++ {
		waitPooled()
		time.Sleep(200 * time.Millisecond)
		id := fmt.Sprintf("it-pool-start-%d", i)
		g := newGroupOn(t, nc, sdk.GroupConfig{ID: id, Sandboxes: []sdk.InitialSandbox{{ID: id + "-sb"}}})
		initial = g.Sandbox(id + "-sb").Status()
		if initial.FromPool {
			obs := send(t, g.Sandbox(id+"-sb"), `{"terminal_tools.run": {"description": "look", "args": {"command": "ls -A /workspace | wc -l"}}}`)
			require.Len(t, obs, 1)
			mustOK(t, obs[0])
			assert.Equal(t, "0\n", obs[0].Stdout, "an empty workspace")
		}
		require.NoError(t, g.End(ctx))
	}
	assert.True(t, initial.FromPool, "no start_group took its initial sandbox from the pool")
}

// TestGroupPoolClaim gives a group with a user tool file a pool of its
// own: the test system's worker fills it with sandboxes of the group's
// image and limits, a create of the group claims one (no docker update:
// the limits are the group's) that runs the group's tool at once on an
// empty workspace, and ending the group removes the pool.
func TestGroupPoolClaim(t *testing.T) {
	ctx := t.Context()
	const id = "it-gpool"
	tool := writeFile(t, "gpool_tools.py", "def hello() -> None:\n    print(\"hello from the pool\")\n")
	g := newGroup(t, sdk.GroupConfig{
		ID:               id,
		ComputeResources: schemas.ComputeResources{CPU: "0.5", Memory: "256MiB"},
		Tools:            []string{tool},
		Pool:             &schemas.PoolSpec{Size: 1},
	})
	pooled := func() []docker.State {
		left, err := env.docker.List(ctx, runtime.LabelPoolGroup+"="+id)
		require.NoError(t, err)
		return left
	}
	require.Eventually(t, func() bool {
		return slices.ContainsFunc(pooled(), func(c docker.State) bool { return c.Running })
	}, 3*time.Minute, 100*time.Millisecond, "the group's pooled sandbox runs")
	pool := pooled()
	require.Len(t, pool, 1)
	assert.Equal(t, env.worker.Worker, pool[0].Labels[runtime.LabelPoolWorker])
	// Let the worker's readiness settle into its ready list.
	time.Sleep(200 * time.Millisecond)

	start := time.Now()
	sb := startSandbox(t, g, "it-gpool-1", sdk.SandboxOptions{})
	obs := send(t, sb, `{"gpool_tools.hello": {"description": "the group's tool", "args": {}},
		"terminal_tools.run": {"description": "look", "args": {"command": "ls -A /workspace | wc -l"}}}`)
	t.Logf("group pool claim to first answer (create, start, two actions): %s", time.Since(start))
	require.Len(t, obs, 2)
	mustOK(t, obs[0])
	assert.Contains(t, obs[0].Stdout, "hello from the pool")
	mustOK(t, obs[1])
	assert.Equal(t, "0\n", obs[1].Stdout, "an empty workspace")
	st := sb.Status()
	assert.True(t, st.FromPool)
	assert.Equal(t, pool[0].Labels[runtime.LabelSandbox], st.PoolID)
	out, err := exec.CommandContext(ctx, "docker", "inspect", "-f", "{{.HostConfig.NanoCpus}} {{.HostConfig.Memory}}", st.Container).Output()
	require.NoError(t, err)
	assert.Equal(t, "500000000 268435456", strings.TrimSpace(string(out)), "the pooled sandbox had the group's limits")

	require.Eventually(t, func() bool {
		return slices.ContainsFunc(pooled(), func(c docker.State) bool {
			return c.Running && c.Labels[runtime.LabelSandbox] != st.PoolID
		})
	}, 3*time.Minute, 100*time.Millisecond, "the group's pool refills")
	require.NoError(t, g.End(ctx))
	// The engine may list a container a little while after its removal.
	assert.Eventually(t, func() bool { return len(pooled()) == 0 }, 30*time.Second, 100*time.Millisecond, "ending the group drains its pool")
}

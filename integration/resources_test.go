package integration

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/sdk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestComputeResources checks, on real containers, that the limits a
// sandbox is given are enforced and that impossible ones are refused.
func TestComputeResources(t *testing.T) {
	ctx := t.Context()
	group := newGroup(t, sdk.GroupConfig{
		ID:               "it-res",
		ComputeResources: schemas.ComputeResources{CPU: "0.5", Memory: "128MiB", PIDs: 64},
		Sandboxes: []sdk.InitialSandbox{
			{ID: "it-res-small"},
			{ID: "it-res-relative", SandboxOptions: sdk.SandboxOptions{
				ComputeResources:  &schemas.ComputeResources{CPU: "25%", Memory: "1%"},
				AttachedDatabases: &schemas.DatabaseAccess{{Database: "qdrant", Namespace: "docs", Read: true}},
			}},
			{ID: "it-res-neighbour", SandboxOptions: sdk.SandboxOptions{
				ComputeResources: &schemas.ComputeResources{CPU: "0.5", Memory: "256MiB"},
			}},
		},
	})
	small, rel, neighbour := group.Sandbox("it-res-small"), group.Sandbox("it-res-relative"), group.Sandbox("it-res-neighbour")
	require.NotNil(t, small, "want all three initial sandboxes started by Start")
	require.NotNil(t, rel, "want all three initial sandboxes started by Start")
	require.NotNil(t, neighbour, "want all three initial sandboxes started by Start")

	t.Run("initial sandboxes report their resolved limits", func(t *testing.T) {
		host, err := env.docker.Host(ctx)
		require.NoError(t, err)
		tests := []struct {
			sb        *sdk.Sandbox
			nano, mem int64
			pids      int64
			databases int
		}{
			{small, 5e8, 128 << 20, 64, 0},
			{rel, int64(host.CPUs) * 1e9 / 4, host.MemoryBytes / 100, 64, 1},
			{neighbour, 5e8, 256 << 20, 64, 0},
		}
		for _, tt := range tests {
			st := tt.sb.Status()
			r := st.Resources
			assert.Equal(t, schemas.StateRunning, st.State, "%s: state", st.ID)
			assert.Equal(t, tt.nano, r.NanoCPUs, "%s: nano-CPUs", st.ID)
			assert.Equal(t, tt.pids, r.PIDs, "%s: PIDs", st.ID)
			assert.Len(t, st.Databases, tt.databases, "%s: database grants", st.ID)
			assert.InDelta(t, tt.mem, r.MemoryBytes, 1<<20, "%s: memory bytes", st.ID)
		}
	})

	t.Run("CPU-bound loops in a 0.5-core sandbox get at most half a core", func(t *testing.T) {
		// Two busy loops would take both cores of an idle machine. The
		// check reads the cgroup's own accounting and holds on a loaded
		// machine too: load can only lower the share, never raise it past
		// the quota. Hence an upper bound and no lower one.
		u := burnCPU(t, small)
		require.NotNil(t, u.Quota, "want a CPU quota on the sandbox's cgroup")
		require.InDelta(t, 0.5, *u.Quota, 0.001, "CPU quota in cores")
		require.Positive(t, u.CPU, "CPU seconds used: want the loops to have run")
		share := u.CPU / u.Wall
		// The kernel enforces the quota per 100 ms period and may let a
		// period overrun by a little; 0.1 core is far below what the loops
		// would take without a quota.
		require.LessOrEqual(t, share, 0.6, "cores used by two busy loops under a 0.5-core quota")
		t.Logf("two busy loops in a 0.5-core sandbox: %.2f cores over %.1f s, throttled in %d periods", share, u.Wall, u.Throttled)
	})

	t.Run("a memory hog is killed while the neighbour keeps answering", func(t *testing.T) {
		obs := send(t, small, `{"terminal_tools.run": {"args": {"command": "python3 -c 'b=bytearray(512*1024*1024); print(len(b))'", "timeout_seconds": 60}}}`)
		require.NotNil(t, obs[0].ExitCode, "%+v, want the hog killed (exit 137)", obs[0])
		require.Equal(t, 137, *obs[0].ExitCode, "%+v, want the hog killed", obs[0])
		obs = send(t, neighbour, `{"terminal_tools.run": {"args": {"command": "echo alive"}}}`)
		mustOK(t, obs[0])
		obs = send(t, small, `{"terminal_tools.run": {"args": {"command": "echo still here"}}}`)
		require.Contains(t, obs[0].Stdout, "still here", "want the sandbox to go on after the kill")
	})

	t.Run("a fork bomb stays inside its sandbox", func(t *testing.T) {
		bomb := writeFile(t, "bomb.py", "import os, signal, time\n"+
			"kids = []\n"+
			"try:\n"+
			"    for _ in range(1000):\n"+
			"        pid = os.fork()\n"+
			"        if pid == 0:\n"+
			"            time.sleep(60)\n"+
			"            os._exit(0)\n"+
			"        kids.append(pid)\n"+
			"    print('no limit: forked', len(kids))\n"+
			"except OSError as e:\n"+
			"    print('fork refused after', len(kids), 'children:', e.strerror)\n"+
			"for pid in kids:\n"+
			"    os.kill(pid, signal.SIGKILL)\n"+
			"    os.waitpid(pid, 0)\n")
		data, err := os.ReadFile(bomb)
		require.NoError(t, err)
		obs := send(t, small, fmt.Sprintf(`[
			{"tool": "filesystem_tools.write_file", "args": {"path": "bomb.py", "content": %q}},
			{"tool": "terminal_tools.run_python", "args": {"script_path": "bomb.py", "timeout_seconds": 60}}
		]`, data))
		mustOK(t, obs[0])
		require.Contains(t, obs[1].Stdout, "fork refused after", "want fork refused at the PIDs limit")
		assert.True(t, hasLimitHit(obs[1], schemas.LimitPIDs), "limits hit %+v, want the refused fork reported", obs[1].LimitsHit)
		obs = send(t, neighbour, `{"terminal_tools.run": {"args": {"command": "echo neighbour fine"}}}`)
		mustOK(t, obs[0])
	})

	t.Run("impossible requests are refused with the resource named", func(t *testing.T) {
		tests := []struct {
			name    string
			compute schemas.ComputeResources
			want    error
			text    string
		}{
			{"more cores than the host", schemas.ComputeResources{CPU: "512"}, sdk.ErrResourceExhausted, "cpu"},
			{"more memory than the host", schemas.ComputeResources{Memory: "64TiB"}, sdk.ErrResourceExhausted, "memory"},
			{"memory bandwidth without resctrl", schemas.ComputeResources{MemoryBandwidth: "2GB/s"}, sdk.ErrUnsupported, "resctrl"},
			{"a unit that does not exist", schemas.ComputeResources{Memory: "12XB"}, sdk.ErrBadRequest, "memory"},
			{"a disk too small for a file system", schemas.ComputeResources{Disk: "8MiB"}, sdk.ErrBadRequest, "compute.disk 8.0 mib is below the minimum"},
			{"more disk than the host", schemas.ComputeResources{Disk: "1000TiB"}, sdk.ErrResourceExhausted, "disk"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				c := tt.compute
				_, err := group.CreateSandbox(ctx, "it-res-refused", sdk.SandboxOptions{ComputeResources: &c})
				require.ErrorIs(t, err, tt.want)
				require.Contains(t, strings.ToLower(err.Error()), tt.text, "want the error to name the cause")
			})
		}
	})

	t.Run("a request that does not fit in what is left is refused", func(t *testing.T) {
		host, err := env.docker.Host(ctx)
		require.NoError(t, err)
		// The three sandboxes above hold at least one core, so all the
		// host's cores no longer fit.
		all := &schemas.ComputeResources{CPU: strconv.Itoa(host.CPUs)}
		_, err = group.CreateSandbox(ctx, "it-res-unschedulable", sdk.SandboxOptions{ComputeResources: all})
		require.ErrorIs(t, err, sdk.ErrResourceExhausted, "want refused for CPU")
		require.ErrorContains(t, err, "does not fit: cpu: asked")
		require.Equal(t, 3, groupContainers(t, "it-res"), "containers in the group: want the refused sandbox to leave none")
		// A group that allows overcommit takes it.
		over := newGroup(t, sdk.GroupConfig{ID: "it-res-over", Overcommit: 2})
		sb := startSandbox(t, over, "it-res-over-all", sdk.SandboxOptions{ComputeResources: all})
		require.Equal(t, int64(host.CPUs)*1e9, sb.Status().Resources.NanoCPUs, "nano-CPUs: want all %d cores under overcommit", host.CPUs)
		require.NoError(t, over.End(ctx))
		// Once released, what that group held is free again: without the
		// release, a second such sandbox would not fit even under overcommit.
		again := newGroup(t, sdk.GroupConfig{ID: "it-res-over-again", Overcommit: 2})
		startSandbox(t, again, "it-res-over-again", sdk.SandboxOptions{ComputeResources: all})
		require.NoError(t, again.End(ctx))
	})

	t.Run("pinning keeps a sandbox on its cores", func(t *testing.T) {
		sb := startSandbox(t, group, "it-res-pinned", sdk.SandboxOptions{ComputeResources: &schemas.ComputeResources{CPUSet: "0"}})
		obs := send(t, sb, `{"terminal_tools.run": {"args": {"command": "python3 -c 'import os; print(sorted(os.sched_getaffinity(0)))'; cat /sys/fs/cgroup/cpuset/cpuset.cpus 2>/dev/null || cat /sys/fs/cgroup/cpuset.cpus.effective"}}}`)
		mustOK(t, obs[0])
		require.Equal(t, []string{"[0]", "0"}, strings.Fields(obs[0].Stdout), "want affinity [0] and cpuset 0")
		require.NoError(t, sb.End(ctx))
	})

	t.Run("best-effort memory bandwidth starts and says it is not enforced", func(t *testing.T) {
		sb := startSandbox(t, group, "it-res-bw", sdk.SandboxOptions{ComputeResources: &schemas.ComputeResources{
			MemoryBandwidth: "2GB/s", MemoryBandwidthBestEffort: true,
		}})
		r := sb.Status().Resources
		require.False(t, r.MemoryBandwidthEnforced, "%+v, want 2 GB/s recorded as not enforced", r)
		require.Equal(t, int64(2e9), r.MemoryBandwidthBytes, "%+v, want 2 GB/s recorded as not enforced", r)
	})

	t.Run("stats report use against the limits", func(t *testing.T) {
		u, err := neighbour.Stats(ctx)
		require.NoError(t, err)
		require.Positive(t, u.MemoryBytes, "live memory use")
		require.Positive(t, u.PIDs, "live process count")
		require.Equal(t, int64(256<<20), u.Limits.MemoryBytes, "memory limit")
	})
}

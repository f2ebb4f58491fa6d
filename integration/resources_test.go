package integration

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/sdk"
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
	if small == nil || rel == nil || neighbour == nil {
		t.Fatal("got a missing initial sandbox, want all three started by Start")
	}

	t.Run("initial sandboxes report their resolved limits", func(t *testing.T) {
		host, err := env.docker.Host(ctx)
		if err != nil {
			t.Fatal(err)
		}
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
			if st.State != schemas.StateRunning || r.NanoCPUs != tt.nano || r.PIDs != tt.pids || len(st.Databases) != tt.databases {
				t.Errorf("%s: got %s %+v databases %v, want running with %d nano-CPUs, %d PIDs, %d grants", st.ID, st.State, r, st.Databases, tt.nano, tt.pids, tt.databases)
			}
			if diff := r.MemoryBytes - tt.mem; diff < -1<<20 || diff > 1<<20 {
				t.Errorf("%s: got %d bytes of memory, want about %d", st.ID, r.MemoryBytes, tt.mem)
			}
		}
	})

	t.Run("a CPU-bound loop in a 0.5-core sandbox gets about half a core", func(t *testing.T) {
		// Burn for 4 s of wall time and report the CPU time the loop got.
		obs := send(t, small, `{"terminal_tools.run": {"args": {"command": "python3 -c 'import time,os\nend=time.time()+4\nwhile time.time()<end: pass\nt=os.times()\nprint(t.user+t.system)'", "timeout_seconds": 30}}}`)
		mustOK(t, obs[0])
		cpu, err := strconv.ParseFloat(strings.TrimSpace(obs[0].Stdout), 64)
		if err != nil {
			t.Fatalf("got %q, want CPU seconds", obs[0].Stdout)
		}
		if share := cpu / 4; share < 0.35 || share > 0.65 {
			t.Fatalf("got %.2f of a core, want about 0.5", share)
		}
		t.Logf("CPU share in a 0.5-core sandbox: %.2f", cpu/4)
	})

	t.Run("a memory hog is killed while the neighbour keeps answering", func(t *testing.T) {
		obs := send(t, small, `{"terminal_tools.run": {"args": {"command": "python3 -c 'b=bytearray(512*1024*1024); print(len(b))'", "timeout_seconds": 60}}}`)
		if obs[0].ExitCode == nil || *obs[0].ExitCode != 137 {
			t.Fatalf("got %+v, want the hog killed (exit 137)", obs[0])
		}
		obs = send(t, neighbour, `{"terminal_tools.run": {"args": {"command": "echo alive"}}}`)
		mustOK(t, obs[0])
		obs = send(t, small, `{"terminal_tools.run": {"args": {"command": "echo still here"}}}`)
		if !strings.Contains(obs[0].Stdout, "still here") {
			t.Fatalf("got %+v, want the sandbox to go on after the kill", obs[0])
		}
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
		if err != nil {
			t.Fatal(err)
		}
		obs := send(t, small, fmt.Sprintf(`[
			{"tool": "filesystem_tools.write_file", "args": {"path": "bomb.py", "content": %q}},
			{"tool": "terminal_tools.run_python", "args": {"script_path": "bomb.py", "timeout_seconds": 60}}
		]`, data))
		mustOK(t, obs[0])
		if out := obs[1].Stdout; !strings.Contains(out, "fork refused after") {
			t.Fatalf("got %q, want fork refused at the PIDs limit", out)
		}
		if !hasLimitHit(obs[1], schemas.LimitPIDs) {
			t.Errorf("got limits hit %+v, want the refused fork reported", obs[1].LimitsHit)
		}
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
				if !errors.Is(err, tt.want) || !strings.Contains(strings.ToLower(err.Error()), tt.text) {
					t.Fatalf("got %v, want %v naming %q", err, tt.want, tt.text)
				}
			})
		}
	})

	t.Run("a request that does not fit in what is left is refused", func(t *testing.T) {
		host, err := env.docker.Host(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// The three sandboxes above hold at least one core, so all the
		// host's cores no longer fit.
		all := &schemas.ComputeResources{CPU: strconv.Itoa(host.CPUs)}
		_, err = group.CreateSandbox(ctx, "it-res-unschedulable", sdk.SandboxOptions{ComputeResources: all})
		if !errors.Is(err, sdk.ErrResourceExhausted) || !strings.Contains(err.Error(), "does not fit: cpu: asked") {
			t.Fatalf("got %v, want refused for CPU", err)
		}
		if n := groupContainers(t, "it-res"); n != 3 {
			t.Fatalf("got %d containers in the group, want the refused sandbox to leave none", n)
		}
		// A group that allows overcommit takes it.
		over := newGroup(t, sdk.GroupConfig{ID: "it-res-over", Overcommit: 2})
		sb := startSandbox(t, over, "it-res-over-all", sdk.SandboxOptions{ComputeResources: all})
		if got := sb.Status().Resources.NanoCPUs; got != int64(host.CPUs)*1e9 {
			t.Fatalf("got %d nano-CPUs, want all %d cores under overcommit", got, host.CPUs)
		}
		if err := over.End(ctx); err != nil {
			t.Fatal(err)
		}
		// Once released, what that group held is free again: without the
		// release, a second such sandbox would not fit even under overcommit.
		again := newGroup(t, sdk.GroupConfig{ID: "it-res-over-again", Overcommit: 2})
		startSandbox(t, again, "it-res-over-again", sdk.SandboxOptions{ComputeResources: all})
		if err := again.End(ctx); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("pinning keeps a sandbox on its cores", func(t *testing.T) {
		sb := startSandbox(t, group, "it-res-pinned", sdk.SandboxOptions{ComputeResources: &schemas.ComputeResources{CPUSet: "0"}})
		obs := send(t, sb, `{"terminal_tools.run": {"args": {"command": "python3 -c 'import os; print(sorted(os.sched_getaffinity(0)))'; cat /sys/fs/cgroup/cpuset/cpuset.cpus 2>/dev/null || cat /sys/fs/cgroup/cpuset.cpus.effective"}}}`)
		mustOK(t, obs[0])
		if lines := strings.Fields(obs[0].Stdout); len(lines) != 2 || lines[0] != "[0]" || lines[1] != "0" {
			t.Fatalf("got %q, want affinity [0] and cpuset 0", obs[0].Stdout)
		}
		if err := sb.End(ctx); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("best-effort memory bandwidth starts and says it is not enforced", func(t *testing.T) {
		sb := startSandbox(t, group, "it-res-bw", sdk.SandboxOptions{ComputeResources: &schemas.ComputeResources{
			MemoryBandwidth: "2GB/s", MemoryBandwidthBestEffort: true,
		}})
		r := sb.Status().Resources
		if r.MemoryBandwidthEnforced || r.MemoryBandwidthBytes != 2e9 {
			t.Fatalf("got %+v, want 2 GB/s recorded as not enforced", r)
		}
	})

	t.Run("stats report use against the limits", func(t *testing.T) {
		u, err := neighbour.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if u.MemoryBytes <= 0 || u.PIDs <= 0 || u.Limits.MemoryBytes != 256<<20 {
			t.Fatalf("got %+v, want live memory and process use with the 256 MiB limit", u)
		}
	})
}

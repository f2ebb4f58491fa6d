package integration

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/sdk"
)

// cpuBurn runs two busy loops for three seconds inside a sandbox and prints,
// as JSON, the CPU quota its cgroup sets (in cores, null when none), the CPU
// time the whole cgroup used meanwhile, the wall time, and how often the
// kernel throttled the cgroup to its quota. It reads cgroup v1 and v2.
const cpuBurn = `import json, os, time

def fields(*paths):
    for p in paths:
        try:
            with open(p) as f:
                return f.read().split()
        except OSError:
            pass
    return None

def quota():
    q = fields('/sys/fs/cgroup/cpu/cpu.cfs_quota_us')
    p = fields('/sys/fs/cgroup/cpu/cpu.cfs_period_us')
    if q and p:
        return None if int(q[0]) < 0 else int(q[0]) / int(p[0])
    m = fields('/sys/fs/cgroup/cpu.max')
    if m and m[0] != 'max':
        return int(m[0]) / int(m[1])
    return None

def stat(name):
    s = fields('/sys/fs/cgroup/cpu/cpu.stat', '/sys/fs/cgroup/cpu.stat') or []
    return dict(zip(s[::2], map(int, s[1::2]))).get(name, 0)

def used():
    u = fields('/sys/fs/cgroup/cpuacct/cpuacct.usage', '/sys/fs/cgroup/cpu,cpuacct/cpuacct.usage')
    if u:
        return int(u[0]) / 1e9
    return stat('usage_usec') / 1e6

cpu0, thr0, wall0 = used(), stat('nr_throttled'), time.monotonic()
kids = []
for _ in range(2):
    pid = os.fork()
    if pid == 0:
        end = time.monotonic() + 3
        while time.monotonic() < end:
            pass
        os._exit(0)
    kids.append(pid)
for pid in kids:
    os.waitpid(pid, 0)
print(json.dumps({'quota': quota(), 'cpu': used() - cpu0, 'wall': time.monotonic() - wall0,
                  'throttled': stat('nr_throttled') - thr0}))
`

// cpuUse is what cpuBurn reports.
type cpuUse struct {
	Quota     *float64 `json:"quota"`     // cores, nil when the cgroup has no quota
	CPU       float64  `json:"cpu"`       // CPU seconds the cgroup used
	Wall      float64  `json:"wall"`      // seconds of wall time
	Throttled int64    `json:"throttled"` // periods in which the quota held the cgroup back
}

// burnCPU runs cpuBurn in sb and returns its report.
func burnCPU(t *testing.T, sb *sdk.Sandbox) cpuUse {
	t.Helper()
	script, err := json.Marshal(cpuBurn)
	require.NoError(t, err)
	obs := send(t, sb, fmt.Sprintf(`[
		{"tool": "filesystem_tools.write_file", "args": {"path": "cpuburn.py", "content": %s}},
		{"tool": "terminal_tools.run", "args": {"command": "python3 cpuburn.py", "timeout_seconds": 60}}
	]`, script))
	mustOK(t, obs[0])
	mustOK(t, obs[1])
	var u cpuUse
	require.NoError(t, json.Unmarshal([]byte(obs[1].Stdout), &u), "cpuburn.py printed %q", obs[1].Stdout)
	return u
}

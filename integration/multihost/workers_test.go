package multihost

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/services/auth"
)

// hostLostAfter is how long a host may go silent before the other host's
// worker marks it lost: longer than the worker's restart takes here.
const hostLostAfter = "30s"

// startWorker starts the orchestrator worker of e as a process: DOCKER_HOST
// at e, -host e.host, the cluster's URL list, control credentials, the run's
// system label, sandboxes without a network reaching NATS through the
// cluster's socket directory (all three nodes' sockets, node's first). Its directories outlive a kill, so that the
// restarted worker finds the credentials of the sandboxes it runs.
func startWorker(t *testing.T, bin string, c *cluster, e *engine, system, node string) *proc {
	t.Helper()
	dir := t.TempDir()
	creds := c.credsFile(t, dir, "worker "+e.host, auth.RoleControl)
	credsDir, egressDir := filepath.Join(dir, "creds"), filepath.Join(dir, "egress")
	for _, d := range []string{credsDir, egressDir} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	p := &proc{
		name: "worker-" + e.host,
		bin:  bin,
		args: []string{
			"-name", "worker-" + e.host, "-host", e.host, "-system", system,
			"-nats", c.urlList(), "-creds", creds, "-replicas", "3",
			"-nats-socket", c.sockDir, "-sandbox-nats", c.sandboxURLList(node),
			"-creds-dir", credsDir, "-egress-dir", egressDir,
			"-disks", "", "-ready-timeout", "90s",
			"-host-heartbeat", "1s", "-host-lost-after", hostLostAfter,
			"-image-gc-interval", "0",
		},
		env: []string{"DOCKER_HOST=" + e.url},
		log: filepath.Join(dir, "worker.log"),
		// A worker that starts while the cluster elects a leader gives up
		// (its setup times out) and is started again, as in production.
		supervise: true,
	}
	p.start(t)
	t.Cleanup(p.stop)
	return p
}

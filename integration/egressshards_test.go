package integration

import (
	"context"
	"net"
	"net/netip"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/sdk"
)

// networkOf returns the one network a container is on and its address.
func networkOf(t *testing.T, container string) (string, string) {
	t.Helper()
	st, err := env.docker.Inspect(t.Context(), container)
	require.NoError(t, err)
	require.Len(t, st.IPs, 1, "networks of %s: %v", container, st.IPs)
	for n, ip := range st.IPs {
		return n, ip
	}
	return "", ""
}

// TestEgressShards runs sandboxes with open egress on a worker whose
// bridges hold two containers each: the first two join the first bridge,
// which the worker makes on its address pool, the third a second one;
// each bridge keeps inter-container traffic off, so no sandbox reaches
// another's listening port, on its bridge or on the other; a sandbox on
// the second bridge still has a route out (a server on the host); and the
// second bridge goes once it is empty and not needed next.
func TestEgressShards(t *testing.T) {
	// A system of its own (NATS, worker, system label, bridges): it runs
	// beside the other parallel tests (doc.go).
	t.Parallel()
	ctx := t.Context()
	cfg := env.worker
	cfg.Worker = "it-shards-worker"
	cfg.System = env.network + "-shards"
	cfg.EgressNetwork = env.network + "-shard"
	cfg.EgressShardCapacity = 2
	cfg.DisksDir = ""
	nc := ownSystem(t, cfg)

	g, err := sdk.NewSandboxGroup(sdk.GroupConfig{ID: "it-shards", ComputeResources: schemas.ComputeResources{Memory: "256MiB"}}, sdk.WithConn(nc), sdk.WithCommandTimeout(5*time.Minute))
	require.NoError(t, err)
	require.NoError(t, g.Start(ctx))
	t.Cleanup(func() { assert.NoError(t, g.End(context.Background())) })
	open := sdk.SandboxOptions{Egress: &schemas.Egress{Policy: schemas.EgressOpen}}
	var sbs []*sdk.Sandbox
	var nets, ips []string
	for _, id := range []string{"it-shard-1", "it-shard-2", "it-shard-3"} {
		sb, err := g.CreateSandbox(ctx, id, open)
		require.NoError(t, err)
		require.NoError(t, sb.Start(ctx))
		n, ip := networkOf(t, sb.Status().Container)
		sbs, nets, ips = append(sbs, sb), append(nets, n), append(ips, ip)
	}
	shard0, shard1 := cfg.EgressNetwork, cfg.EgressNetwork+"-1"
	assert.Equal(t, []string{shard0, shard0, shard1}, nets, "sandboxes 1-2 on the first bridge, 3 on the second")

	pool := netip.MustParsePrefix(cfg.EgressAddressPool.Base)
	for _, n := range []string{shard0, shard1} {
		out, err := exec.CommandContext(ctx, "docker", "network", "inspect", "-f",
			`{{index .Options "com.docker.network.bridge.enable_icc"}} {{range .IPAM.Config}}{{.Subnet}}{{end}} {{index .Labels "dev.sandox.egress-shard"}}`, n).Output()
		require.NoError(t, err)
		f := strings.Fields(string(out))
		require.Len(t, f, 3, "%s: %s", n, out)
		assert.Equal(t, "false", f[0], "%s: inter-container traffic off", n)
		subnet := netip.MustParsePrefix(f[1])
		assert.True(t, pool.Contains(subnet.Addr()) && subnet.Bits() == cfg.EgressAddressPool.Size, "%s: subnet %s is a /%d of %s", n, subnet, cfg.EgressAddressPool.Size, pool)
		for i, ip := range ips {
			if nets[i] == n {
				assert.True(t, subnet.Contains(netip.MustParseAddr(ip)), "sandbox %d's address %s in %s", i+1, ip, subnet)
			}
		}
	}

	// Every sandbox listens on every address it has.
	for i, sb := range sbs {
		shell(t, sb, "nohup python3 -m http.server 8000 --bind 0.0.0.0 >/dev/null 2>&1 &")
		own := net.JoinHostPort(ips[i], "8000")
		require.Eventually(t, func() bool { return tryConnect(t, sb, own)[own] == "ok" }, 10*time.Second, 200*time.Millisecond, "sandbox %d listens on %s", i+1, own)
	}
	t.Run("no sandbox reaches another's port", func(t *testing.T) {
		tests := []struct {
			name     string
			from, to int
		}{
			{"on one bridge", 1, 0},
			{"from the second bridge to the first", 2, 0},
			{"from the first bridge to the second", 0, 2},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				addr := net.JoinHostPort(ips[tt.to], "8000")
				got := tryConnect(t, sbs[tt.from], addr)[addr]
				assert.Contains(t, []string{"ETIMEDOUT", "timed out", "ECONNREFUSED", "EHOSTUNREACH", "ENETUNREACH"}, got, "sandbox %d to %s", tt.from+1, addr)
			})
		}
	})
	t.Run("the second bridge has a route out", func(t *testing.T) {
		gw, err := env.docker.EnsureNetwork(ctx, shard1, nil)
		require.NoError(t, err)
		u := hostServer(t, gw, "out")
		assert.Equal(t, fetched{Status: 200, Body: "out"}, fetch(t, sbs[2], u))
	})
	t.Run("an empty second bridge goes", func(t *testing.T) {
		// While the first is full, the second stays even when empty: it
		// is where the next sandbox goes.
		require.NoError(t, sbs[2].End(ctx))
		assert.True(t, hasNetwork(t, shard1), "the next sandbox's bridge stays")
		// Now the first bridge has room: the second is not needed.
		require.NoError(t, sbs[0].End(ctx))
		assert.False(t, hasNetwork(t, shard1), "the empty second bridge is removed")
		assert.True(t, hasNetwork(t, shard0), "the first bridge stays")
	})
}

// hasNetwork says whether the engine has the network name.
func hasNetwork(t *testing.T, name string) bool {
	t.Helper()
	nets, err := env.docker.Networks(t.Context())
	require.NoError(t, err)
	for _, n := range nets {
		if n.Name == name {
			return true
		}
	}
	return false
}

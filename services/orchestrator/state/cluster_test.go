package state

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/internal/natstest"
	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/natsd"
)

// freePort returns a TCP port free on loopback now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startCluster starts n embedded NATS servers routed to each other, with
// clustered JetStream, and returns them with a client URL list of all.
func startCluster(t *testing.T, n int) ([]*server.Server, string) {
	t.Helper()
	ports := make([]int, n)
	routes := make([]string, n)
	for i := range n {
		ports[i] = freePort(t)
		routes[i] = fmt.Sprintf("nats-route://127.0.0.1:%d", ports[i])
	}
	servers := make([]*server.Server, n)
	urls := make([]string, n)
	for i := range n {
		// Each node waits for the others' routes only once all listen,
		// so start them all before waiting.
		s := natstest.Start(t, func(c *natsd.Config) {
			c.ServerName = fmt.Sprintf("node-%d", i)
			c.Cluster = natsd.Cluster{Name: "unit", Host: "127.0.0.1", Port: ports[i], Routes: routes}
		})
		servers[i], urls[i] = s, s.ClientURL()
	}
	return servers, strings.Join(urls, ",")
}

// TestSetupReplicatesOnACluster sets sandox's streams and buckets up on a
// three-node cluster: each gets three replicas, and the command stream and
// the buckets keep working when one node goes.
func TestSetupReplicatesOnACluster(t *testing.T) {
	servers, urls := startCluster(t, 3)
	nc, err := nats.Connect(urls, nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	require.Eventually(t, func() bool { return len(nc.Servers()) >= 3 }, 10*time.Second, 50*time.Millisecond, "the cluster's servers advertised")
	assert.Equal(t, 3, Replicas(nc, 0))
	assert.Equal(t, 2, Replicas(nc, 2), "an explicit count wins")

	js, err := jetstream.New(nc)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return Setup(t.Context(), js) == nil }, 30*time.Second, 200*time.Millisecond, "setup once JetStream has a leader")
	for _, name := range []string{schemas.CommandStream, schemas.EventStream, "KV_" + schemas.SandboxBucket, "KV_" + schemas.GroupBucket, "KV_" + schemas.LedgerBucket} {
		s, err := js.Stream(t.Context(), name)
		require.NoError(t, err, name)
		assert.Equal(t, 3, s.CachedInfo().Config.Replicas, "replicas of %s", name)
	}

	// One node goes: two of three still make a quorum.
	servers[0].Shutdown()
	servers[0].WaitForShutdown()
	require.Eventually(t, func() bool {
		kv, err := js.KeyValue(t.Context(), schemas.SandboxBucket)
		if err != nil {
			return false
		}
		_, err = kv.Put(t.Context(), "sb-1", []byte(`{}`))
		return err == nil
	}, 30*time.Second, 200*time.Millisecond, "a bucket write with one node down")
	require.Eventually(t, func() bool {
		_, err := js.Publish(t.Context(), schemas.CommandSubject(schemas.CreateGroup), []byte(`{}`), jetstream.WithMsgID("after-loss"))
		return err == nil
	}, 30*time.Second, 200*time.Millisecond, "a command stored with one node down")
}

package main

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/internal/natstest"
	"github.com/sandox/sandox/services/natsd"
)

func TestDialTarget(t *testing.T) {
	url, opts := dialTarget("nats://127.0.0.1:4222")
	assert.Equal(t, "nats://127.0.0.1:4222", url, "a network URL is left alone")
	assert.Empty(t, opts)
	url, opts = dialTarget("unix:///run/a.sock,unix:///run/b.sock")
	assert.Equal(t, "nats://nats-socket-0:4222,nats://nats-socket-1:4222", url)
	assert.Len(t, opts, 3, "the socket dialer, no advertised servers, the first socket first")
}

// TestSocketFailover serves NATS on two Unix sockets of two real servers
// (as two nodes of a cluster would) and connects through both, as an
// executor given a socket list does: when its server dies, the connection
// moves to the other socket and its subscription answers again.
func TestSocketFailover(t *testing.T) {
	dir := t.TempDir()
	var servers []*server.Server
	var list []string
	for _, name := range []string{"a", "b"} {
		socket := filepath.Join(dir, name+".sock")
		s := natstest.Start(t, func(c *natsd.Config) { c.Socket = socket })
		servers = append(servers, s)
		list = append(list, unixScheme+socket)
	}
	url, dial := dialTarget(list[0] + "," + list[1])
	reconnected := make(chan struct{}, 1)
	nc, err := nats.Connect(url, append(dial, nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond),
		nats.ReconnectHandler(func(*nats.Conn) { reconnected <- struct{}{} }))...)
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	_, err = nc.Subscribe("sandbox.sb.ping", func(m *nats.Msg) { _ = m.Respond([]byte("pong")) })
	require.NoError(t, err)
	require.NoError(t, nc.Flush())

	// The first socket's server holds the connection, and dies.
	on, other := 0, 1
	require.Equal(t, servers[on].ID(), nc.ConnectedServerId(), "the first socket of the list")
	servers[on].Shutdown()
	select {
	case <-reconnected:
	case <-time.After(10 * time.Second):
		t.Fatal("no reconnect to the other socket")
	}
	client, err := nats.Connect(servers[other].ClientURL())
	require.NoError(t, err)
	t.Cleanup(client.Close)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		m, err := client.Request("sandbox.sb.ping", nil, time.Second)
		if assert.NoError(c, err) {
			assert.Equal(c, "pong", string(m.Data))
		}
	}, 10*time.Second, 100*time.Millisecond, "the subscription answers through the other socket")
}

package multihost

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/services/auth"
	"github.com/sandox/sandox/services/orchestrator/egressnet"
	"github.com/sandox/sandox/services/orchestrator/state"
)

// cluster is a three-node NATS cluster of sandox-nats processes in
// operator mode under one authority, each node with its own store. The
// nodes also serve a Unix socket each (nats-<n>.sock in one directory), the
// sandboxes' way to the bus: an executor is given all three and moves to
// another when its node dies.
type cluster struct {
	auth    *auth.Authority
	nodes   []*proc
	names   []string
	urls    []string // client URL of each node
	sockDir string   // holds every node's socket, bound into sandboxes
}

// urlList is every node's client URL, comma-separated, as components take it.
func (c *cluster) urlList() string { return strings.Join(c.urls, ",") }

// sandboxURLList is every node's socket as a sandbox sees it (the socket
// directory bound at egressnet.SandboxNATSDir), comma-separated, node
// prefer's first: an executor connects through the first and moves on
// when its node dies.
func (c *cluster) sandboxURLList(prefer string) string {
	names := append([]string{prefer}, slices.DeleteFunc(slices.Clone(c.names), func(n string) bool { return n == prefer })...)
	urls := make([]string, len(names))
	for i, name := range names {
		urls[i] = "unix://" + egressnet.SandboxNATSDir + "/" + name + ".sock"
	}
	return strings.Join(urls, ",")
}

// startCluster builds sandox-nats into bin and starts three nodes routed to
// each other.
func startCluster(t *testing.T, bin string) *cluster {
	t.Helper()
	a, err := auth.NewAuthority()
	require.NoError(t, err)
	authDir := filepath.Join(t.TempDir(), "auth")
	require.NoError(t, a.Save(authDir))
	// Sandboxes (another uid) connect to the socket in this directory.
	sockDir, err := os.MkdirTemp("", "sandox-mh-sock")
	require.NoError(t, err)
	require.NoError(t, os.Chmod(sockDir, 0o755))
	t.Cleanup(func() { os.RemoveAll(sockDir) })

	c := &cluster{auth: a, sockDir: sockDir}
	const n = 3
	clientPorts, routePorts, routes := make([]int, n), make([]int, n), make([]string, n)
	for i := range n {
		clientPorts[i], routePorts[i] = freePort(t), freePort(t)
		routes[i] = fmt.Sprintf("nats-route://127.0.0.1:%d", routePorts[i])
	}
	logs := t.TempDir()
	for i := range n {
		name := fmt.Sprintf("nats-%d", i+1)
		args := []string{
			"-name", name, "-host", "127.0.0.1", "-port", strconv.Itoa(clientPorts[i]),
			"-store", filepath.Join(t.TempDir(), "store"), "-auth", authDir,
			"-cluster-name", "multihost", "-cluster-host", "127.0.0.1", "-cluster-port", strconv.Itoa(routePorts[i]),
			"-routes", strings.Join(routes, ","),
		}
		args = append(args, "-socket", filepath.Join(sockDir, name+".sock"))
		p := &proc{name: name, bin: bin, args: args, log: filepath.Join(logs, name+".log")}
		p.start(t)
		t.Cleanup(p.stop)
		c.nodes, c.names = append(c.nodes, p), append(c.names, name)
		c.urls = append(c.urls, fmt.Sprintf("nats://127.0.0.1:%d", clientPorts[i]))
	}
	return c
}

// credsFile writes the credentials of a new identity of role into dir and
// returns the file's path.
func (c *cluster) credsFile(t *testing.T, dir, name string, role auth.Role) string {
	t.Helper()
	creds, err := c.auth.Mint(name, role, "")
	require.NoError(t, err)
	data, err := creds.File()
	require.NoError(t, err)
	p := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".creds")
	require.NoError(t, os.WriteFile(p, data, 0o600))
	return p
}

// connect connects as a new identity of role. The URLs are tried in the
// order given (first names the node to prefer), and the connection
// reconnects to any node for ever.
func (c *cluster) connect(t *testing.T, role auth.Role, name string, urls ...string) *nats.Conn {
	t.Helper()
	if len(urls) == 0 {
		urls = c.urls
	}
	creds, err := c.auth.Mint(name, role, "")
	require.NoError(t, err)
	var nc *nats.Conn
	eventually(t, 30*time.Second, "connect "+name, func() (err error) {
		nc, err = nats.Connect(strings.Join(urls, ","), creds.Option(), nats.Name(name), nats.DontRandomize(),
			nats.MaxReconnects(-1), nats.ReconnectWait(100*time.Millisecond))
		return err
	})
	t.Cleanup(nc.Close)
	return nc
}

// setup waits for the cluster to elect its JetStream leader and creates
// sandox's streams and buckets with three replicas, as a worker does.
func (c *cluster) setup(t *testing.T, js jetstream.JetStream) {
	t.Helper()
	eventually(t, 60*time.Second, "streams and buckets on the cluster", func() error {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		return state.SetupWith(ctx, js, state.DefaultRetention(), 3)
	})
}

// streamLeader names the node that leads stream.
func streamLeader(ctx context.Context, js jetstream.JetStream, stream string) (string, error) {
	s, err := js.Stream(ctx, stream)
	if err != nil {
		return "", err
	}
	info, err := s.Info(ctx)
	if err != nil {
		return "", err
	}
	if info.Cluster == nil {
		return "", fmt.Errorf("stream %s: not clustered", stream)
	}
	return info.Cluster.Leader, nil
}

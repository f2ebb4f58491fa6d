package integration

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/sdk"
)

// connectScript tries a TCP connection to each "host:port" argument and
// prints one JSON object: address to "ok" or the error's name.
const connectScript = `
import errno, json, socket, sys
out = {}
for a in sys.argv[1:]:
    h, p = a.rsplit(":", 1)
    try:
        socket.create_connection((h, int(p)), timeout=3).close()
        out[a] = "ok"
    except OSError as e:
        out[a] = errno.errorcode.get(e.errno, str(e))
print(json.dumps(out))
`

// tryConnect runs connectScript in sb and returns what it printed.
func tryConnect(t *testing.T, sb *sdk.Sandbox, addrs ...string) map[string]string {
	t.Helper()
	cmd := "cat > /tmp/connect.py <<'EOF'\n" + connectScript + "\nEOF\npython3 /tmp/connect.py " + strings.Join(addrs, " ")
	var got map[string]string
	out := shell(t, sb, cmd)
	require.NoError(t, json.Unmarshal([]byte(out), &got), out)
	return got
}

// TestNetworkIsolation checks from inside real sandboxes that a sandbox has
// no network: only its loopback, no route to a neighbour, the host's
// services, or NATS's TCP port; it reaches NATS through its socket alone.
func TestNetworkIsolation(t *testing.T) {
	group := newGroup(t, sdk.GroupConfig{ID: "it-net", ComputeResources: schemas.ComputeResources{Memory: "256MiB"}})
	neighbour := startSandbox(t, group, "it-net-a", sdk.SandboxOptions{})
	probe := startSandbox(t, group, "it-net-b", sdk.SandboxOptions{})

	// A host service on the test network's gateway, where NATS listens too.
	u, err := url.Parse(env.url)
	require.NoError(t, err)
	ln, err := net.Listen("tcp", net.JoinHostPort(u.Hostname(), "0"))
	require.NoError(t, err)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "host") })}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	hostService := ln.Addr().String()
	resp, err := http.Get("http://" + hostService)
	require.NoError(t, err, "the host service must answer the test itself")
	resp.Body.Close()

	// The neighbour listens on every address it has.
	shell(t, neighbour, "nohup python3 -m http.server 8000 --bind 0.0.0.0 >/dev/null 2>&1 &")
	require.Eventually(t, func() bool {
		return tryConnect(t, neighbour, "127.0.0.1:8000")["127.0.0.1:8000"] == "ok"
	}, 10e9, 2e8, "the neighbour's server must listen")

	t.Run("only a loopback interface", func(t *testing.T) {
		out := shell(t, probe, `python3 -c 'import socket; print(" ".join(n for _, n in socket.if_nameindex()))'`)
		assert.Equal(t, "lo", strings.TrimSpace(out))
	})
	t.Run("no connection leaves the sandbox", func(t *testing.T) {
		tests := []struct{ name, addr string }{
			{"NATS's TCP port", u.Host},
			{"a host service on the gateway", hostService},
			{"the neighbour's port, by its loopback", "127.0.0.1:8000"},
			{"the Docker default bridge's host address", "172.17.0.1:22"},
			{"an outside address", "192.0.2.1:80"},
		}
		addrs := make([]string, len(tests))
		for i, tt := range tests {
			addrs[i] = tt.addr
		}
		got := tryConnect(t, probe, addrs...)
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				assert.Contains(t, []string{"ENETUNREACH", "ECONNREFUSED"}, got[tt.addr], "connect to %s", tt.addr)
			})
		}
	})
	t.Run("both still work over their sockets", func(t *testing.T) {
		assert.Equal(t, "ok", strings.TrimSpace(shell(t, neighbour, "echo ok")))
		assert.Equal(t, "ok", strings.TrimSpace(shell(t, probe, "echo ok")))
	})
}

package integration

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/sdk"
)

// fetchScript GETs its argument with urllib (which honours HTTP_PROXY) and
// prints {"status", "body"} or {"error"}.
const fetchScript = `
import json, sys, urllib.request, urllib.error
try:
    with urllib.request.urlopen(sys.argv[1], timeout=5) as r:
        print(json.dumps({"status": r.status, "body": r.read().decode()}))
except urllib.error.HTTPError as e:
    print(json.dumps({"status": e.code, "body": e.read().decode()}))
except Exception as e:
    print(json.dumps({"error": str(e)}))
`

type fetched struct {
	Status int    `json:"status"`
	Body   string `json:"body"`
	Error  string `json:"error"`
}

func fetch(t *testing.T, sb *sdk.Sandbox, target string) fetched {
	t.Helper()
	out := shell(t, sb, "cat > /tmp/fetch.py <<'EOF'\n"+fetchScript+"\nEOF\npython3 /tmp/fetch.py "+target)
	var f fetched
	require.NoError(t, json.Unmarshal([]byte(out), &f), out)
	return f
}

// hostServer serves name over HTTP on host (an address of this machine,
// never an outside one) and returns its URL.
func hostServer(t *testing.T, host, name string) string {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	require.NoError(t, err)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, name) })}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return "http://" + ln.Addr().String()
}

// TestEgressPolicies runs an HTTP request from sandboxes under each egress
// policy to servers the test runs on this machine, outside the sandboxes:
// none reaches nothing, an allowlist only what it lists (through the
// proxy), open reaches the server but not a neighbour sandbox.
func TestEgressPolicies(t *testing.T) {
	u, err := url.Parse(env.url)
	require.NoError(t, err)
	gateway := u.Hostname()
	listed := hostServer(t, gateway, "listed")
	unlisted := hostServer(t, "127.0.0.2", "unlisted")

	group := newGroup(t, sdk.GroupConfig{ID: "it-egress", ComputeResources: schemas.ComputeResources{Memory: "256MiB"}})
	none := startSandbox(t, group, "it-egress-none", sdk.SandboxOptions{})
	allow := startSandbox(t, group, "it-egress-allow", sdk.SandboxOptions{
		Egress: &schemas.Egress{Policy: schemas.EgressAllowlist, Allow: []string{gateway + "/32"}},
	})
	open := startSandbox(t, group, "it-egress-open", sdk.SandboxOptions{Egress: &schemas.Egress{Policy: schemas.EgressOpen}})

	t.Run("none reaches nothing", func(t *testing.T) {
		f := fetch(t, none, listed)
		assert.Contains(t, f.Error, "Network is unreachable")
		assert.Equal(t, schemas.EgressNone, none.Status().Egress.Policy)
	})
	t.Run("allowlist lets the listed server through", func(t *testing.T) {
		f := fetch(t, allow, listed)
		assert.Equal(t, fetched{Status: 200, Body: "listed"}, f)
	})
	t.Run("allowlist refuses another server", func(t *testing.T) {
		f := fetch(t, allow, unlisted)
		assert.Equal(t, http.StatusForbidden, f.Status)
		assert.Contains(t, f.Body, "not on the sandbox's egress allowlist")
	})
	t.Run("allowlist allows no direct connection", func(t *testing.T) {
		got := tryConnect(t, allow, u.Host)
		assert.Equal(t, "ENETUNREACH", got[u.Host])
	})
	t.Run("open lets it through", func(t *testing.T) {
		f := fetch(t, open, listed)
		assert.Equal(t, fetched{Status: 200, Body: "listed"}, f)
	})
	t.Run("open does not reach a neighbour", func(t *testing.T) {
		neighbour := startSandbox(t, group, "it-egress-open-2", sdk.SandboxOptions{Egress: &schemas.Egress{Policy: schemas.EgressOpen}})
		shell(t, neighbour, "nohup python3 -m http.server 8000 --bind 0.0.0.0 >/dev/null 2>&1 &")
		st, err := env.docker.Inspect(t.Context(), neighbour.Status().Container)
		require.NoError(t, err)
		ip := ""
		for _, a := range st.IPs {
			ip = a
		}
		require.NotEmpty(t, ip)
		addr := net.JoinHostPort(ip, "8000")
		require.Eventually(t, func() bool { return tryConnect(t, neighbour, addr)[addr] == "ok" }, 10e9, 2e8, "the neighbour listens on %s", addr)
		got := tryConnect(t, open, addr)
		assert.Contains(t, []string{"ETIMEDOUT", "timed out", "ECONNREFUSED", "EHOSTUNREACH"}, got[addr], "connect to the neighbour at %s", addr)
		assert.NotEqual(t, "ok", got[addr])
	})
	t.Run("a bad policy is refused", func(t *testing.T) {
		_, err := group.CreateSandbox(t.Context(), "it-egress-bad", sdk.SandboxOptions{Egress: &schemas.Egress{Policy: schemas.EgressAllowlist, Allow: []string{"10.0.0.0/99"}}})
		assert.ErrorIs(t, err, sdk.ErrBadRequest)
		_, err = group.CreateSandbox(t.Context(), "it-egress-bad", sdk.SandboxOptions{Egress: &schemas.Egress{Policy: "wide"}})
		assert.ErrorIs(t, err, sdk.ErrBadRequest)
	})
}

package deploy

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/build"
	"github.com/sandox/sandox/internal/docker"
	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/sdk"
)

// repoRoot is the repository's root.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	return root
}

// requireTool returns the path of a program the test needs. It skips when
// the program is absent and CI is unset, and fails under CI, whose
// build/scripts/test-deps.sh installs it.
func requireTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "" {
			t.Skipf("%s is not installed (build/scripts/test-deps.sh installs it)", name)
		}
		t.Fatalf("CI is set but %s is not installed: build/scripts/test-deps.sh installs it", name)
	}
	return p
}

// buildImages builds the base, sandbox and control-plane images when
// their inputs changed (as `sandox images` does, without the databases').
func buildImages(t *testing.T) {
	t.Helper()
	ctx := t.Context()
	d, err := docker.New(ctx)
	require.NoError(t, err)
	defer d.Close()
	b := build.NewBuilder(d, build.DefaultConfig(repoRoot(t)))
	_, err = b.All(ctx, build.SandboxImages|build.ControlImages)
	require.NoError(t, err, "images")
}

// buildNeo4j builds the groups' Neo4j image when its inputs changed (as
// `sandox images` does).
func buildNeo4j(t *testing.T) {
	t.Helper()
	d, err := docker.New(t.Context())
	require.NoError(t, err)
	defer d.Close()
	_, err = build.NewBuilder(d, build.DefaultConfig(repoRoot(t))).Neo4j(t.Context())
	require.NoError(t, err, "neo4j image")
}

// buildCLI builds the sandox command into dir and returns its path.
func buildCLI(t *testing.T, dir string) string {
	t.Helper()
	out := filepath.Join(dir, "sandox")
	cmd := exec.CommandContext(t.Context(), "go", "build", "-o", out, "./services/cmd/sandox")
	cmd.Dir = repoRoot(t)
	msg, err := cmd.CombinedOutput()
	require.NoError(t, err, "go build sandox: %s", msg)
	return out
}

// freePort returns a TCP port free on loopback now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// run runs a command in dir with env added to the test's environment and
// returns its combined output; it fails the test when the command fails.
func run(t *testing.T, ctx context.Context, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s %s:\n%s", name, strings.Join(args, " "), out)
	return string(out)
}

// connectWithin connects to NATS at url with the credentials file creds,
// trying until within has passed.
func connectWithin(t *testing.T, url, creds string, within time.Duration) *nats.Conn {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		nc, err := nats.Connect(url, nats.UserCredentials(creds), nats.Timeout(time.Second))
		if err == nil {
			t.Cleanup(nc.Close)
			return nc
		}
		if time.Now().After(deadline) {
			t.Fatalf("NATS at %s did not answer within %s: %v", url, within, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// echoed creates a group and a sandbox through nc, sends a batch that
// echoes marker, checks the answer and ends the group. It returns the
// sandbox's status as it ran.
func echoed(t *testing.T, nc *nats.Conn, group, marker string, opts sdk.SandboxOptions) schemas.SandboxStatus {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	g, err := sdk.NewSandboxGroup(sdk.GroupConfig{ID: group}, sdk.WithConn(nc), sdk.WithCommandTimeout(3*time.Minute))
	require.NoError(t, err)
	require.NoError(t, g.Start(ctx))
	defer func() { require.NoError(t, g.End(context.WithoutCancel(ctx)), "end group %s", group) }()
	sb, err := g.CreateSandbox(ctx, group+"-sb", opts)
	require.NoError(t, err)
	require.NoError(t, sb.Start(ctx))
	obs, err := sb.SendActions(ctx, schemas.Actions{{Tool: "terminal_tools.run", Args: []byte(`{"command": "echo ` + marker + `"}`)}})
	require.NoError(t, err)
	require.Len(t, obs, 1)
	require.Nil(t, obs[0].Error, "stdout %q, stderr %q", obs[0].Stdout, obs[0].Stderr)
	require.Contains(t, obs[0].Stdout, marker)
	st, err := sb.Refresh(ctx)
	require.NoError(t, err)
	return st
}

// waitConsumer waits until an orchestrator has made the shared command
// consumer (what `sandox up` waits for).
func waitConsumer(t *testing.T, nc *nats.Conn, within time.Duration) {
	t.Helper()
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	deadline := time.Now().Add(within)
	for {
		_, err := js.Consumer(t.Context(), schemas.CommandStream, schemas.CommandConsumer)
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no orchestrator consumes %s within %s: %v", schemas.CommandStream, within, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

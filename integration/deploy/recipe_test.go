package deploy

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/client"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/sdk"
	"github.com/sandox/sandox/services/orchestrator/runtime"
)

// secondEngine is where build/scripts/engine2.sh serves the second engine;
// SANDOX_DOCKER2_HOST overrides it, as for the script. It skips when the
// engine's socket is absent and CI is unset, and fails under CI, whose
// test-deps.sh starts it.
func secondEngine(t *testing.T) string {
	t.Helper()
	host := os.Getenv("SANDOX_DOCKER2_HOST")
	if host == "" {
		host = "unix:///run/sandox-docker2.sock"
	}
	if _, err := os.Stat(strings.TrimPrefix(host, "unix://")); err != nil {
		if os.Getenv("CI") == "" {
			t.Skipf("no second Docker engine at %s: start one with build/scripts/engine2.sh (CI does)", host)
		}
		t.Fatalf("CI is set but the second Docker engine at %s is absent: build/scripts/test-deps.sh runs engine2.sh", host)
	}
	return host
}

// recipeBlock returns the shell block of a markdown file that follows the
// comment line naming marker.
func recipeBlock(t *testing.T, path, marker string) string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	var (
		found, in bool
		body      strings.Builder
	)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case !found && strings.HasPrefix(line, "<!--") && strings.Contains(line, marker):
			found = true
		case found && !in && strings.HasPrefix(line, "```"):
			in = true
		case in && strings.HasPrefix(line, "```"):
			return body.String()
		case in:
			body.WriteString(line + "\n")
		}
	}
	require.NoError(t, sc.Err())
	t.Fatalf("%s: no block after a comment naming %q", path, marker)
	return ""
}

// replaceOnce replaces old by new in s, failing the test unless old
// occurs exactly once: the recipe must still read as the test expects.
func replaceOnce(t *testing.T, s, old, new string) string {
	t.Helper()
	require.Equal(t, 1, strings.Count(s, old), "the recipe holds %q once:\n%s", old, s)
	return strings.Replace(s, old, new, 1)
}

// forwardSocket serves a Unix socket at path (mode 0666) whose every
// connection is joined to the Unix socket at target, as `ssh -L
// path:target` with StreamLocalBindMask=0111 does; it stops at cleanup.
func forwardSocket(t *testing.T, path, target string) {
	t.Helper()
	_ = os.Remove(path)
	ln, err := net.Listen("unix", path)
	require.NoError(t, err)
	require.NoError(t, os.Chmod(path, 0o666))
	var wg sync.WaitGroup
	t.Cleanup(func() {
		ln.Close()
		wg.Wait()
		os.Remove(path)
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("unix", target)
			if err != nil {
				c.Close()
				continue
			}
			go func() {
				defer c.Close()
				defer up.Close()
				done := make(chan struct{}, 2)
				go func() { _, _ = io.Copy(up, c); done <- struct{}{} }()
				go func() { _, _ = io.Copy(c, up); done <- struct{}{} }()
				<-done
			}()
		}
	}()
}

// bash runs script under bash -euo pipefail in dir with env added.
func bash(t *testing.T, ctx context.Context, dir string, env []string, script string) string {
	t.Helper()
	return run(t, ctx, dir, env, "bash", "-euo", "pipefail", "-c", script)
}

// TestJoinRecipe runs the recipe of docs/deploy.md ("A second host for
// `sandox up`") as written, against the second engine of engine2.sh, but
// for what one machine makes moot or cannot do (said there too): the
// first host is compose.yaml under a project of its own (upCompose),
// so the join URL's port is the project's; `ssh B docker load` loads into
// the second engine; scp and the password's copy are dropped (one file
// system); and the test forwards the first host's NATS socket itself
// (no SSH server). Then a group of two sandboxes spread over both hosts
// has one on host-b, in a container of the second engine, answering a
// batch.
func TestJoinRecipe(t *testing.T) {
	engine2 := secondEngine(t)
	a := upCompose(t)
	ctx := t.Context()
	doc := filepath.Join(a.root, "docs", "deploy.md")
	onA := recipeBlock(t, doc, "TestJoinRecipe runs this block on the first host")
	onB := recipeBlock(t, doc, "TestJoinRecipe runs this block on the second host")

	work := t.TempDir()
	// The recipe's `sandox` is the one built for the test.
	onPath := "export PATH=" + filepath.Dir(a.cli) + ":\"$PATH\"\n"
	env := []string{"XDG_CONFIG_HOME=" + a.config}

	// The groups' Neo4j image, which the recipe copies to host B.
	buildNeo4j(t)

	// Host A: the identity, the images, the password.
	onA = replaceOnce(t, onA, "| ssh B docker load", "| docker -H "+engine2+" load")
	var kept []string
	for _, line := range strings.Split(onA, "\n") {
		if strings.HasPrefix(line, "scp ") || strings.HasPrefix(line, "ssh B install ") {
			continue // one machine: the files are where B looks for them
		}
		kept = append(kept, line)
	}
	bash(t, ctx, work, env, onPath+strings.Join(kept, "\n"))

	// Host B: the forward, then the join.
	api2, err := client.NewClientWithOpts(client.WithHost(engine2), client.WithAPIVersionNegotiation())
	require.NoError(t, err)
	defer api2.Close()
	t.Cleanup(func() { leaveHost(t, api2) })
	vol := strings.TrimSpace(run(t, ctx, work, nil, "docker", "volume", "inspect", "-f", "{{.Mountpoint}}", a.project+"-nats-socket"))
	require.NoError(t, os.MkdirAll("/run/sandox-nats", 0o755))
	t.Cleanup(func() { _ = os.Remove("/run/sandox-nats") }) // when empty
	forwardSocket(t, "/run/sandox-nats/nats.sock", filepath.Join(vol, "nats.sock"))
	start := strings.Index(onB, "ssh -fN")
	require.GreaterOrEqual(t, start, 0, "the recipe forwards with ssh -fN:\n%s", onB)
	end := strings.Index(onB[start:], " A\n")
	require.GreaterOrEqual(t, end, 0, "the ssh forward ends with the host A")
	onB = onB[:start] + onB[start+end+len(" A\n"):]
	onB = replaceOnce(t, onB, "nats://127.0.0.1:4222", a.url())
	// One machine: host B's directories must not be those of a `sandox up`
	// running on the first engine.
	dir := "/var/lib/" + a.project + "-b"
	t.Cleanup(func() { os.RemoveAll(dir) })
	onB = replaceOnce(t, onB, "-creds orchestrator-b.creds\n", "-creds orchestrator-b.creds -dir "+dir+"\n")
	out := bash(t, ctx, work, append(env, "DOCKER_HOST="+engine2), onPath+onB)
	t.Logf("on host B:\n%s", out)

	// The system: host-b heartbeats, and a group spread over both hosts
	// has a sandbox there.
	waitHost(t, a, engine2, "host-b", schemas.HostUp, time.Minute)
	g, err := sdk.NewSandboxGroup(sdk.GroupConfig{ID: a.project + "-join", Placement: schemas.PlacementSpread}, sdk.WithConn(a.nc), sdk.WithCommandTimeout(3*time.Minute))
	require.NoError(t, err)
	require.NoError(t, g.Start(ctx))
	var onHostB *sdk.Sandbox
	hostA := ""
	for i := range 2 {
		sb, err := g.CreateSandbox(ctx, a.project+"-join-"+strconv.Itoa(i), sdk.SandboxOptions{})
		require.NoError(t, err)
		require.NoError(t, sb.Start(ctx))
		st, err := sb.Refresh(ctx)
		require.NoError(t, err)
		t.Logf("%s runs on %s", sb.ID(), st.Host)
		if st.Host == "host-b" {
			onHostB = sb
		} else {
			hostA = st.Host
		}
	}
	require.NotNil(t, onHostB, "a sandbox of a spread group lands on host-b")
	require.NotEmpty(t, hostA, "a sandbox of a spread group lands on the first host")
	obs, err := onHostB.SendActions(ctx, schemas.Actions{{Tool: "terminal_tools.run", Args: []byte(`{"command": "echo joined"}`)}})
	require.NoError(t, err)
	require.Len(t, obs, 1)
	require.Nil(t, obs[0].Error, "stdout %q, stderr %q", obs[0].Stdout, obs[0].Stderr)
	assert.Contains(t, obs[0].Stdout, "joined")
	c, err := api2.ContainerInspect(ctx, onHostB.Status().Container)
	require.NoError(t, err, "the sandbox on host-b is a container of the second engine")
	assert.True(t, c.State.Running)
	require.NoError(t, g.End(ctx))

	// A database on host-b: with the first host's worker stopped and its
	// host marked lost (so that nothing goes there), host-b's worker starts
	// the group's Neo4j on the second engine, and the first host's data
	// service reaches it there.
	run(t, ctx, work, nil, "docker", "stop", a.project+"-orchestrator")
	waitHost(t, a, engine2, hostA, schemas.HostLost, 2*time.Minute)
	dbg, err := sdk.NewSandboxGroup(sdk.GroupConfig{
		ID: a.project + "-db", Tools: []string{"database_tools", "terminal_tools"},
		DatabaseAccess: schemas.DatabaseAccess{{Database: schemas.DatabaseNeo4j, Namespace: "scratch", Read: true, Write: true}},
	}, sdk.WithConn(a.nc), sdk.WithCommandTimeout(4*time.Minute))
	require.NoError(t, err)
	require.NoError(t, dbg.Start(ctx), "a group with a database starts on host-b")
	defer func() { assert.NoError(t, dbg.End(context.WithoutCancel(ctx))) }()
	m, err := a.nc.Request(schemas.GroupStatusSubject(a.project+"-db"), nil, 5*time.Second)
	require.NoError(t, err)
	var st schemas.StatusReply
	require.NoError(t, json.Unmarshal(m.Data, &st))
	require.NotNil(t, st.Group)
	require.Len(t, st.Group.Databases, 1)
	_, err = api2.ContainerInspect(ctx, st.Group.Databases[0].Container)
	require.NoError(t, err, "the group's Neo4j is a container of the second engine")
	sb, err := dbg.CreateSandbox(ctx, a.project+"-db-sb", sdk.SandboxOptions{})
	require.NoError(t, err)
	require.NoError(t, sb.Start(ctx))
	for _, act := range []struct{ tool, args string }{
		{"database_tools.graph_add_node", `{"namespace": "scratch", "id": "n1", "labels": ["Note"], "properties": {"text": "from host-b"}}`},
		{"database_tools.graph_query", `{"namespace": "scratch", "query": "MATCH (n:Note) RETURN n.text AS text"}`},
	} {
		obs, err := sb.SendActions(ctx, schemas.Actions{{Tool: act.tool, Args: []byte(act.args)}})
		require.NoError(t, err)
		require.Len(t, obs, 1)
		require.Nil(t, obs[0].Error, "%s: stdout %q, stderr %q", act.tool, obs[0].Stdout, obs[0].Stderr)
		obs0 := obs[0]
		if act.tool == "database_tools.graph_query" {
			assert.Contains(t, string(obs0.Return), "from host-b")
		}
	}
}

// waitHost waits until host's record in the hosts bucket is in state.
func waitHost(t *testing.T, a *composeHost, engine, host string, state schemas.HostState, within time.Duration) {
	t.Helper()
	js, err := jetstream.New(a.nc)
	require.NoError(t, err)
	deadline := time.Now().Add(within)
	for {
		kv, err := js.KeyValue(t.Context(), schemas.HostsBucket)
		if err == nil {
			var e jetstream.KeyValueEntry
			if e, err = kv.Get(t.Context(), host); err == nil {
				var h schemas.HostStatus
				if err = json.Unmarshal(e.Value(), &h); err == nil && h.State == state {
					return
				}
			}
		}
		if time.Now().After(deadline) {
			out, _ := exec.Command("docker", "-H", engine, "logs", "--tail", "30", "sandox-orchestrator").CombinedOutput()
			t.Fatalf("host %s was not %s within %s (%v); host-b's worker's log:\n%s", host, state, within, err, out)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// leaveHost removes what the join left on the second engine: the worker,
// its sandboxes (its warm pool's among them) and their volumes, and the
// networks it made.
func leaveHost(t *testing.T, api *client.Client) {
	ctx := context.Background()
	if err := api.ContainerRemove(ctx, "sandox-orchestrator", container.RemoveOptions{Force: true}); err != nil {
		t.Logf("remove sandox-orchestrator on the second engine: %v", err)
	}
	f := filters.NewArgs(filters.Arg("label", runtime.LabelSystem+"=local"))
	cs, err := api.ContainerList(ctx, container.ListOptions{All: true, Filters: f})
	assert.NoError(t, err)
	for _, c := range cs {
		assert.NoError(t, api.ContainerRemove(ctx, c.ID, container.RemoveOptions{Force: true, RemoveVolumes: true}))
		_ = api.VolumeRemove(ctx, runtime.VolumeName(c.Labels[runtime.LabelSandbox]), true)
	}
	for _, n := range []string{"sandox", "sandox-data"} {
		_ = api.NetworkRemove(ctx, n)
	}
}

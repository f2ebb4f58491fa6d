package executor

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/executor/limits"
	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/schemas/jsonschema"
	"github.com/sandox/sandox/tools"
)

// fakeCgroup is a cgroup v2 directory whose OOM kill counter tests raise.
type fakeCgroup struct {
	root  string
	mu    sync.Mutex
	kills int
}

func newFakeCgroup(t *testing.T) *fakeCgroup {
	t.Helper()
	c := &fakeCgroup{root: t.TempDir()}
	require.NoError(t, os.WriteFile(filepath.Join(c.root, "memory.max"), []byte("134217728\n"), 0o644))
	require.NoError(t, c.kill(0))
	return c
}

// kill adds n to the OOM kill counter, as the kernel does.
func (c *fakeCgroup) kill(n int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.kills += n
	data := []byte("oom 0\noom_kill " + strconv.Itoa(c.kills) + "\n")
	return os.WriteFile(filepath.Join(c.root, "memory.events"), data, 0o644)
}

// startLimitServer serves a registry whose demo_tools.oom raises the fake
// cgroup's kill counter, with a watcher on that cgroup and on workspace.
func startLimitServer(t *testing.T, workspace string) (*nats.Conn, *fakeCgroup) {
	t.Helper()
	cg := newFakeCgroup(t)
	w, err := limits.New(limits.Config{CgroupRoot: cg.root, Workspace: workspace})
	require.NoError(t, err)
	reg := tools.NewRegistry(
		tools.New("demo_tools", "echo", "Echo text.", func(_ context.Context, a textArgs) (tools.Result, error) {
			return tools.Result{Stdout: a.Text}, nil
		}),
		tools.New("demo_tools", "oom", "Gets a process killed.", func(context.Context, textArgs) (tools.Result, error) {
			return tools.Result{}, cg.kill(1)
		}),
	)
	return startServerWith(t, reg, Config{SandboxID: "sb-1", Limits: w}), cg
}

func limitsOf(obs []schemas.Observation) [][]schemas.LimitHit {
	out := make([][]schemas.LimitHit, len(obs))
	for i, o := range obs {
		out[i] = o.LimitsHit
	}
	return out
}

func TestServeAttributesLimitHits(t *testing.T) {
	nc, cg := startLimitServer(t, t.TempDir())
	kill := schemas.LimitHit{Resource: schemas.LimitMemory, Count: 1, Message: "the kernel killed 1 process: the sandbox ran out of its 128.0 MiB of memory"}

	// The action that ran out of memory gets the report.
	res := request(t, nc, `[{"tool":"demo_tools.echo","args":{"text":"a"}},{"tool":"demo_tools.oom","args":{"text":""}},{"tool":"demo_tools.echo","args":{"text":"c"}}]`, false)
	got := limitsOf(res.Observations)
	require.Equal(t, [][]schemas.LimitHit{nil, {kill}, nil}, got, "limit hits: want the kill on the second action only")

	// A kill between batches and a notice go into the next batch's first
	// observation, the notice first.
	require.NoError(t, cg.kill(1))
	restart := schemas.LimitHit{Resource: schemas.LimitMemory, Count: 1, Message: "the sandbox was restarted after running out of memory"}
	data, _ := json.Marshal(restart)
	reply, err := nc.Request(schemas.NoticeSubject("sb-1"), data, 5*time.Second)
	require.NoError(t, err)
	require.Equal(t, "ok", string(reply.Data), "notice reply %q, want ok", reply.Data)
	res = request(t, nc, `[{"tool":"demo_tools.echo","args":{"text":"a"}},{"tool":"demo_tools.echo","args":{"text":"b"}}]`, false)
	got = limitsOf(res.Observations)
	require.Equal(t, [][]schemas.LimitHit{{restart, kill}, nil}, got, "limit hits: want the notice and the kill on the first action")
}

func TestServeNoticeRejectsBadInput(t *testing.T) {
	nc, _ := startLimitServer(t, t.TempDir())
	tests := []struct {
		name    string
		payload string
	}{
		{"not JSON", `{"resource": `},
		{"unknown resource", `{"resource":"cpu","count":1,"message":"x"}`},
		{"negative count", `{"resource":"pids","count":-1,"message":"x"}`},
		{"no message", `{"resource":"disk","count":1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := requestError(t, nc, schemas.NoticeSubject("sb-1"), tt.payload)
			require.Equal(t, schemas.CodeBadRequest, e.Code, "%+v, want a bad_request error", e)
		})
	}
	res := request(t, nc, `[{"tool":"demo_tools.echo","args":{"text":"a"}}]`, false)
	require.Nil(t, res.Observations[0].LimitsHit, "want no rejected notice queued")
}

func TestServeStats(t *testing.T) {
	ws := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(ws, "data"), make([]byte, 256<<10), 0o644))
	nc, _ := startLimitServer(t, ws)
	reply, err := nc.Request(schemas.StatsSubject("sb-1"), nil, 5*time.Second)
	require.NoError(t, err)
	require.NoError(t, jsonschema.Validate("sandbox_usage", reply.Data), "reply %s does not match the schema", reply.Data)
	var u schemas.SandboxUsage
	require.NoError(t, json.Unmarshal(reply.Data, &u))
	assert.Equal(t, "sb-1", u.SandboxID)
	assert.GreaterOrEqual(t, u.DiskBytes, int64(256<<10), "disk bytes, want about 256 KiB")
	assert.LessOrEqual(t, u.DiskBytes, int64(512<<10), "disk bytes, want about 256 KiB")
	assert.False(t, u.ReadAt.IsZero(), "read at, want now")
}

func TestServeWithoutLimits(t *testing.T) {
	var ran []string
	var mu sync.Mutex
	nc := startServer(t, testRegistry(&ran, &mu))
	for _, subject := range []string{schemas.StatsSubject("sb-1"), schemas.NoticeSubject("sb-1")} {
		e := requestError(t, nc, subject, `{"resource":"memory","count":1,"message":"x"}`)
		assert.Equal(t, schemas.CodeUnsupported, e.Code, "%s: got %+v, want an unsupported error", subject, e)
	}
}

// requestError sends payload to subject and decodes the error it answers.
func requestError(t *testing.T, nc *nats.Conn, subject, payload string) schemas.Error {
	t.Helper()
	reply, err := nc.Request(subject, []byte(payload), 5*time.Second)
	require.NoError(t, err)
	var e schemas.Error
	require.NoError(t, json.Unmarshal(reply.Data, &e), "reply %q, want a schemas.Error", reply.Data)
	require.NotEmpty(t, e.Code, "reply %q, want a schemas.Error", reply.Data)
	return e
}

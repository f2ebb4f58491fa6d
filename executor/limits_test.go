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

	"github.com/sandox/sandox/executor/limits"
	"github.com/sandox/sandox/schemas"
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
	if err := os.WriteFile(filepath.Join(c.root, "memory.max"), []byte("134217728\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := c.kill(0); err != nil {
		t.Fatal(err)
	}
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
	if err != nil {
		t.Fatal(err)
	}
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
	if len(got) != 3 || got[0] != nil || len(got[1]) != 1 || got[1][0] != kill || got[2] != nil {
		t.Fatalf("got limit hits %+v, want the kill on the second action only", got)
	}

	// A kill between batches and a notice go into the next batch's first
	// observation, the notice first.
	if err := cg.kill(1); err != nil {
		t.Fatal(err)
	}
	restart := schemas.LimitHit{Resource: schemas.LimitMemory, Count: 1, Message: "the sandbox was restarted after running out of memory"}
	data, _ := json.Marshal(restart)
	reply, err := nc.Request(schemas.NoticeSubject("sb-1"), data, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if string(reply.Data) != "ok" {
		t.Fatalf("got notice reply %q, want ok", reply.Data)
	}
	res = request(t, nc, `[{"tool":"demo_tools.echo","args":{"text":"a"}},{"tool":"demo_tools.echo","args":{"text":"b"}}]`, false)
	got = limitsOf(res.Observations)
	if len(got) != 2 || len(got[0]) != 2 || got[0][0] != restart || got[0][1] != kill || got[1] != nil {
		t.Fatalf("got limit hits %+v, want the notice and the kill on the first action", got)
	}
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
			if e.Code != schemas.CodeBadRequest {
				t.Fatalf("got %+v, want a bad_request error", e)
			}
		})
	}
	res := request(t, nc, `[{"tool":"demo_tools.echo","args":{"text":"a"}}]`, false)
	if hits := res.Observations[0].LimitsHit; hits != nil {
		t.Fatalf("got %+v, want no rejected notice queued", hits)
	}
}

func TestServeStats(t *testing.T) {
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "data"), make([]byte, 256<<10), 0o644); err != nil {
		t.Fatal(err)
	}
	nc, _ := startLimitServer(t, ws)
	reply, err := nc.Request(schemas.StatsSubject("sb-1"), nil, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := schemas.Validate("sandbox_usage", reply.Data); err != nil {
		t.Fatalf("reply %s does not match the schema: %v", reply.Data, err)
	}
	var u schemas.SandboxUsage
	if err := json.Unmarshal(reply.Data, &u); err != nil {
		t.Fatal(err)
	}
	if u.SandboxID != "sb-1" || u.DiskBytes < 256<<10 || u.DiskBytes > 512<<10 || u.ReadAt.IsZero() {
		t.Fatalf("got %+v, want sb-1 using about 256 KiB, read now", u)
	}
}

func TestServeWithoutLimits(t *testing.T) {
	var ran []string
	var mu sync.Mutex
	nc := startServer(t, testRegistry(&ran, &mu))
	for _, subject := range []string{schemas.StatsSubject("sb-1"), schemas.NoticeSubject("sb-1")} {
		e := requestError(t, nc, subject, `{"resource":"memory","count":1,"message":"x"}`)
		if e.Code != schemas.CodeUnsupported {
			t.Errorf("%s: got %+v, want an unsupported error", subject, e)
		}
	}
}

// requestError sends payload to subject and decodes the error it answers.
func requestError(t *testing.T, nc *nats.Conn, subject, payload string) schemas.Error {
	t.Helper()
	reply, err := nc.Request(subject, []byte(payload), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var e schemas.Error
	if err := json.Unmarshal(reply.Data, &e); err != nil || e.Code == "" {
		t.Fatalf("got reply %q, want a schemas.Error", reply.Data)
	}
	return e
}

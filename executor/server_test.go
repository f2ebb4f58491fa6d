package executor

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/natsd"
	"github.com/sandox/sandox/tools"
)

type textArgs struct {
	Text string `json:"text"`
}

// testRegistry holds small real tools: they record the order they ran in.
func testRegistry(log *[]string, mu *sync.Mutex) *tools.Registry {
	record := func(s string) {
		mu.Lock()
		defer mu.Unlock()
		*log = append(*log, s)
	}
	return tools.NewRegistry(
		tools.New("demo_tools", "echo", "Echo text.", func(_ context.Context, a textArgs) (tools.Result, error) {
			record("echo:" + a.Text)
			return tools.Result{Stdout: a.Text}, nil
		}),
		tools.New("demo_tools", "fail", "Always fails.", func(_ context.Context, a textArgs) (tools.Result, error) {
			record("fail")
			return tools.Result{Stderr: "partial"}, fmt.Errorf("fail %q: %w", a.Text, tools.ErrNotFound)
		}),
		tools.New("demo_tools", "panic", "Panics.", func(context.Context, textArgs) (tools.Result, error) {
			panic("boom")
		}),
		tools.New("demo_tools", "big", "Prints a lot.", func(context.Context, textArgs) (tools.Result, error) {
			return tools.Result{Stdout: strings.Repeat("x", 2<<20)}, nil
		}),
		tools.New("other_tools", "echo", "Echo too.", func(_ context.Context, a textArgs) (tools.Result, error) {
			return tools.Result{Stdout: "other:" + a.Text}, nil
		}),
	)
}

func startServer(t *testing.T, reg *tools.Registry) *nats.Conn {
	t.Helper()
	return startServerWith(t, reg, Config{SandboxID: "sb-1"})
}

func startServerWith(t *testing.T, reg *tools.Registry, srvCfg Config) *nats.Conn {
	t.Helper()
	cfg := natsd.DefaultConfig()
	cfg.Port = -1
	cfg.StoreDir = t.TempDir()
	cfg.MaxPayload = 1 << 20
	ns, err := natsd.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ns.Shutdown)
	nc, err := nats.Connect(ns.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	srv := NewServer(nc, reg, srvCfg, slog.New(slog.DiscardHandler))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	// Wait until the executor answers pings.
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, err := nc.Request(schemas.PingSubject("sb-1"), nil, 200*time.Millisecond); err == nil {
			return nc
		}
		if time.Now().After(deadline) {
			t.Fatal("executor did not answer ping within 5s")
		}
	}
}

func request(t *testing.T, nc *nats.Conn, payload string, stop bool) schemas.BatchResult {
	t.Helper()
	m := nats.NewMsg(schemas.ActionsSubject("sb-1"))
	m.Data = []byte(payload)
	m.Header.Set(schemas.HeaderBatchID, "b1")
	if stop {
		m.Header.Set(schemas.HeaderStopOnError, "true")
	}
	reply, err := nc.RequestMsg(m, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var res schemas.BatchResult
	if err := json.Unmarshal(reply.Data, &res); err != nil {
		t.Fatal(err)
	}
	if err := schemas.Validate("batch_result", reply.Data); err != nil {
		t.Fatalf("reply does not match the schema: %v", err)
	}
	return res
}

func TestServeBatchKeepsOrderAndGoesOnAfterFailure(t *testing.T) {
	var ran []string
	var mu sync.Mutex
	nc := startServer(t, testRegistry(&ran, &mu))
	res := request(t, nc, `{
		"demo_tools.echo": {"description": "first", "args": {"text": "one"}},
		"demo_tools.failUse": {"args": {"text": "x"}},
		"nope.missing": {"args": {}},
		"demo_tools.panic": {"args": {"text": ""}},
		"echo": {"args": {"text": "ambiguous"}},
		"other_tools.echo": {"args": {"text": 7}},
		"demo_tools.echoUse": {"args": {"text": "last"}}
	}`, false)
	if res.Error != nil {
		t.Fatalf("got batch error %v, want none", res.Error)
	}
	want := []struct {
		tool   string
		stdout string
		code   schemas.ErrorCode
	}{
		{"demo_tools.echo", "one", ""},
		{"demo_tools.fail", "", schemas.CodeToolError},
		{"nope.missing", "", schemas.CodeUnknownTool},
		{"demo_tools.panic", "", schemas.CodeInternal},
		{"echo", "", schemas.CodeAmbiguousTool},
		{"other_tools.echo", "", schemas.CodeInvalidArgs},
		{"demo_tools.echo", "last", ""},
	}
	if len(res.Observations) != len(want) {
		t.Fatalf("got %d observations, want %d", len(res.Observations), len(want))
	}
	for i, w := range want {
		o := res.Observations[i]
		var code schemas.ErrorCode
		if o.Error != nil {
			code = o.Error.Code
		}
		if o.Tool != w.tool || o.Stdout != w.stdout || code != w.code {
			t.Errorf("observation %d: got tool %q stdout %q code %q, want %q %q %q", i, o.Tool, o.Stdout, code, w.tool, w.stdout, w.code)
		}
	}
	if got := res.Observations[1].Stderr; got != "partial" {
		t.Errorf("got stderr %q of a failed tool, want its partial output kept", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(ran, ",") != "echo:one,fail,echo:last" {
		t.Errorf("got run order %v, want echo:one,fail,echo:last", ran)
	}
}

func TestServeBatchStopOnError(t *testing.T) {
	var ran []string
	var mu sync.Mutex
	nc := startServer(t, testRegistry(&ran, &mu))
	res := request(t, nc, `[{"tool":"demo_tools.echo","args":{"text":"a"}},{"tool":"demo_tools.fail","args":{"text":"b"}},{"tool":"demo_tools.echo","args":{"text":"c"}}]`, true)
	if len(res.Observations) != 3 {
		t.Fatalf("got %d observations, want 3", len(res.Observations))
	}
	if e := res.Observations[2].Error; e == nil || e.Code != schemas.CodeSkipped {
		t.Fatalf("got %+v, want the third action skipped", res.Observations[2])
	}
}

func TestServeMalformedBatch(t *testing.T) {
	var ran []string
	var mu sync.Mutex
	nc := startServer(t, testRegistry(&ran, &mu))
	for _, payload := range []string{`{"demo_tools.echo": `, `42`, `{}`} {
		res := request(t, nc, payload, false)
		if res.Error == nil || res.Error.Code != schemas.CodeBadRequest {
			t.Errorf("payload %q: got %+v, want a bad_request batch error", payload, res.Error)
		}
	}
	// The executor keeps working after bad input.
	res := request(t, nc, `{"demo_tools.echo": {"args": {"text": "still here"}}}`, false)
	if len(res.Observations) != 1 || res.Observations[0].Stdout != "still here" {
		t.Fatalf("got %+v, want the executor to keep serving", res)
	}
}

func TestServeFitsLargeOutput(t *testing.T) {
	var ran []string
	var mu sync.Mutex
	nc := startServer(t, testRegistry(&ran, &mu))
	res := request(t, nc, `{"demo_tools.big": {"args": {"text": ""}}}`, false)
	if len(res.Observations) != 1 || !strings.Contains(res.Observations[0].Stdout, "bytes cut") {
		t.Fatalf("got %d bytes of stdout, want it cut with a marker", len(res.Observations[0].Stdout))
	}
}

func TestServeTools(t *testing.T) {
	var ran []string
	var mu sync.Mutex
	nc := startServer(t, testRegistry(&ran, &mu))
	reply, err := nc.Request(schemas.ToolsSubject("sb-1"), nil, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var descs []schemas.ToolDescription
	if err := json.Unmarshal(reply.Data, &descs); err != nil {
		t.Fatal(err)
	}
	if len(descs) != 5 || descs[0].Name != "demo_tools.big" {
		t.Fatalf("got %d tools starting with %q, want 5 sorted", len(descs), descs[0].Name)
	}
}

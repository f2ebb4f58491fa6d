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
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/internal/natstest"
	"github.com/sandox/sandox/internal/poll"
	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/schemas/jsonschema"
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
	nc := startNATS(t)
	serve(t, nc, reg, srvCfg)
	poll.Until(t, 5*time.Second, "the executor to answer pings", func() bool {
		_, err := nc.Request(schemas.PingSubject("sb-1"), nil, 200*time.Millisecond)
		return err == nil
	})
	return nc
}

// startNATS starts an embedded NATS server on a free port and returns a
// connection to it; both close at the test's end.
func startNATS(t *testing.T) *nats.Conn {
	t.Helper()
	return natstest.Connect(t, natstest.Start(t, func(c *natsd.Config) { c.MaxPayload = 1 << 20 }))
}

// serve runs an executor.Server for reg on nc until the test's end, when
// it checks that Serve returned no error. It does not wait for the server
// to answer.
func serve(t *testing.T, nc *nats.Conn, reg *tools.Registry, cfg Config) {
	t.Helper()
	srv := NewServer(nc, reg, cfg, slog.New(slog.DiscardHandler))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		assert.NoError(t, <-done, "Serve")
	})
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
	require.NoError(t, err)
	var res schemas.BatchResult
	require.NoError(t, json.Unmarshal(reply.Data, &res))
	require.NoError(t, jsonschema.Validate("batch_result", reply.Data), "reply does not match the schema")
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
	require.Nil(t, res.Error, "batch error, want none")
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
	require.Len(t, res.Observations, len(want), "observations")
	for i, w := range want {
		o := res.Observations[i]
		var code schemas.ErrorCode
		if o.Error != nil {
			code = o.Error.Code
		}
		assert.Equal(t, w.tool, o.Tool, "observation %d: tool", i)
		assert.Equal(t, w.stdout, o.Stdout, "observation %d: stdout", i)
		assert.Equal(t, w.code, code, "observation %d: error code", i)
	}
	assert.Equal(t, "partial", res.Observations[1].Stderr, "stderr of a failed tool: want its partial output kept")
	assert.Equal(t, `fail "x": not found`, res.Observations[1].Error.Message, "tools.ErrNotFound on the wire: its words, code tool_error")
	assert.ErrorIs(t, res.Observations[1].Error, schemas.CodeToolError, "the observation's error is its code")
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, "echo:one,fail,echo:last", strings.Join(ran, ","), "run order %v, want echo:one,fail,echo:last", ran)
}

func TestServeBatchStopOnError(t *testing.T) {
	var ran []string
	var mu sync.Mutex
	nc := startServer(t, testRegistry(&ran, &mu))
	res := request(t, nc, `[{"tool":"demo_tools.echo","args":{"text":"a"}},{"tool":"demo_tools.fail","args":{"text":"b"}},{"tool":"demo_tools.echo","args":{"text":"c"}}]`, true)
	require.Len(t, res.Observations, 3, "observations, want 3")
	require.NotNil(t, res.Observations[2].Error, "want the third action skipped")
	require.Equal(t, schemas.CodeSkipped, res.Observations[2].Error.Code)
}

func TestServeMalformedBatch(t *testing.T) {
	var ran []string
	var mu sync.Mutex
	nc := startServer(t, testRegistry(&ran, &mu))
	for _, payload := range []string{`{"demo_tools.echo": `, `42`, `{}`} {
		res := request(t, nc, payload, false)
		require.NotNil(t, res.Error, "payload %q, want a bad_request batch error", payload)
		require.Equal(t, schemas.CodeBadRequest, res.Error.Code, "payload %q: got %+v, want a bad_request batch error", payload, res.Error)
	}
	// The executor keeps working after bad input.
	res := request(t, nc, `{"demo_tools.echo": {"args": {"text": "still here"}}}`, false)
	require.Len(t, res.Observations, 1, "%+v, want the executor to keep serving", res)
	require.Equal(t, "still here", res.Observations[0].Stdout, "%+v, want the executor to keep serving", res)
}

func TestServeFitsLargeOutput(t *testing.T) {
	var ran []string
	var mu sync.Mutex
	nc := startServer(t, testRegistry(&ran, &mu))
	res := request(t, nc, `{"demo_tools.big": {"args": {"text": ""}}}`, false)
	require.Len(t, res.Observations, 1)
	require.Contains(t, res.Observations[0].Stdout, "bytes cut", "want stdout cut with a marker")
}

func TestServeTools(t *testing.T) {
	var ran []string
	var mu sync.Mutex
	nc := startServer(t, testRegistry(&ran, &mu))
	reply, err := nc.Request(schemas.ToolsSubject("sb-1"), nil, 5*time.Second)
	require.NoError(t, err)
	var descs []schemas.ToolDescription
	require.NoError(t, json.Unmarshal(reply.Data, &descs))
	require.Len(t, descs, 5)
	require.Equal(t, "demo_tools.big", descs[0].Name, "want the tools sorted")
}

package executor_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/sandox/sandox/executor"
	"github.com/sandox/sandox/executor/limits"
	"github.com/sandox/sandox/internal/natstest"
	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/tools"
)

// BenchmarkServeBatch times one-action batches (filesystem_tools.stat_path)
// through a real executor.Server with the default tool families and a
// limit watcher, over an embedded NATS server, with 8 concurrent
// requesters: the executor's share of the action path, for profiling
// (-cpuprofile).
func BenchmarkServeBatch(b *testing.B) {
	ns := natstest.Start(b)
	nc := natstest.Connect(b, ns)
	ws := b.TempDir()
	log := slog.New(slog.DiscardHandler)
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	reg, closeTools, err := executor.Tools(ctx, tools.Env{Executor: schemas.ExecutorEnv{SandboxID: "sb-bench", Workspace: ws}, Log: log})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(closeTools)
	w, err := limits.New(limits.Config{Workspace: ws})
	if err != nil {
		b.Fatal(err)
	}
	srv := executor.NewServer(nc, reg, executor.Config{SandboxID: "sb-bench", Limits: w}, log)
	go func() { _ = srv.Serve(ctx) }()
	client := natstest.Connect(b, ns)
	payload := []byte(`{"filesystem_tools.stat_path": {"path": "` + ws + `"}}`)
	subject := schemas.ActionsSubject("sb-bench")
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := client.Request(schemas.PingSubject("sb-bench"), nil, time.Second); err == nil {
			break
		}
		if time.Now().After(deadline) {
			b.Fatal("executor not ready")
		}
	}
	b.SetParallelism(4) // 4 x GOMAXPROCS requesters
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m, err := client.Request(subject, payload, 10*time.Second)
			if err != nil {
				b.Error(err)
				return
			}
			if len(m.Data) < 10 {
				b.Errorf("short answer %q", m.Data)
				return
			}
		}
	})
}

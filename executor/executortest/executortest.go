// Package executortest runs a real sandbox executor in the test's own
// process: an embedded NATS server on a free port and an executor.Server
// with the built-in tool families and the test's Python tool files. No
// container and no orchestrator take part, so the sandbox can be reached by
// its subjects (actions, tools, ping) but not by lifecycle commands. The
// server holds the SANDOX_JOBS stream, so the terminal family's jobs work
// as in a real sandbox.
package executortest

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sandox/sandox/executor"
	"github.com/sandox/sandox/internal/poll"
	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/natsd"
	"github.com/sandox/sandox/tools"
)

// Sandbox is an executor serving one sandbox in-process.
type Sandbox struct {
	// ID is the sandbox's id.
	ID string
	// URL is the embedded NATS server's client URL.
	URL string
	// Conn is a connection to that server, closed at the test's end.
	Conn *nats.Conn
	// Workspace is the sandbox's working directory.
	Workspace string
}

// Start starts an embedded NATS server and an executor for sandbox id whose
// tools are the default built-in families plus toolFiles (file name -> Python
// source). It returns once the executor answers pings; everything stops at
// the test's cleanup. It fails the test when something does not start.
func Start(t testing.TB, id string, toolFiles map[string]string) *Sandbox {
	t.Helper()
	cfg := natsd.DefaultConfig()
	cfg.Port = -1
	cfg.StoreDir = t.TempDir()
	ns, err := natsd.Start(cfg)
	if err != nil {
		t.Fatalf("start NATS: %v", err)
	}
	t.Cleanup(ns.Shutdown)
	nc, err := nats.Connect(ns.ClientURL())
	if err != nil {
		t.Fatalf("connect to NATS: %v", err)
	}
	t.Cleanup(nc.Close)

	// The jobs' and watches' streams, as the orchestrator makes them (only
	// what they need of them): terminal_tools' jobs and filesystem_tools'
	// watches publish into them.
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatalf("jetstream: %v", err)
	}
	if _, err := js.CreateStream(context.Background(), jetstream.StreamConfig{
		Name: schemas.JobStream, Subjects: []string{schemas.JobStreamSubjects},
		Storage: jetstream.FileStorage, Duplicates: 2 * time.Minute,
	}); err != nil {
		t.Fatalf("create stream %s: %v", schemas.JobStream, err)
	}
	if _, err := js.CreateStream(context.Background(), jetstream.StreamConfig{
		Name: schemas.WatchStream, Subjects: []string{schemas.WatchStreamSubjects},
		Storage: jetstream.FileStorage, Duplicates: 2 * time.Minute,
	}); err != nil {
		t.Fatalf("create stream %s: %v", schemas.WatchStream, err)
	}

	toolsDir, workspace := t.TempDir(), t.TempDir()
	for name, src := range toolFiles {
		if err := os.WriteFile(filepath.Join(toolsDir, name), []byte(src), 0o644); err != nil {
			t.Fatalf("write tool file: %v", err)
		}
	}
	log := slog.New(slog.DiscardHandler)
	ctx, cancel := context.WithCancel(context.Background())
	reg, closeTools, err := executor.Tools(ctx, tools.Env{
		Executor: schemas.ExecutorEnv{SandboxID: id, ToolsDir: toolsDir, Workspace: workspace},
		Log:      log,
		Publish:  executor.Publisher(func() *nats.Conn { return nc }),
	})
	if err != nil {
		cancel()
		t.Fatalf("build tools: %v", err)
	}
	srv := executor.NewServer(nc, reg, executor.Config{SandboxID: id, ActionTimeout: time.Minute}, log)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("executor Serve: %v", err)
		}
		closeTools()
	})

	poll.Until(t, 10*time.Second, "the executor for "+id+" to answer pings", func() bool {
		_, err := nc.Request(schemas.PingSubject(id), nil, 200*time.Millisecond)
		return err == nil
	})
	return &Sandbox{ID: id, URL: ns.ClientURL(), Conn: nc, Workspace: workspace}
}

// Command sandox-executor is the daemon inside a sandbox container. It reads
// its configuration from the environment (schemas.ExecutorEnv, set by the
// orchestrator when it creates the container), opens the tool families it
// was given and the user's Python tool files, and serves the sandbox's NATS
// subjects until it is stopped.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/sandox/sandox/executor"
	"github.com/sandox/sandox/executor/limits"
	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/tools"
	"github.com/sandox/sandox/tools/outbox"
)

func main() {
	// The executor routes messages and runs tools as child processes;
	// one P saves it the thread wake-ups of handing goroutines to a
	// second one on every batch (the runtime gives a container at least
	// two). GOMAXPROCS in the environment still overrides.
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Getenv); err != nil {
		slog.New(slog.NewJSONHandler(os.Stderr, nil)).Error("executor stopped", "err", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, getenv func(string) string) error {
	var env schemas.ExecutorEnv
	if err := env.FromEnv(getenv); err != nil {
		return err
	}
	level := slog.LevelInfo
	if env.Debug {
		level = slog.LevelDebug
	}
	// The server adds the sandbox tag itself.
	log := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: level})).With("group", env.GroupID)

	// A family this build leaves out (web_tools): the full build serves
	// the sandbox instead, before anything is opened. A pooled sandbox's
	// families are its pool's, and a claim keeps them (the image is the
	// same), so it hands over here too.
	if err := execFull(env); err != nil {
		return err
	}

	// Before the tools start, so that what they run into is reported.
	watcher, err := limits.New(limitsConfig(env))
	if err != nil {
		return err
	}

	if env.EgressProxy != "" {
		stopForward, err := forwardEgress(ctx, env.EgressProxy, log)
		if err != nil {
			return err
		}
		defer stopForward()
	}
	// The tools send their requests over the connection of the sandbox's
	// own identity, made once the sandbox is known (after a claim).
	var conn atomic.Pointer[nats.Conn]
	// The sandbox's id as it is now: a pooled executor's changes at its
	// claim, after the families opened (their jobs publish under it).
	var sandboxID atomic.Value
	sandboxID.Store(env.SandboxID)
	toolsEnv := tools.Env{Executor: env, Request: request(&conn), Log: log.With("sandbox", env.SandboxID),
		Publish: executor.Publisher(conn.Load), Budget: outbox.NewBudget(env.StreamBytes), SandboxID: func() string { return sandboxID.Load().(string) }}
	// A pooled executor opens what it can while it waits for its claim.
	pending, err := executor.PreopenTools(ctx, toolsEnv)
	if err != nil {
		return err
	}
	if env.Pooled {
		if env, err = awaitClaim(ctx, env, log); err != nil {
			return err
		}
		toolsEnv.Executor, toolsEnv.Log = env, log.With("sandbox", env.SandboxID)
		sandboxID.Store(env.SandboxID)
	}
	nc, err := connect(env, log.With("sandbox", env.SandboxID))
	if err != nil {
		return err
	}
	defer nc.Close()
	conn.Store(nc)

	reg, closeTools, err := pending.Finish(ctx, toolsEnv)
	if err != nil {
		return err
	}
	defer closeTools()

	cfg := executor.Config{SandboxID: env.SandboxID, Limits: watcher}
	if env.WatchWorkspace {
		cfg.WatchWorkspace = env.Workspace
	}
	srv := executor.NewServer(nc, reg, cfg, log)
	return srv.Serve(ctx)
}

// connect connects to NATS as the executor of env.SandboxID, with the
// credentials in env.NATSCreds (read at each connect). It logs losing the
// bus and finding it again (through which server), the trace of a node
// that died under a sandbox.
func connect(env schemas.ExecutorEnv, log *slog.Logger) (*nats.Conn, error) {
	opts := []nats.Option{
		nats.Name("sandox-executor " + env.SandboxID),
		nats.RetryOnFailedConnect(true),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(500 * time.Millisecond),
		nats.DisconnectErrHandler(func(nc *nats.Conn, err error) {
			log.Warn("lost the bus; reconnecting", "err", err)
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			log.Info("reconnected to the bus", "server", nc.ConnectedUrlRedacted())
		}),
		// Replies to the executor's own requests come back under its
		// sandbox's subjects: its identity may not see _INBOX.>.
		nats.CustomInboxPrefix(schemas.SandboxInboxPrefix(env.SandboxID)),
	}
	if env.NATSCreds != "" {
		opts = append(opts, nats.UserCredentials(env.NATSCreds))
	}
	// A unix:// URL is the NATS socket of a sandbox without a network.
	url, dial := dialTarget(env.NATSURL)
	nc, err := nats.Connect(url, append(opts, dial...)...)
	if err != nil {
		return nil, fmt.Errorf("connect to NATS at %s: %w", env.NATSURL, err)
	}
	return nc, nil
}

// awaitClaim serves a pooled sandbox under its pool id until the
// orchestrator claims it (executor.AwaitClaim), and returns env as the
// claimed sandbox's: its id, group and families. The pool connection is
// closed first; the next connect reads the claimed sandbox's credentials,
// which the orchestrator wrote over the pool's.
func awaitClaim(ctx context.Context, env schemas.ExecutorEnv, log *slog.Logger) (schemas.ExecutorEnv, error) {
	c, err := executor.ReadClaim(env.NATSCreds)
	if err != nil {
		return env, err
	}
	if c.SandboxID == "" {
		nc, err := connect(env, log.With("sandbox", env.SandboxID))
		if err != nil {
			return env, err
		}
		c, err = executor.AwaitClaim(ctx, nc, env.SandboxID, log)
		nc.Close()
		if err != nil {
			return env, err
		}
	}
	env.SandboxID, env.GroupID, env.Families, env.Pooled = c.SandboxID, c.GroupID, c.Families, false
	return env, nil
}

// limitsConfig is what the limit watcher needs of the environment.
func limitsConfig(env schemas.ExecutorEnv) limits.Config {
	return limits.Config{
		CgroupRoot:     env.CgroupRoot,
		Workspace:      env.Workspace,
		DiskLimitBytes: env.DiskBytes,
	}
}

// request lets the tool families send requests over the executor's NATS
// connection, once conn holds it.
func request(conn *atomic.Pointer[nats.Conn]) func(ctx context.Context, subject string, data []byte) ([]byte, error) {
	return func(ctx context.Context, subject string, data []byte) ([]byte, error) {
		nc := conn.Load()
		if nc == nil {
			return nil, fmt.Errorf("request %s: the executor is not connected yet", subject)
		}
		m, err := nc.RequestWithContext(ctx, subject, data)
		if err != nil {
			return nil, fmt.Errorf("request %s: %w", subject, err)
		}
		return m.Data, nil
	}
}

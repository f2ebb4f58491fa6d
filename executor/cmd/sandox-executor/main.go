// Command sandox-executor is the daemon inside a sandbox container. It reads
// its configuration from the environment (set by the orchestrator when it
// creates the container), builds the tool registry (the Go built-ins and the
// user's Python tool files) and serves the sandbox's NATS subjects until it
// is stopped.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/sandox/sandox/executor"
	"github.com/sandox/sandox/executor/limits"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: logLevel()}))
	if err := run(ctx, log); err != nil {
		log.Error("executor stopped", "err", err)
		os.Exit(1)
	}
}

func logLevel() slog.Level {
	if os.Getenv("SANDOX_DEBUG") != "" {
		return slog.LevelDebug
	}
	return slog.LevelInfo
}

func run(ctx context.Context, log *slog.Logger) error {
	cfg, err := configFromEnv()
	if err != nil {
		return err
	}
	log = log.With("sandbox", cfg.SandboxID)

	// Before the tools start, so that what they run into is reported.
	watcher, err := limits.New(cfg.Limits)
	if err != nil {
		return err
	}

	reg, closeTools, err := executor.Tools(ctx, cfg.Tools, log)
	if err != nil {
		return err
	}
	defer closeTools()

	opts := []nats.Option{
		nats.Name("sandox-executor " + cfg.SandboxID),
		nats.RetryOnFailedConnect(true),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(500 * time.Millisecond),
	}
	if cfg.Creds != "" {
		opts = append(opts, nats.UserCredentials(cfg.Creds))
	}
	if cfg.EgressProxy != "" {
		stopForward, err := forwardEgress(ctx, cfg.EgressProxy, log)
		if err != nil {
			return err
		}
		defer stopForward()
	}

	url, dial := dialTarget(cfg.NATSURL)
	nc, err := nats.Connect(url, append(opts, dial...)...)
	if err != nil {
		return fmt.Errorf("connect to NATS at %s: %w", cfg.NATSURL, err)
	}
	defer nc.Close()

	srv := executor.NewServer(nc, reg, executor.Config{SandboxID: cfg.SandboxID, Limits: watcher}, log)
	return srv.Serve(ctx)
}

type config struct {
	SandboxID string
	NATSURL   string
	Creds     string
	// EgressProxy is the allowlist proxy's socket, forwarded from a
	// loopback port; "" for none.
	EgressProxy string
	Tools       executor.ToolsConfig
	Limits      limits.Config
}

// configFromEnv reads SANDOX_SANDBOX_ID and SANDOX_NATS_URL (required; a
// unix:///path URL dials a Unix socket),
// SANDOX_NATS_CREDS, SANDOX_EGRESS_PROXY (the allowlist proxy's socket),
// SANDOX_TOOLS_DIR, SANDOX_WORKSPACE, SANDOX_UV_INDEX,
// SANDOX_DISK_BYTES (the workspace's disk limit in bytes; unset or 0: none)
// and SANDOX_CGROUP_ROOT (default /sys/fs/cgroup).
func configFromEnv() (config, error) {
	cfg := config{
		SandboxID:   os.Getenv("SANDOX_SANDBOX_ID"),
		NATSURL:     os.Getenv("SANDOX_NATS_URL"),
		Creds:       os.Getenv("SANDOX_NATS_CREDS"),
		EgressProxy: os.Getenv("SANDOX_EGRESS_PROXY"),
		Tools: executor.ToolsConfig{
			ToolsDir:  envOr("SANDOX_TOOLS_DIR", "/opt/sandox/tools"),
			Workspace: envOr("SANDOX_WORKSPACE", "/workspace"),
			UVIndex:   os.Getenv("SANDOX_UV_INDEX"),
		},
	}
	cfg.Limits = limits.Config{
		CgroupRoot: envOr("SANDOX_CGROUP_ROOT", limits.DefaultConfig().CgroupRoot),
		Workspace:  cfg.Tools.Workspace,
	}
	var errs []error
	if v := os.Getenv("SANDOX_DISK_BYTES"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			errs = append(errs, fmt.Errorf("SANDOX_DISK_BYTES=%q: want the disk limit in bytes, or 0 for none", v))
		} else {
			cfg.Limits.DiskLimitBytes = n
		}
	}
	if cfg.SandboxID == "" {
		errs = append(errs, errors.New("SANDOX_SANDBOX_ID is not set"))
	}
	if cfg.NATSURL == "" {
		errs = append(errs, errors.New("SANDOX_NATS_URL is not set"))
	}
	return cfg, errors.Join(errs...)
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

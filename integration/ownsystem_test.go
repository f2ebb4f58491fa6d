package integration

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/internal/docker"
	"github.com/sandox/sandox/internal/natstest"
	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/auth"
	"github.com/sandox/sandox/services/natsd"
	"github.com/sandox/sandox/services/orchestrator"
	"github.com/sandox/sandox/services/orchestrator/runtime"
)

// ownSystem runs a sandox system of its own beside the test system's: a
// NATS server (same authority, its own socket) and one worker with cfg, so
// that every command goes to that worker. (Two workers on one command
// stream share its commands round-robin over their pull requests, in a
// pattern fixed by what each has pulled before: a test that needs one
// worker to take a command cannot count on the other's.) It returns a
// client connection. Its containers carry the system label cfg.System;
// the worker stops at cleanup, leaving no pooled container, and
// everything else of the system is removed.
func ownSystem(t *testing.T, cfg orchestrator.Config) *nats.Conn {
	t.Helper()
	sockDir, err := os.MkdirTemp("", "sandox-it-own")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	require.NoError(t, os.Chmod(sockDir, 0o755))
	ns := natstest.Start(t, func(c *natsd.Config) {
		c.Auth = env.auth
		c.Socket = filepath.Join(sockDir, "nats.sock")
	})
	connect := func(role auth.Role) *nats.Conn {
		creds, err := env.auth.Mint(cfg.Worker+" "+string(role), role, "")
		require.NoError(t, err)
		return natstest.Connect(t, ns, creds.Option())
	}
	control := connect(auth.RoleControl)
	cfg.NATSSocket = sockDir
	cfg.CredsDir = t.TempDir()
	require.NoError(t, os.Chmod(cfg.CredsDir, 0o755))
	w, err := orchestrator.NewWorker(t.Context(), control, docker.NewRuntime(env.docker).Engine(), cfg, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	require.NoError(t, err)
	wctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(wctx) }()
	t.Cleanup(func() {
		cancel()
		assert.NoError(t, <-done)
		ctx := context.Background()
		left, _ := env.docker.List(ctx, runtime.LabelSystem+"="+cfg.System)
		for _, c := range left {
			assert.False(t, schemas.IsPoolID(c.Labels[runtime.LabelSandbox]), "pooled container %s left by a stopped worker", c.Name)
			_ = env.docker.Remove(ctx, c.ID)
			_ = env.docker.RemoveVolume(ctx, runtime.VolumeName(c.Labels[runtime.LabelSandbox]))
		}
		nets, err := env.docker.Networks(ctx, runtime.LabelSystem+"="+cfg.System)
		assert.NoError(t, err)
		for _, n := range nets {
			assert.NoError(t, env.docker.RemoveNetwork(ctx, n.Name))
		}
	})
	return connect(auth.RoleClient)
}

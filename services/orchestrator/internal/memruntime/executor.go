package memruntime

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/sandox/sandox/executor"
	"github.com/sandox/sandox/executor/limits"
	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/orchestrator/identity"
	"github.com/sandox/sandox/services/orchestrator/runtime"
	"github.com/sandox/sandox/tools"
)

// Executor returns the process of a sandbox container that tests run: a
// real executor.Server for the sandbox named by the container's labels,
// connected to the NATS server at url with the credentials bound into the
// container, with a limits watcher on a workspace of its own (in t's
// temporary directories), serving until ctx ends. A pooled sandbox's
// executor waits for its claim first, as sandox-executor's does.
func Executor(t testing.TB, url string) Process {
	return func(ctx context.Context, spec runtime.ContainerSpec) error {
		return serveExecutor(ctx, t, url, spec)
	}
}

func serveExecutor(ctx context.Context, t testing.TB, url string, spec runtime.ContainerSpec) error {
	id := spec.Labels[runtime.LabelSandbox]
	var creds string
	for _, b := range spec.Binds {
		switch b.Target {
		case identity.CredsPath:
			creds = b.Source
		case filepath.Dir(identity.CredsPath): // a pooled sandbox's directory
			creds = filepath.Join(b.Source, filepath.Base(identity.CredsPath))
		}
	}
	connect := func() (*nats.Conn, error) {
		var opts []nats.Option
		if creds != "" {
			opts = append(opts, nats.UserCredentials(creds))
		}
		return nats.Connect(url, opts...)
	}
	if slices.Contains(spec.Env, schemas.EnvPooled+"=1") {
		claimed, err := awaitClaim(ctx, id, creds, connect)
		if err != nil {
			return err
		}
		id = claimed
	}
	nc, err := connect()
	if err != nil {
		return fmt.Errorf("executor of %s: %w", id, err)
	}
	defer nc.Close()
	ws := filepath.Join(t.TempDir(), "workspace")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(ws, "notes.txt"), make([]byte, 4096), 0o644); err != nil {
		return err
	}
	lw, err := limits.New(limits.Config{Workspace: ws, CgroupRoot: t.TempDir()})
	if err != nil {
		return err
	}
	srv := executor.NewServer(nc, tools.NewRegistry(), executor.Config{SandboxID: id, Limits: lw}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	return srv.Serve(ctx)
}

// awaitClaim is a pooled executor's wait for its claim, as
// sandox-executor's: the claim left beside its credentials, or the one it
// is sent on its pool identity's connection. It returns the claimed id.
func awaitClaim(ctx context.Context, poolID, creds string, connect func() (*nats.Conn, error)) (string, error) {
	c, err := executor.ReadClaim(creds)
	if err != nil || c.SandboxID != "" {
		return c.SandboxID, err
	}
	nc, err := connect()
	if err != nil {
		return "", fmt.Errorf("executor of %s: %w", poolID, err)
	}
	defer nc.Close()
	c, err = executor.AwaitClaim(ctx, nc, poolID, slog.New(slog.NewTextHandler(io.Discard, nil)))
	return c.SandboxID, err
}

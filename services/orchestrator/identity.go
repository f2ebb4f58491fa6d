package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/auth"
	"github.com/sandox/sandox/services/orchestrator/runtime"
)

// SandboxCredsPath is where a sandbox's executor finds its NATS
// credentials: a read-only bind of one file that only SandboxUser can read.
const SandboxCredsPath = "/run/sandox/nats.creds"

// credsSuffix ends the name of every credentials file in CredsDir.
const credsSuffix = ".creds"

// credsFile is the host path of a sandbox's credentials.
func (w *Worker) credsFile(sandboxID string) string {
	return filepath.Join(w.cfg.CredsDir, sandboxID+credsSuffix)
}

// mintIdentity asks the auth service for a new identity of the sandbox,
// allowed the database subjects of its grants, and writes its credentials into CredsDir, owned by the sandbox's uid with
// mode 0400. With CredsDir "" sandboxes get no identity (an open server).
func (w *Worker) mintIdentity(ctx context.Context, sandboxID string, grants ...schemas.DatabaseGrant) error {
	if w.cfg.CredsDir == "" {
		return nil
	}
	// A sandbox reaching NATS through the socket gets an identity that
	// works there alone: copied out and used over TCP it is refused.
	creds, err := auth.Client{NC: w.nc}.MintSandbox(ctx, sandboxID, w.cfg.NATSSocket != "", grants...)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(w.cfg.CredsDir, 0o700); err != nil {
		return fmt.Errorf("credentials directory: %w", err)
	}
	if err := writeCreds(w.credsFile(sandboxID), creds); err != nil {
		return fmt.Errorf("credentials of sandbox %s: %w", sandboxID, err)
	}
	return nil
}

// writeCreds replaces the file path with creds at once (a rename), owned
// by the sandbox's uid with mode 0400: an executor that reads it sees the
// old credentials or the new, never a part.
func writeCreds(path string, creds []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(creds)
	err = errors.Join(err, tmp.Chmod(0o400), tmp.Chown(sandboxUID, sandboxUID), tmp.Close())
	if err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// withIdentity mounts the sandbox's credentials into spec; executorEnv
// points the executor at them.
func (w *Worker) withIdentity(spec *runtime.ContainerSpec, sandboxID string) {
	if w.cfg.CredsDir == "" {
		return
	}
	if schemas.IsPoolID(sandboxID) {
		// A pooled sandbox's credentials are replaced when it is claimed:
		// it gets a directory, in which the file can be (pool.Pools.CredsDir).
		spec.Binds = append(spec.Binds, runtime.Bind{Source: w.pools.CredsDir(sandboxID), Target: filepath.Dir(SandboxCredsPath), ReadOnly: true})
		return
	}
	spec.Binds = append(spec.Binds, runtime.Bind{Source: w.credsFile(sandboxID), Target: SandboxCredsPath, ReadOnly: true})
}

// revokeIdentity revokes every identity of the sandbox, which drops its
// connections at once, and deletes its credentials file. A sandbox without
// an identity is no error.
func (w *Worker) revokeIdentity(ctx context.Context, sandboxID string) error {
	if w.cfg.CredsDir == "" {
		return nil
	}
	err := auth.Client{NC: w.nc}.RevokeSandbox(ctx, sandboxID)
	if rerr := os.Remove(w.credsFile(sandboxID)); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
		err = errors.Join(err, rerr)
	}
	return err
}

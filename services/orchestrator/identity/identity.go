package identity

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/nats-io/nats.go"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/auth"
	"github.com/sandox/sandox/services/orchestrator/runtime"
)

// CredsPath is where a sandbox's executor finds its NATS credentials: a
// read-only bind of one file that only the sandbox's user can read.
const CredsPath = "/run/sandox/nats.creds"

// suffix ends the name of every credentials file in the directory.
const suffix = ".creds"

// Identities mints and revokes the identities of sandboxes and keeps
// their credentials in one host directory. With no directory sandboxes
// get no identity (an open server), and every call does nothing. It is
// safe for concurrent use.
type Identities struct {
	nc  *nats.Conn
	dir string
	// socketOnly binds each identity to the server's socket: copied out
	// and used over TCP it is refused.
	socketOnly bool
	// uid owns the credentials files: the sandbox's user.
	uid int
}

// New returns the identities kept in dir, minted by the auth service over
// nc, each owned by uid; socketOnly makes identities that work over the
// server's socket alone.
func New(nc *nats.Conn, dir string, socketOnly bool, uid int) *Identities {
	return &Identities{nc: nc, dir: dir, socketOnly: socketOnly, uid: uid}
}

// File is the host path of sandbox id's credentials ("" without a
// directory).
func (i *Identities) File(id string) string {
	if i.dir == "" {
		return ""
	}
	return filepath.Join(i.dir, id+suffix)
}

// PoolDir is the host directory bound at the directory of CredsPath in
// pooled sandbox poolID: a claim writes the claimed sandbox's credentials
// there over the pool's. It is "" without a directory.
func (i *Identities) PoolDir(poolID string) string {
	if i.dir == "" {
		return ""
	}
	return filepath.Join(i.dir, poolID+".d")
}

// Mint asks the auth service for a new identity of sandbox id, allowed
// the database subjects of grants, and writes its credentials into the
// directory, owned by the sandbox's uid with mode 0400.
func (i *Identities) Mint(ctx context.Context, id string, grants ...schemas.DatabaseGrant) error {
	if i.dir == "" {
		return nil
	}
	creds, err := auth.Client{NC: i.nc}.MintSandbox(ctx, id, i.socketOnly, grants...)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(i.dir, 0o700); err != nil {
		return fmt.Errorf("credentials directory: %w", err)
	}
	if err := i.write(i.File(id), creds); err != nil {
		return fmt.Errorf("credentials of sandbox %s: %w", id, err)
	}
	return nil
}

// Revoke revokes every identity of sandbox id, which drops its
// connections at once, and deletes its credentials file. A sandbox
// without an identity is no error.
func (i *Identities) Revoke(ctx context.Context, id string) error {
	if i.dir == "" {
		return nil
	}
	err := auth.Client{NC: i.nc}.RevokeSandbox(ctx, id)
	if rerr := os.Remove(i.File(id)); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
		err = errors.Join(err, rerr)
	}
	return err
}

// Bind mounts sandbox id's credentials into spec: its file at CredsPath,
// or for a pooled sandbox its directory (PoolDir) at CredsPath's
// directory, so that a claim can replace the file in it.
func (i *Identities) Bind(spec *runtime.ContainerSpec, id string) {
	if i.dir == "" {
		return
	}
	if schemas.IsPoolID(id) {
		spec.Binds = append(spec.Binds, runtime.Bind{Source: i.PoolDir(id), Target: filepath.Dir(CredsPath), ReadOnly: true})
		return
	}
	spec.Binds = append(spec.Binds, runtime.Bind{Source: i.File(id), Target: CredsPath, ReadOnly: true})
}

// MakePoolDir makes the credentials directory of pooled sandbox poolID,
// owned by the sandbox's uid.
func (i *Identities) MakePoolDir(poolID string) error {
	if i.dir == "" {
		return nil
	}
	dir := i.PoolDir(poolID)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("credentials of pooled sandbox %s: %w", poolID, err)
	}
	if err := os.Chown(dir, i.uid, i.uid); err != nil {
		return fmt.Errorf("credentials of pooled sandbox %s: %w", poolID, err)
	}
	return nil
}

// CopyToPool writes the credentials of sandbox id into the directory of
// pooled sandbox poolID.
func (i *Identities) CopyToPool(poolID, id string) error {
	if i.dir == "" {
		return nil
	}
	creds, err := os.ReadFile(i.File(id))
	if err == nil {
		err = i.write(filepath.Join(i.PoolDir(poolID), filepath.Base(CredsPath)), creds)
	}
	if err != nil {
		return fmt.Errorf("credentials of pooled sandbox %s: %w", poolID, err)
	}
	return nil
}

// WriteToPool writes data as the file name in the directory of pooled
// sandbox poolID, as it writes credentials.
func (i *Identities) WriteToPool(poolID, name string, data []byte) error {
	if i.dir == "" {
		return nil
	}
	return i.write(filepath.Join(i.PoolDir(poolID), name), data)
}

// RemovePoolDir removes the credentials directory of pooled sandbox
// poolID.
func (i *Identities) RemovePoolDir(poolID string) error {
	if i.dir == "" {
		return nil
	}
	return os.RemoveAll(i.PoolDir(poolID))
}

// Holders lists the sandboxes with a credentials file.
func (i *Identities) Holders(context.Context) ([]string, error) {
	if i.dir == "" {
		return nil, nil
	}
	entries, err := os.ReadDir(i.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	var ids []string
	for _, e := range entries {
		if id, ok := strings.CutSuffix(e.Name(), suffix); ok && !strings.HasPrefix(id, ".") {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// write replaces the file path with data at once (a rename), owned by
// the sandbox's uid with mode 0400: an executor that reads it sees the
// old credentials or the new, never a part.
func (i *Identities) write(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(data)
	err = errors.Join(err, tmp.Chmod(0o400), tmp.Chown(i.uid, i.uid), tmp.Close())
	if err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

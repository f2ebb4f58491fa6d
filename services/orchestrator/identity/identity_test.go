package identity

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/internal/natstest"
	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/auth"
	"github.com/sandox/sandox/services/natsd"
	"github.com/sandox/sandox/services/orchestrator/runtime"
)

// testIdentities runs an embedded NATS server with the real auth service
// and returns the identities of a control-plane connection, kept in a
// temporary directory and owned by the test's own uid, and the server's
// URL.
func testIdentities(t *testing.T) (*Identities, string) {
	t.Helper()
	authority, err := auth.NewAuthority()
	require.NoError(t, err)
	ns := natstest.Start(t, func(c *natsd.Config) { c.Auth = authority })
	creds, err := authority.Mint("unit control", auth.RoleControl, "")
	require.NoError(t, err)
	nc := natstest.Connect(t, ns, creds.Option())
	return New(nc, filepath.Join(t.TempDir(), "creds"), false, os.Getuid()), ns.ClientURL()
}

func TestMintAndRevoke(t *testing.T) {
	ids, url := testIdentities(t)
	ctx := t.Context()
	require.NoError(t, ids.Mint(ctx, "sb1"))
	info, err := os.Stat(ids.File("sb1"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o400), info.Mode().Perm(), "only the sandbox's user reads it")

	nc, err := nats.Connect(url, nats.UserCredentials(ids.File("sb1")), nats.MaxReconnects(0))
	require.NoError(t, err, "the minted identity connects")
	closed := make(chan struct{})
	nc.SetClosedHandler(func(*nats.Conn) { close(closed) })
	holders, err := ids.Holders(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"sb1"}, holders)

	require.NoError(t, ids.Revoke(ctx, "sb1"))
	assert.NoFileExists(t, ids.File("sb1"))
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("the revoked identity's connection was not dropped")
	}
	_, err = nats.Connect(url, nats.UserCredentials(filepath.Join(t.TempDir(), "none")), nats.MaxReconnects(0))
	assert.Error(t, err)
	require.NoError(t, ids.Revoke(ctx, "sb1"), "revoking twice is no error")
}

func TestPooledCredentials(t *testing.T) {
	ids, _ := testIdentities(t)
	ctx := t.Context()
	const poolID = schemas.PoolIDPrefix + "0123456789abcdef"
	require.NoError(t, ids.Mint(ctx, poolID))
	require.NoError(t, ids.MakePoolDir(poolID))
	require.NoError(t, ids.CopyToPool(poolID, poolID))
	pool, err := os.ReadFile(filepath.Join(ids.PoolDir(poolID), filepath.Base(CredsPath)))
	require.NoError(t, err)

	// A claim writes the claimed sandbox's credentials over the pool's.
	require.NoError(t, ids.Mint(ctx, "sb1"))
	require.NoError(t, ids.CopyToPool(poolID, "sb1"))
	require.NoError(t, ids.WriteToPool(poolID, schemas.ClaimFile, []byte(`{"sandbox_id":"sb1"}`)))
	claimed, err := os.ReadFile(filepath.Join(ids.PoolDir(poolID), filepath.Base(CredsPath)))
	require.NoError(t, err)
	own, err := os.ReadFile(ids.File("sb1"))
	require.NoError(t, err)
	assert.Equal(t, own, claimed)
	assert.NotEqual(t, pool, claimed)
	assert.FileExists(t, filepath.Join(ids.PoolDir(poolID), schemas.ClaimFile))

	holders, err := ids.Holders(ctx)
	require.NoError(t, err)
	slices.Sort(holders)
	assert.Equal(t, []string{poolID, "sb1"}, holders, "a directory is no holder")

	assert.Error(t, ids.CopyToPool(poolID, "no-such-sandbox"))
	require.NoError(t, ids.RemovePoolDir(poolID))
	assert.NoDirExists(t, ids.PoolDir(poolID))
}

func TestBind(t *testing.T) {
	ids := New(nil, "/var/lib/sandox/creds", false, 10001)
	var spec runtime.ContainerSpec
	ids.Bind(&spec, "sb1")
	ids.Bind(&spec, schemas.PoolIDPrefix+"0123456789abcdef")
	assert.Equal(t, []runtime.Bind{
		{Source: "/var/lib/sandox/creds/sb1.creds", Target: CredsPath, ReadOnly: true},
		{Source: "/var/lib/sandox/creds/" + schemas.PoolIDPrefix + "0123456789abcdef.d", Target: "/run/sandox", ReadOnly: true},
	}, spec.Binds)
}

// TestNoDirectory checks an open server's setup: no directory, no
// identities, and every call a no-op.
func TestNoDirectory(t *testing.T) {
	ids := New(nil, "", false, 0)
	ctx := t.Context()
	assert.Empty(t, ids.File("sb1"))
	assert.Empty(t, ids.PoolDir("p"))
	assert.NoError(t, ids.Mint(ctx, "sb1"))
	assert.NoError(t, ids.Revoke(ctx, "sb1"))
	assert.NoError(t, ids.MakePoolDir("p"))
	assert.NoError(t, ids.CopyToPool("p", "sb1"))
	assert.NoError(t, ids.WriteToPool("p", "f", nil))
	assert.NoError(t, ids.RemovePoolDir("p"))
	holders, err := ids.Holders(ctx)
	assert.NoError(t, err)
	assert.Empty(t, holders)
	var spec runtime.ContainerSpec
	ids.Bind(&spec, "sb1")
	assert.Empty(t, spec.Binds)

	missing := New(nil, filepath.Join(t.TempDir(), "not-made"), false, 0)
	holders, err = missing.Holders(ctx)
	assert.NoError(t, err, "a directory not made yet holds nothing")
	assert.Empty(t, holders)
}

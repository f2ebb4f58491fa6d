package sdk

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/auth"
)

// TestCallerSigns checks that the headers the SDK puts on a command and on
// an action batch prove its user to the audit log's check (auth.CallerOf),
// for that command id, and for that batch id with those actions only.
func TestCallerSigns(t *testing.T) {
	authority, err := auth.NewAuthority()
	require.NoError(t, err)
	creds, err := authority.Mint("carol", auth.RoleClient, "")
	require.NoError(t, err)
	data, err := creds.File()
	require.NoError(t, err)
	file := filepath.Join(t.TempDir(), "carol.creds")
	require.NoError(t, os.WriteFile(file, data, 0o600))
	who, err := loadCaller(file)
	require.NoError(t, err)
	account := authority.AccountKey()

	cmd := nats.NewMsg("sandox.cmd.create_group")
	require.NoError(t, who.sign(cmd, []byte("cmd-1")))
	got := auth.CallerOf(cmd.Header, []byte("cmd-1"), account)
	assert.True(t, got.Verified, got.Note)
	assert.Equal(t, "carol", got.Name)
	assert.False(t, auth.CallerOf(cmd.Header, []byte("cmd-2"), account).Verified, "another command id")

	actions := []byte(`{"terminal_tools.run":{"command":"true"}}`)
	batch := nats.NewMsg(schemas.ActionsSubject("sb1"))
	require.NoError(t, who.sign(batch, schemas.SignedBatch("b1", actions)))
	assert.True(t, auth.CallerOf(batch.Header, schemas.SignedBatch("b1", actions), account).Verified)
	assert.False(t, auth.CallerOf(batch.Header, schemas.SignedBatch("b1", []byte(`{"terminal_tools.run":{"command":"id"}}`)), account).Verified, "other actions")

	var none *caller
	m := nats.NewMsg("x")
	require.NoError(t, none.sign(m, []byte("cmd-1")), "a client without credentials signs nothing")
	assert.Empty(t, m.Header.Get(schemas.HeaderCallerSig))
}

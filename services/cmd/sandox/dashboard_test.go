package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/services/auth"
)

func TestDashboardToken(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	t.Setenv(envDashboardToken, "")

	token, err := dashboardToken("127.0.0.1:8089", "")
	require.NoError(t, err)
	assert.Empty(t, token, "loopback needs no token")

	token, err = dashboardToken("0.0.0.0:8089", "")
	require.NoError(t, err)
	assert.Len(t, token, 64, "any other address gets a token made on first use")
	again, err := dashboardToken("0.0.0.0:8089", "")
	require.NoError(t, err)
	assert.Equal(t, token, again, "and keeps it")

	file := filepath.Join(t.TempDir(), "t")
	require.NoError(t, os.WriteFile(file, []byte("from-file\n"), 0o600))
	token, err = dashboardToken("127.0.0.1:8089", file)
	require.NoError(t, err)
	assert.Equal(t, "from-file", token, "a token file is wanted on loopback too")

	t.Setenv(envDashboardToken, "from-env")
	token, err = dashboardToken("0.0.0.0:8089", file)
	require.NoError(t, err)
	assert.Equal(t, "from-env", token)
}

func TestDashboardIdentity(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	t.Setenv("SANDOX_NATS_CREDS", "")
	a, err := auth.NewAuthority()
	require.NoError(t, err)
	dir := t.TempDir()
	for _, role := range []auth.Role{auth.RoleAudit, auth.RoleClient} {
		file := filepath.Join(dir, string(role)+".creds")
		require.NoError(t, writeCreds(a, file, "x", role))
		opt, noUsage, err := dashboardIdentity(auth.RoleClient, file)
		require.NoError(t, err)
		assert.NotNil(t, opt)
		assert.Equal(t, role == auth.RoleAudit, noUsage, "audit credentials from %s ask for no live use", file)
	}

	_, _, err = dashboardIdentity(auth.RoleSandbox, "")
	assert.ErrorContains(t, err, "want client, audit or control")
	_, _, err = dashboardIdentity(auth.RoleAudit, "")
	assert.ErrorContains(t, err, "run `sandox up`", "no authority and no client credentials")
}

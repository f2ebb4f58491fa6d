package main

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/services/auth"
)

// TestWriteSecretDirs checks what `sandox secrets` writes for Compose:
// per service the files `sandox up` copies in, the directory mode 0500
// and each file 0400, owned by the uid the service runs as; a second run
// replaces them.
func TestWriteSecretDirs(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the files are owned by the services' uids: needs root (CI runs as root)")
	}
	a, err := auth.LoadOrCreateAuthority(t.TempDir())
	require.NoError(t, err)
	src := secretSources{authority: a, neo4jPassword: []byte("pw"), dashboardToken: "tok"}
	dir := t.TempDir()
	table := controlPlane(upSettings{})
	require.NoError(t, writeSecretDirs(dir, table, src))
	require.NoError(t, writeSecretDirs(dir, table, src), "a second run replaces the files")
	for _, c := range table {
		want, err := c.CopyIn.files(src)
		require.NoError(t, err)
		sub := filepath.Join(dir, c.Service)
		st, err := os.Stat(sub)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o500), st.Mode().Perm(), sub)
		assert.Equal(t, uint32(c.CopyIn.UID), st.Sys().(*syscall.Stat_t).Uid, sub)
		entries, err := os.ReadDir(sub)
		require.NoError(t, err)
		assert.Len(t, entries, len(want), sub)
		for name, data := range want {
			p := filepath.Join(sub, name)
			st, err := os.Stat(p)
			require.NoError(t, err)
			assert.Equal(t, os.FileMode(0o400), st.Mode().Perm(), p)
			assert.Equal(t, uint32(c.CopyIn.UID), st.Sys().(*syscall.Stat_t).Uid, p)
			if (c.Service == "data" && name == "neo4j-password") || (c.Service == "dashboard" && name == "token") {
				got, err := os.ReadFile(p)
				require.NoError(t, err)
				assert.Equal(t, data, got)
			}
		}
	}
}

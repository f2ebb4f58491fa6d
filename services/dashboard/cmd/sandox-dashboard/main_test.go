package main

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/internal/natstest"
	"github.com/sandox/sandox/services/auth"
)

// freeAddr returns a loopback address nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

// TestRunServesWithToken runs the command as its container does, its
// settings from the environment, against an embedded NATS: the page wants
// the token of the file, and the command stops when its context ends.
func TestRunServesWithToken(t *testing.T) {
	ns := natstest.Start(t)
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	require.NoError(t, os.WriteFile(tokenFile, []byte("s3cret\n"), 0o400))
	addr := freeAddr(t)
	t.Setenv("SANDOX_NATS_URL", ns.ClientURL())
	t.Setenv("SANDOX_DASHBOARD_ADDR", addr)
	t.Setenv("SANDOX_DASHBOARD_TOKEN_FILE", tokenFile)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- run(ctx, nil, slog.New(slog.DiscardHandler)) }()

	url := "http://" + addr + "/"
	var res *http.Response
	require.Eventually(t, func() bool {
		r, err := http.Get(url)
		if err != nil {
			return false
		}
		r.Body.Close()
		res = r
		return true
	}, 10*time.Second, 50*time.Millisecond)
	assert.Equal(t, http.StatusUnauthorized, res.StatusCode, "no token")
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer s3cret")
	res, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, http.StatusOK, res.StatusCode, "the file's token, trimmed")

	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("run did not return after its context ended")
	}
}

// TestRunRefuses checks the settings it refuses: no token on an address
// that is not loopback, a token file that is missing or empty.
func TestRunRefuses(t *testing.T) {
	t.Setenv("SANDOX_NATS_URL", "nats://"+freeAddr(t))
	t.Setenv("SANDOX_DASHBOARD_TOKEN", "")
	log := slog.New(slog.DiscardHandler)
	require.ErrorContains(t, run(t.Context(), []string{"-addr", "0.0.0.0:0"}, log), "wants a token")
	missing := filepath.Join(t.TempDir(), "none")
	require.ErrorContains(t, run(t.Context(), []string{"-token-file", missing}, log), "dashboard token")
	empty := filepath.Join(t.TempDir(), "empty")
	require.NoError(t, os.WriteFile(empty, []byte("\n"), 0o400))
	require.ErrorContains(t, run(t.Context(), []string{"-token-file", empty}, log), "is empty")
	t.Setenv("SANDOX_DASHBOARD_ADDR", "nonsense")
	require.Error(t, run(t.Context(), []string{"-token-file", ""}, log))
}

// TestAuditCreds checks that audit credentials are told apart from the
// others: they may not ask for live use.
func TestAuditCreds(t *testing.T) {
	a, err := auth.LoadOrCreateAuthority(t.TempDir())
	require.NoError(t, err)
	dir := t.TempDir()
	for role, want := range map[auth.Role]bool{auth.RoleAudit: true, auth.RoleClient: false, auth.RoleControl: false} {
		c, err := a.Mint("dashboard", role, "")
		require.NoError(t, err)
		data, err := c.File()
		require.NoError(t, err)
		f := filepath.Join(dir, string(role)+".creds")
		require.NoError(t, os.WriteFile(f, data, 0o600))
		got, err := auditCreds(f)
		require.NoError(t, err)
		assert.Equal(t, want, got, role)
	}
	got, err := auditCreds("")
	require.NoError(t, err)
	assert.False(t, got)
	_, err = auditCreds(filepath.Join(dir, "none"))
	assert.Error(t, err)
}

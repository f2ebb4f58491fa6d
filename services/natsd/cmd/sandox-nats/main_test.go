package main

import (
	"context"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/services/auth"
)

// TestSettingsFromEnvironment starts the server with its settings from
// SANDOX_NATSD_* variables only, as a container's environment gives them.
func TestSettingsFromEnvironment(t *testing.T) {
	a, err := auth.NewAuthority()
	require.NoError(t, err)
	authDir := t.TempDir()
	require.NoError(t, a.Save(authDir))
	port := freePort(t)
	t.Setenv("SANDOX_NATSD_HOST", "127.0.0.1")
	t.Setenv("SANDOX_NATSD_PORT", strconv.Itoa(port))
	t.Setenv("SANDOX_NATSD_STORE", t.TempDir())
	t.Setenv("SANDOX_NATSD_AUTH", authDir)

	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- run(ctx, nil) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	require.Eventually(t, func() bool {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			return false
		}
		c.Close()
		return true
	}, 30*time.Second, 50*time.Millisecond, "the server never listened on %s (SANDOX_NATSD_PORT)", addr)
}

func TestSettingsFromEnvironmentRefuseBadValue(t *testing.T) {
	t.Setenv("SANDOX_NATSD_PORT", "many")
	err := run(t.Context(), nil)
	require.ErrorContains(t, err, `SANDOX_NATSD_PORT="many" (flag -port)`)
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

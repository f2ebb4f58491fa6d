package mcp

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRequireToken(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("served")) })
	guard, err := RequireToken("s3cret")
	require.NoError(t, err)
	srv := httptest.NewServer(guard(ok))
	t.Cleanup(srv.Close)

	tests := []struct {
		name   string
		header string
		status int
	}{
		{"the token", "Bearer s3cret", http.StatusOK},
		{"no header", "", http.StatusUnauthorized},
		{"another token", "Bearer s3cret2", http.StatusUnauthorized},
		{"not bearer", "Basic s3cret", http.StatusUnauthorized},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodPost, srv.URL, nil)
			require.NoError(t, err)
			if tt.header != "" {
				req.Header.Set("Authorization", tt.header)
			}
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			resp.Body.Close()
			assert.Equal(t, tt.status, resp.StatusCode)
		})
	}

	_, err = RequireToken("")
	assert.ErrorIs(t, err, ErrNoToken)
}

func TestLoadOrCreateToken(t *testing.T) {
	file := filepath.Join(t.TempDir(), "sub", "mcp.token")
	tok, created, err := LoadOrCreateToken(file)
	require.NoError(t, err)
	assert.True(t, created)
	assert.Len(t, tok, 64)
	info, err := os.Stat(file)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())

	again, created, err := LoadOrCreateToken(file)
	require.NoError(t, err)
	assert.False(t, created)
	assert.Equal(t, tok, again, "the same token the second time")

	require.NoError(t, os.Chmod(file, 0o644))
	_, _, err = LoadOrCreateToken(file)
	assert.ErrorContains(t, err, "others may read it")

	empty := filepath.Join(t.TempDir(), "empty")
	require.NoError(t, os.WriteFile(empty, nil, 0o600))
	_, _, err = LoadOrCreateToken(empty)
	assert.ErrorIs(t, err, ErrNoToken)
}

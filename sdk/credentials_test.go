package sdk_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/sdk"
)

func TestDefaultCredentials(t *testing.T) {
	cfg := t.TempDir()
	written := filepath.Join(cfg, "sandox", sdk.ClientCredentialsFile)
	tests := []struct {
		name  string
		env   string
		write bool
		want  string
	}{
		{"nothing anywhere", "", false, ""},
		{"what sandox up wrote", "", true, written},
		{"the environment wins", "/elsewhere/x.creds", true, "/elsewhere/x.creds"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("XDG_CONFIG_HOME", cfg)
			t.Setenv(sdk.CredentialsEnv, tt.env)
			os.RemoveAll(filepath.Dir(written))
			if tt.write {
				require.NoError(t, os.MkdirAll(filepath.Dir(written), 0o700))
				require.NoError(t, os.WriteFile(written, []byte("creds"), 0o600))
			}
			assert.Equal(t, tt.want, sdk.DefaultCredentials())
		})
	}
}

func TestDefaultURL(t *testing.T) {
	tests := []struct {
		name, env, want string
	}{
		{"where sandox up listens", "", "nats://127.0.0.1:4222"},
		{"the environment wins", "nats://a:4222,nats://b:4222", "nats://a:4222,nats://b:4222"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(sdk.URLEnv, tt.env)
			assert.Equal(t, tt.want, sdk.DefaultURL())
		})
	}
}

package sdk

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/nats-io/nats.go"
)

// Where a client finds NATS and its credentials when none is given.
const (
	// URLEnv names the NATS URL (or a comma-separated list of a
	// cluster's) that overrides nats://127.0.0.1:4222.
	URLEnv = "SANDOX_NATS_URL"
	// CredentialsEnv names a .creds file that overrides the default.
	CredentialsEnv = "SANDOX_NATS_CREDS"
	// ClientCredentialsFile is the file `sandox up` writes, with mode 0600,
	// in ConfigDir.
	ClientCredentialsFile = "client.creds"
)

// ConfigDir returns sandox's directory under the user's configuration
// directory: $XDG_CONFIG_HOME/sandox, or ~/.config/sandox on Linux.
func ConfigDir() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "sandox"), nil
}

// DefaultURL returns the NATS URL a client uses when it is given none:
// $SANDOX_NATS_URL when set, else nats://127.0.0.1:4222, where `sandox up`
// listens. The Python SDK's default_url does the same.
func DefaultURL() string {
	if u := os.Getenv(URLEnv); u != "" {
		return u
	}
	return nats.DefaultURL
}

// DefaultCredentials returns the credentials file a client uses when it is
// given none: $SANDOX_NATS_CREDS when set, else client.creds in ConfigDir
// when that file exists, else "" (connect without credentials).
func DefaultCredentials() string {
	if f := os.Getenv(CredentialsEnv); f != "" {
		return f
	}
	dir, err := ConfigDir()
	if err != nil {
		return ""
	}
	f := filepath.Join(dir, ClientCredentialsFile)
	if _, err := os.Stat(f); errors.Is(err, fs.ErrNotExist) {
		return ""
	}
	return f
}

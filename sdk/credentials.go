package sdk

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// Where a client finds its NATS credentials when none is given.
const (
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

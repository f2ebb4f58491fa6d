package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/sandox/sandox/sdk"
	"github.com/sandox/sandox/services/auth"
)

// Where the control plane's containers get their secrets.
const (
	natsAuthDir     = "/etc/sandox-auth"
	orchCredsDir    = "/etc/sandox-control"
	orchCredsFile   = orchCredsDir + "/nats.creds"
	sandboxCredsDir = "/var/lib/sandox/creds"
	// authorityLabel carries the account key a control-plane container
	// was set up with; another authority means recreating it.
	authorityLabel = "dev.sandox.authority"
	// natsContextName is the NATS CLI context sandox up writes.
	natsContextName = "sandox"
)

// identities are what sandox up hands out: the authority (kept in the
// user's config directory) and the path of the client credentials.
type identities struct {
	authority   *auth.Authority
	clientCreds string
}

// loadIdentities reads the authority in the user's config directory, or
// makes one, and makes sure the client credentials there were signed by it
// and carry the client role's permissions as they are now.
func loadIdentities() (identities, error) {
	dir, err := sdk.ConfigDir()
	if err != nil {
		return identities{}, err
	}
	a, err := auth.LoadOrCreateAuthority(filepath.Join(dir, "authority"))
	if err != nil {
		return identities{}, err
	}
	path := filepath.Join(dir, sdk.ClientCredentialsFile)
	if data, err := os.ReadFile(path); err == nil {
		if c, err := auth.ParseCreds(data); err == nil && a.Issued(c) && auth.Current(c, auth.RoleClient) {
			return identities{authority: a, clientCreds: path}, nil
		}
	}
	if err := writeCreds(a, path, "client", auth.RoleClient); err != nil {
		return identities{}, err
	}
	fmt.Printf("client credentials written to %s\n", path)
	return identities{authority: a, clientCreds: path}, nil
}

// writeCreds mints an identity of role and writes its .creds file with mode
// 0600.
func writeCreds(a *auth.Authority, path, name string, role auth.Role) error {
	data, err := mintFile(a, name, role)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return err
	}
	return os.Chmod(path, 0o600) // an older file keeps its mode otherwise
}

// mintFile mints an identity of role named name and returns its .creds
// file.
func mintFile(a *auth.Authority, name string, role auth.Role) ([]byte, error) {
	c, err := a.Mint(name, role, "")
	if err != nil {
		return nil, err
	}
	return c.File()
}

// writeNATSContext writes the NATS CLI context "sandox" (URL and client
// credentials) and selects it unless the user selected another, so that
// `nats request ...` works with no flags. It says what it did.
func writeNATSContext(url, creds string) error {
	base, err := os.UserConfigDir()
	if err != nil {
		return err
	}
	dir := filepath.Join(base, "nats", "context")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	data, _ := json.MarshalIndent(map[string]string{
		"description": "sandox (written by sandox up)",
		"url":         url,
		"creds":       creds,
	}, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, natsContextName+".json"), data, 0o600); err != nil {
		return err
	}
	selected := filepath.Join(base, "nats", "context.txt")
	cur, err := os.ReadFile(selected)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	switch name := strings.TrimSpace(string(cur)); name {
	case "", natsContextName:
		if err := os.WriteFile(selected, []byte(natsContextName), 0o600); err != nil {
			return err
		}
		fmt.Printf("NATS CLI context %q written and selected\n", natsContextName)
	default:
		fmt.Printf("NATS CLI context %q written; your selected context is %q: use `nats --context %s ...` or `nats context select %s`\n", natsContextName, name, natsContextName, natsContextName)
	}
	return nil
}

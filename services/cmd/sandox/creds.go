package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/sandox/sandox/sdk"
	"github.com/sandox/sandox/services/auth"
)

// creds issues another identity from the authority `sandox up` made, for
// example read-only audit credentials for a colleague or a dashboard.
func creds(args []string) error {
	fs := flag.NewFlagSet("creds", flag.ContinueOnError)
	role := fs.String("role", string(auth.RoleClient), "client, audit (read-only), control, search or data")
	name := fs.String("name", "", "a name for the identity (shown in the server's connection list)")
	out := fs.String("o", "", "file to write (mode 0600); \"\" prints to stdout")
	if err := fs.Parse(args); err != nil {
		return err
	}
	r := auth.Role(*role)
	if r == auth.RoleSandbox {
		return errors.New("sandbox identities are minted by the orchestrator for each sandbox")
	}
	dir, err := sdk.ConfigDir()
	if err != nil {
		return err
	}
	a, err := auth.LoadAuthority(filepath.Join(dir, "authority"))
	if err != nil {
		return fmt.Errorf("%w (run `sandox up` first)", err)
	}
	if *name == "" {
		*name = *role
	}
	if *out != "" {
		if err := writeCreds(a, *out, *name, r); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "%s credentials written to %s\n", r, *out)
		return nil
	}
	data, err := mintFile(a, *name, r)
	if err != nil {
		return err
	}
	_, err = os.Stdout.Write(data)
	return err
}

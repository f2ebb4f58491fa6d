package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

// secrets writes, for Compose, the files `sandox up` copies into each
// control-plane container: one directory per service (nats, orchestrator,
// data, search, dashboard) under -o, owned by the uid the service runs as, its files
// readable by that uid only, as compose.yaml binds them (the data
// service's with copies of the operator's shared AWS files). It makes the
// authority, the client credentials, the neo4j password and the
// dashboard's token as `sandox up` does when they do not exist yet.
func secrets(args []string) error {
	fs := flag.NewFlagSet("secrets", flag.ContinueOnError)
	out := fs.String("o", "/etc/sandox", "directory to write (compose.yaml's SANDOX_SECRETS_DIR)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if os.Geteuid() != 0 {
		return errors.New("the services' files must be owned by their uids: run as root")
	}
	_, src, err := prepareSecrets()
	if err != nil {
		return err
	}
	if err := writeSecretDirs(*out, controlPlane(upSettings{}), src); err != nil {
		return err
	}
	fmt.Printf("control-plane secrets written to %s\n", *out)
	fmt.Printf("dashboard (with compose.yaml's default port) at %s\n", dashboardURL(src.dashboardToken))
	return nil
}

// writeSecretDirs writes each container's secrets into dir/<service>,
// replacing what was there: the directory mode 0500 and its files 0400,
// owned by the container's uid, as `sandox up` copies them in.
func writeSecretDirs(dir string, table []controlPlaneContainer, src secretSources) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, c := range table {
		files, err := c.CopyIn.files(src)
		if err != nil {
			return err
		}
		sub := filepath.Join(dir, c.Service)
		if err := os.RemoveAll(sub); err != nil {
			return err
		}
		if err := os.Mkdir(sub, 0o700); err != nil {
			return err
		}
		for name, data := range files {
			path := filepath.Join(sub, name)
			if err := os.WriteFile(path, data, 0o400); err != nil {
				return err
			}
			if err := os.Chown(path, c.CopyIn.UID, c.CopyIn.UID); err != nil {
				return err
			}
		}
		if err := os.Chown(sub, c.CopyIn.UID, c.CopyIn.UID); err != nil {
			return err
		}
		if err := os.Chmod(sub, 0o500); err != nil {
			return fmt.Errorf("secrets of %s: %w", c.Service, err)
		}
	}
	return nil
}

// prepareSecrets loads, or makes when they do not exist yet, everything the
// control plane's containers are given: the identities, the Neo4j password,
// the population directory, the operator's AWS settings and the dashboard's
// token. `sandox up` and `sandox secrets` both start from it.
func prepareSecrets() (identities, secretSources, error) {
	ids, err := loadIdentities()
	if err != nil {
		return identities{}, secretSources{}, err
	}
	pw, err := neo4jSecret()
	if err != nil {
		return identities{}, secretSources{}, err
	}
	if err := os.MkdirAll(populateDir, 0o755); err != nil {
		return identities{}, secretSources{}, err
	}
	aws, err := dataAWS()
	if err != nil {
		return identities{}, secretSources{}, err
	}
	token, err := storedDashboardToken()
	if err != nil {
		return identities{}, secretSources{}, err
	}
	return ids, secretSources{authority: ids.authority, neo4jPassword: pw, aws: aws, dashboardToken: token}, nil
}

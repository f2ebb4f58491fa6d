// Package awsenv picks the operator's AWS settings that the data service's
// container gets, so that s3:// population sources authenticate as the
// AWS SDK's default chain would on the operator's host: the AWS_*
// variables, and the shared config and credentials files, copied into the
// container because the paths they name (and the files' owners) are the
// host's. `sandox up` gives the result to sandox-data, and to no other
// container. docs/databases.md describes what passes.
package awsenv

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// Settings are the AWS settings of a container: its variables, and the
// files to copy into the directory they name.
type Settings struct {
	// Env holds the AWS_* variables, "NAME=value", sorted by name; those
	// that name a file name its copy in the container.
	Env []string
	// Files maps a file name in the container's directory to its content.
	Files map[string][]byte
	// Digest is a SHA-256 of Env and Files: it changes when any of them
	// does, so a caller can tell a container made with other settings
	// (a label) without holding the secrets.
	Digest string
}

// fileVars are the variables that name a file the SDK reads, and the name
// of the file's copy in the container.
var fileVars = []struct{ name, copy string }{
	{"AWS_CONFIG_FILE", "aws-config"},
	{"AWS_SHARED_CREDENTIALS_FILE", "aws-credentials"},
	{"AWS_CA_BUNDLE", "aws-ca-bundle.pem"},
	{"AWS_WEB_IDENTITY_TOKEN_FILE", "aws-web-identity-token"},
}

// homeDefaults are the files the SDK reads when their variable is unset:
// ~/.aws/config and ~/.aws/credentials.
var homeDefaults = map[string]string{
	"AWS_CONFIG_FILE":             "config",
	"AWS_SHARED_CREDENTIALS_FILE": "credentials",
}

// ForContainer returns the AWS settings of environ (the operator's
// environment, "NAME=value") for a container whose copies of the files
// live in dir (a path in the container).
//
// Every non-empty AWS_* variable passes, except those naming a file
// (AWS_CONFIG_FILE, AWS_SHARED_CREDENTIALS_FILE, AWS_CA_BUNDLE,
// AWS_WEB_IDENTITY_TOKEN_FILE): the file is read on the host and the
// variable names its copy in dir instead. When AWS_CONFIG_FILE or
// AWS_SHARED_CREDENTIALS_FILE is unset, ~/.aws/config and
// ~/.aws/credentials (HOME of environ) are taken if they exist. Nothing
// else passes. A file that a variable names but that cannot be read is an
// error naming the variable and the path.
func ForContainer(environ []string, dir string) (Settings, error) {
	vars := map[string]string{}
	home := ""
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		if name == "HOME" {
			home = value
		}
		if strings.HasPrefix(name, "AWS_") && value != "" {
			vars[name] = value
		}
	}
	s := Settings{Files: map[string][]byte{}}
	for _, fv := range fileVars {
		hostPath, named := vars[fv.name]
		delete(vars, fv.name)
		if !named {
			if base, ok := homeDefaults[fv.name]; ok && home != "" {
				hostPath = filepath.Join(home, ".aws", base)
			}
		}
		if hostPath == "" {
			continue
		}
		data, err := os.ReadFile(hostPath)
		if !named && errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			how := "the default of " + fv.name
			if named {
				how = fv.name
			}
			return Settings{}, fmt.Errorf("AWS settings for the data service: %s (%s): %w", how, hostPath, err)
		}
		s.Files[fv.copy] = data
		vars[fv.name] = path.Join(dir, fv.copy)
	}
	for name, value := range vars {
		s.Env = append(s.Env, name+"="+value)
	}
	slices.Sort(s.Env)
	s.Digest = digest(s)
	return s, nil
}

// digest hashes the variables and the files, each length-prefixed so that
// no two different settings give the same input.
func digest(s Settings) string {
	h := sha256.New()
	for _, kv := range s.Env {
		fmt.Fprintf(h, "env %d %s\n", len(kv), kv)
	}
	names := make([]string, 0, len(s.Files))
	for name := range s.Files {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		fmt.Fprintf(h, "file %d %s %d\n", len(name), name, len(s.Files[name]))
		h.Write(s.Files[name])
	}
	return hex.EncodeToString(h.Sum(nil))
}

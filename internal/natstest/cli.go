package natstest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// CLIPackage is the NATS CLI's package, a tool dependency in go.mod, so
// that its version is pinned with the module's and it builds against the
// module's own nats-server and nats.go.
const CLIPackage = "github.com/nats-io/natscli/nats"

// cliHint says how to get the NATS CLI where CLI looks for it.
const cliHint = "build/scripts/test.sh builds it into .cache/bin; by hand: go build -o .cache/bin/nats " + CLIPackage

// CLI returns the path of the NATS CLI: `nats` on PATH, else the one
// build/scripts/test.sh builds into the module's .cache/bin. Without one
// the test is skipped, or fails when the environment variable CI is set,
// since CI must run every test.
func CLI(t testing.TB) string {
	t.Helper()
	if p, err := exec.LookPath("nats"); err == nil {
		return p
	}
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if mod := strings.TrimSpace(string(out)); err == nil && mod != "" && mod != os.DevNull {
		p := filepath.Join(filepath.Dir(mod), ".cache", "bin", "nats")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("the NATS CLI is not on PATH nor in .cache/bin; " + cliHint)
	}
	t.Skip("the NATS CLI is not on PATH nor in .cache/bin; " + cliHint)
	return ""
}

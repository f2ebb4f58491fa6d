package integration

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/sdk"
	"github.com/sandox/sandox/services/auth"
	"github.com/sandox/sandox/services/orchestrator/runtime"
)

// newGroup returns a started group whose End runs at cleanup.
func newGroup(t *testing.T, cfg sdk.GroupConfig, opts ...sdk.Option) *sdk.SandboxGroup {
	t.Helper()
	g, err := sdk.NewSandboxGroup(cfg, append([]sdk.Option{sdk.WithConn(env.nc), sdk.WithCommandTimeout(5 * time.Minute)}, opts...)...)
	require.NoError(t, err)
	require.NoError(t, g.Start(t.Context()))
	t.Cleanup(func() {
		// A test may have ended the group itself.
		if err := g.End(context.Background()); !errors.Is(err, sdk.ErrNotFound) {
			assert.NoError(t, err, "end group %s", cfg.ID)
		}
		assert.Equal(t, 0, groupContainers(t, cfg.ID), "containers left after ending group %s", cfg.ID)
	})
	return g
}

// startSandbox creates and starts a sandbox of g.
func startSandbox(t *testing.T, g *sdk.SandboxGroup, id string, opts sdk.SandboxOptions) *sdk.Sandbox {
	t.Helper()
	sb, err := g.CreateSandbox(t.Context(), id, opts)
	require.NoError(t, err)
	require.NoError(t, sb.Start(t.Context()))
	return sb
}

// writeFile writes a file under a test temp dir and returns its path.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	return p
}

// send runs a batch in the user's JSON format and fails on a batch error.
func send(t *testing.T, sb *sdk.Sandbox, payload string) []schemas.Observation {
	t.Helper()
	obs, err := sb.SendActionsJSON(t.Context(), []byte(payload))
	require.NoError(t, err, "send %s", payload)
	return obs
}

// mustOK fails unless the observation has no error.
func mustOK(t *testing.T, o schemas.Observation) {
	t.Helper()
	require.Nil(t, o.Error, "%s: stdout %q, stderr %q", o.Tool, o.Stdout, o.Stderr)
}

// groupContainers lists the containers carrying the group's label.
func groupContainers(t *testing.T, group string) int {
	t.Helper()
	// Sandboxes only: a group with database grants also runs its databases.
	left, err := env.docker.List(context.Background(), runtime.LabelGroup+"="+group, runtime.LabelSandbox)
	require.NoError(t, err)
	return len(left)
}

// credsFile writes the credentials of a new identity of role into a test
// temp dir, as `sandox creds` would, and returns the file's path.
func credsFile(t *testing.T, role auth.Role) string {
	t.Helper()
	creds, err := env.auth.Mint("integration "+string(role), role, "")
	require.NoError(t, err)
	data, err := creds.File()
	require.NoError(t, err)
	p := filepath.Join(t.TempDir(), string(role)+".creds")
	require.NoError(t, os.WriteFile(p, data, 0o600))
	return p
}

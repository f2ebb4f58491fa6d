package sandboxes

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
)

func TestExecutorEnvOfASandbox(t *testing.T) {
	s := &Service{cfg: Config{SandboxNATSURL: "unix:///run/sandox-nats/nats.sock", CredsDir: "/var/lib/sandox/creds"}}
	st := &schemas.SandboxStatus{ID: "sb-1", GroupID: "g-1", Families: []string{"filesystem_tools"}, Resources: schemas.ResolvedResources{DiskBytes: 32 << 20},
		Egress: &schemas.Egress{Policy: schemas.EgressAllowlist, Allow: []string{"pypi.example.internal"}, PackageIndex: "https://pypi.example.internal/simple"}}
	var got schemas.ExecutorEnv
	env := s.executorEnv(st).Environ()
	require.NoError(t, got.FromEnv(func(k string) string {
		for _, kv := range env {
			if key, v, _ := strings.Cut(kv, "="); key == k {
				return v
			}
		}
		return ""
	}))
	assert.Equal(t, "sb-1", got.SandboxID)
	assert.Equal(t, "g-1", got.GroupID)
	assert.Equal(t, s.cfg.SandboxNATSURL, got.NATSURL)
	assert.Equal(t, []string{"filesystem_tools"}, got.Families)
	assert.Equal(t, int64(32<<20), got.DiskBytes)
	assert.Equal(t, "/workspace", got.Workspace)
	assert.Equal(t, "https://pypi.example.internal/simple", got.PackageIndex)
}

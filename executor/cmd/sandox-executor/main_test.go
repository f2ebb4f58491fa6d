package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/executor/limits"
	"github.com/sandox/sandox/schemas"
)

func TestLimitsConfigFromEnv(t *testing.T) {
	tests := []struct {
		name string
		disk string
		want int64
	}{
		{"unset", "", 0},
		{"none", "0", 0},
		{"64 MiB", "67108864", 64 << 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vars := map[string]string{
				schemas.EnvSandboxID:  "sb-1",
				schemas.EnvNATSURL:    "nats://127.0.0.1:4222",
				schemas.EnvWorkspace:  "/ws",
				schemas.EnvCgroupRoot: "/cg",
				schemas.EnvDiskBytes:  tt.disk,
			}
			var env schemas.ExecutorEnv
			require.NoError(t, env.FromEnv(func(k string) string { return vars[k] }))
			assert.Equal(t, limits.Config{CgroupRoot: "/cg", Workspace: "/ws", DiskLimitBytes: tt.want}, limitsConfig(env))
		})
	}
}

func TestRunRefusesAnIncompleteEnvironment(t *testing.T) {
	err := run(t.Context(), func(string) string { return "" })
	require.Error(t, err)
	assert.Contains(t, err.Error(), schemas.EnvSandboxID)
}

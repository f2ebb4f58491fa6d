package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestConfigFromEnvDiskBytes(t *testing.T) {
	tests := []struct {
		name    string
		value   string
		want    int64
		wantErr bool
	}{
		{"unset", "", 0, false},
		{"none", "0", 0, false},
		{"64 MiB", "67108864", 64 << 20, false},
		{"with a unit", "64MiB", 0, true},
		{"negative", "-1", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("SANDOX_SANDBOX_ID", "sb-1")
			t.Setenv("SANDOX_NATS_URL", "nats://127.0.0.1:4222")
			t.Setenv("SANDOX_WORKSPACE", "/ws")
			t.Setenv("SANDOX_CGROUP_ROOT", "/cg")
			t.Setenv("SANDOX_DISK_BYTES", tt.value)
			cfg, err := configFromEnv()
			if tt.wantErr {
				require.ErrorContains(t, err, "SANDOX_DISK_BYTES")
				return
			}
			require.NoError(t, err)
			l := cfg.Limits
			assert.Equal(t, tt.want, l.DiskLimitBytes, "disk limit")
			assert.Equal(t, "/ws", l.Workspace, "workspace")
			assert.Equal(t, "/cg", l.CgroupRoot, "cgroup root")
		})
	}
}

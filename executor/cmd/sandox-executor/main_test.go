package main

import (
	"strings"
	"testing"
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
				if err == nil || !strings.Contains(err.Error(), "SANDOX_DISK_BYTES") {
					t.Fatalf("got %v, want an error naming SANDOX_DISK_BYTES", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			l := cfg.Limits
			if l.DiskLimitBytes != tt.want || l.Workspace != "/ws" || l.CgroupRoot != "/cg" {
				t.Fatalf("got %+v, want disk %d, workspace /ws, cgroup root /cg", l, tt.want)
			}
		})
	}
}

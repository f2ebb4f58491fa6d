package main

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/sandox/sandox/schemas"
)

func TestFullTarget(t *testing.T) {
	// A family unknown to this build stands for one the nowebtools build
	// leaves out (web_tools there).
	tests := []struct {
		name     string
		self     string
		families []string
		exists   bool
		want     string
	}{
		{"default families", "/usr/local/bin/sandox-executor", nil, true, ""},
		{"built-in families", "/usr/local/bin/sandox-executor", []string{"filesystem_tools", "terminal_tools.py"}, true, ""},
		{"left-out family", "/usr/local/bin/sandox-executor", []string{"filesystem_tools", "left_out_tools"}, true, "/usr/local/bin/sandox-executor-full"},
		{"no full build beside it", "/usr/local/bin/sandox-executor", []string{"left_out_tools"}, false, ""},
		{"already the full build", "/usr/local/bin/sandox-executor-full", []string{"left_out_tools"}, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := fullTarget(tt.self, schemas.ExecutorEnv{Families: tt.families}, func(string) bool { return tt.exists })
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestHandOverEnviron(t *testing.T) {
	environ := []string{"HOME=/workspace", "SANDOX_OTHER=kept", "SANDOX_SANDBOX_ID=pool-1", "SANDOX_POOLED=1", "SANDOX_NATS_URL=unix:///run/nats.sock", "UV_PYTHON=python3"}
	env := schemas.ExecutorEnv{SandboxID: "sb-1", GroupID: "g-1", NATSURL: "unix:///run/nats.sock", Families: []string{"web_tools"}}
	got := handOverEnviron(environ, env)
	assert.Equal(t, []string{
		"HOME=/workspace", "SANDOX_OTHER=kept", "UV_PYTHON=python3",
		"SANDOX_SANDBOX_ID=sb-1", "SANDOX_GROUP_ID=g-1", "SANDOX_NATS_URL=unix:///run/nats.sock", "SANDOX_TOOL_FAMILIES=web_tools",
	}, got)
}

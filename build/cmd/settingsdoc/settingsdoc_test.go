package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// repoRoot is the repository's root, seen from this package's directory.
const repoRoot = "../../.."

// TestSettingsDocCurrent fails when a flag or an environment variable
// changed in the code and docs/settings.md was not regenerated.
func TestSettingsDocCurrent(t *testing.T) {
	want, err := generate(repoRoot)
	require.NoError(t, err, "generate the settings reference")
	got, err := os.ReadFile(filepath.Join(repoRoot, "docs", "settings.md"))
	require.NoError(t, err, "read docs/settings.md (run go tool task settings)")
	// Not require.Equal: a diff of two long pages says less than the fix.
	if !bytes.Equal(got, want) {
		t.Fatal("docs/settings.md is out of date: run go tool task settings (or go generate ./build/cmd/settingsdoc)")
	}
}

// TestSettingsDocChecksDescriptions checks that the generator refuses a
// variable the code reads without a description, and a description of a
// variable no code reads.
func TestSettingsDocChecksDescriptions(t *testing.T) {
	s, err := collect(repoRoot)
	require.NoError(t, err)
	require.NoError(t, s.check())

	tests := []struct {
		name string
		edit func(env map[string][]string, docs map[string]envDoc)
		want string
	}{
		{
			name: "read but not described",
			edit: func(env map[string][]string, _ map[string]envDoc) { env["SANDOX_NEW_SETTING"] = []string{"x/main.go"} },
			want: "x/main.go reads SANDOX_NEW_SETTING, which envDocs",
		},
		{
			name: "described but not read",
			edit: func(_ map[string][]string, docs map[string]envDoc) {
				docs["SANDOX_GONE"] = envDoc{Component: "data", Text: "gone"}
			},
			want: "describes SANDOX_GONE, which no code reads",
		},
		{
			name: "unknown component",
			edit: func(_ map[string][]string, docs map[string]envDoc) {
				docs["SANDOX_NATS_URL"] = envDoc{Component: "nowhere", Text: "x"}
			},
			want: `SANDOX_NATS_URL: no component "nowhere"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			saved := envDocs
			t.Cleanup(func() { envDocs = saved })
			envDocs = make(map[string]envDoc, len(saved))
			for k, v := range saved {
				envDocs[k] = v
			}
			s, err := collect(repoRoot)
			require.NoError(t, err)
			tt.edit(s.env, envDocs)
			err = s.check()
			require.Error(t, err)
			require.Contains(t, err.Error(), tt.want)
		})
	}
}

// TestSettingsDocExtracts checks what the generator reads from the code:
// a flag's default through orchestrator.DefaultConfig, the variable it
// falls back to, and what `sandox up` sets and passes through.
func TestSettingsDocExtracts(t *testing.T) {
	s, err := collect(repoRoot)
	require.NoError(t, err)
	find := func(command, name string) flagSetting {
		t.Helper()
		for _, f := range s.flags {
			if f.Command == command && f.Name == name {
				return f
			}
		}
		t.Fatalf("no flag -%s of %s", name, command)
		return flagSetting{}
	}
	tests := []struct {
		name, command, flag string
		want                flagSetting
	}{
		{"env default", "sandox-orchestrator", "nats", flagSetting{Type: "string", Default: `"nats://127.0.0.1:4222"`, Env: "SANDOX_NATS_URL"}},
		{"nested DefaultConfig field", "sandox-orchestrator", "events-max-age", flagSetting{Type: "duration", Default: "168h0m0s"}},
		{"subcommand", "sandox up", "pool", flagSetting{Type: "int", Default: "2"}},
		{"python argparse", "qdrantedge", "-listen", flagSetting{Type: "string", Default: `"0.0.0.0:6334"`, Env: "QDRANT_EDGE_LISTEN"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := find(tt.command, tt.flag)
			got := flagSetting{Type: f.Type, Default: f.Default, Env: f.Env}
			require.Equal(t, tt.want, got)
			require.NotEmpty(t, f.Usage)
			require.False(t, strings.Contains(f.Usage, "(env "), "usage %q still names its variable", f.Usage)
		})
	}
	require.Equal(t, "`sandox up -pool`", s.up.reach("sandox-orchestrator", "pool", "SANDOX_POOL_SIZE"))
	require.Equal(t, "fixed by `sandox up`", s.up.reach("sandox-nats", "store", ""))
	require.Equal(t, "operator's environment (`SANDOX_EMBED_*`)", s.up.reach("sandox-data", "", "SANDOX_EMBED_URL"))
	require.Equal(t, unreachable, s.up.reach("sandox-nats", "debug", ""))
}

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// repoRoot is the repository's root, seen from this package's directory.
const repoRoot = "../../.."

// collected reads the repository once for all tests (a read takes
// seconds under the race detector).
var collected = func() func(t *testing.T) *settings {
	var (
		once sync.Once
		s    *settings
		err  error
	)
	return func(t *testing.T) *settings {
		t.Helper()
		once.Do(func() { s, err = collect(repoRoot) })
		require.NoError(t, err, "read the repository")
		return s
	}
}()

// TestSettingsDocCurrent fails when a flag or an environment variable
// changed in the code and docs/settings.md was not regenerated.
func TestSettingsDocCurrent(t *testing.T) {
	s := collected(t)
	require.NoError(t, s.check())
	want := s.render()
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
	s := collected(t)
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
			edited := *s
			edited.env = make(map[string][]string, len(s.env))
			for k, v := range s.env {
				edited.env[k] = v
			}
			tt.edit(edited.env, envDocs)
			err := edited.check()
			require.Error(t, err)
			require.Contains(t, err.Error(), tt.want)
		})
	}
}

// TestSettingsDocExtracts checks what the generator reads from the code:
// a flag's default through orchestrator.DefaultConfig, the variable it
// falls back to, and what `sandox up` sets and passes through.
func TestSettingsDocExtracts(t *testing.T) {
	s := collected(t)
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
		{"nested DefaultConfig field", "sandox-orchestrator", "events-max-age", flagSetting{Type: "duration", Default: "168h0m0s", Env: "SANDOX_EVENTS_MAX_AGE"}},
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

// TestSettingsDocRefusesUnreadVariable checks that a flag whose usage names
// a variable its command never reads is refused.
func TestSettingsDocRefusesUnreadVariable(t *testing.T) {
	tests := []struct {
		name, body, wantErr string
	}{
		{name: "not read", body: `fs.Int("n", 1, "count (env SANDOX_N)")`, wantErr: "names SANDOX_N, which run neither reads nor hands to svcmain.EnvDefaults"},
		{name: "read", body: `fs.Int("n", 1, "count (env SANDOX_N)"); _ = os.Getenv("SANDOX_N")`},
		{name: "envDefaults", body: `fs.Int("n", 1, "count (env SANDOX_N)"); envDefaults(fs)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, "x", "cmd", "x")
			require.NoError(t, os.MkdirAll(dir, 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(root, "go.mod"), []byte("module example.com/x\n"), 0o644))
			src := "package main\n\nimport (\n\t\"flag\"\n\t\"os\"\n)\n\nfunc envDefaults(*flag.FlagSet) {}\n\nfunc run() {\n\t_ = os.Args\n\tfs := flag.NewFlagSet(\"x\", flag.ContinueOnError)\n\t" + tt.body + "\n}\n"
			require.NoError(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644))
			tr, err := loadTree(root)
			require.NoError(t, err)
			flags, err := goFlags(tr)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Len(t, flags, 1)
			require.Equal(t, "SANDOX_N", flags[0].Env)
		})
	}
}

// TestSettingsDocChecksLibraryCalls checks that an entry of libraryEnvs
// whose call left its file is refused.
func TestSettingsDocChecksLibraryCalls(t *testing.T) {
	require.Empty(t, checkLibraries(repoRoot))
	saved := libraryEnvs
	t.Cleanup(func() { libraryEnvs = saved })
	libraryEnvs = []libraryEnv{{File: "internal/docker/client.go", Call: "client.NoSuchCall", Vars: []string{"X"}}}
	errs := checkLibraries(repoRoot)
	require.Len(t, errs, 1)
	require.ErrorContains(t, errs[0], "internal/docker/client.go no longer calls client.NoSuchCall")

	libraryEnvs = []libraryEnv{{File: "internal/docker/client.go", Call: "client.FromEnv", Vars: []string{"X"}, UpCall: "nosuch.Passthrough", Up: "x"}}
	errs = checkLibraries(repoRoot)
	require.Len(t, errs, 1)
	require.ErrorContains(t, errs[0], "services/cmd/sandox does not call nosuch.Passthrough")
	libraryEnvs = []libraryEnv{{File: "internal/docker/client.go", Call: "client.FromEnv", Vars: []string{"X"}, UpCall: "os.Environ()", Up: "x"}}
	require.Empty(t, checkLibraries(repoRoot))
}

// TestScanUp checks how the generator reads what `sandox up` gives each
// container, in each form the code may write it.
func TestScanUp(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, filepath.FromSlash(upDir))
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "go.mod"), []byte("module example.com/x\n"), 0o644))
	src := `package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
)

type spec struct {
	Cmd  []string
	Env  []string
	Pass []string
	Set  []setting
	Map  map[string]string
}

type setting struct{ Key, Value string }

type computed struct{ Pool int }

func up(args []string) {
	fs := flag.NewFlagSet("up", flag.ContinueOnError)
	pool := fs.Int("pool", 2, "pool")
	// The form of a spec per container, with helpers that pass through.
	_ = spec{
		Cmd: []string{"sandox-a", "-store", "/x"},
		Env: append([]string{"SANDOX_A=" + "x", "SANDOX_B=fixed", fmt.Sprintf("SANDOX_C=%d", 1), "SANDOX_POOL_SIZE=" + strconv.Itoa(*pool)},
			append(passed("SANDOX_EMBED_"), passed("SANDOX_ALLOW=")...)...),
	}
	_ = spec{Cmd: []string{"sandox-b"}, Env: append([]string{"SANDOX_NATS_URL=x"}, searchEnv()...), Map: map[string]string{"SANDOX_D": "y"}}
	// The form of a table.
	s := computed{Pool: *pool}
	_ = spec{
		Cmd:  []string{"sandox-c"},
		Set:  []setting{{Key: "SANDOX_E", Value: "z"}, {Key: "SANDOX_POOL_SIZE", Value: strconv.Itoa(s.Pool)}},
		Pass: []string{"SANDOX_TABLE_", "SANDOX_ONE="},
	}
}

func passed(prefix string) []string {
	var out []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, prefix) {
			out = append(out, kv)
		}
	}
	return out
}

func searchEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "SANDOX_SEARCH_") {
			out = append(out, kv)
		}
	}
	return out
}

func same(env []string) bool { return strings.HasPrefix(env[0], "SANDOX_") }
`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "up.go"), []byte(src), 0o644))
	tr, err := loadTree(root)
	require.NoError(t, err)
	flags, err := goFlags(tr)
	require.NoError(t, err)
	u, err := scanUp(tr, flags)
	require.NoError(t, err)

	tests := []struct {
		binary, flag, env, want string
	}{
		{"sandox-a", "", "SANDOX_A", "fixed by `sandox up`"},
		{"sandox-a", "", "SANDOX_B", "fixed by `sandox up`"},
		{"sandox-a", "", "SANDOX_C", "fixed by `sandox up`"},
		{"sandox-a", "", "SANDOX_POOL_SIZE", "`sandox up -pool`"},
		{"sandox-a", "", "SANDOX_EMBED_URL", "operator's environment (`SANDOX_EMBED_*`)"},
		{"sandox-a", "", "SANDOX_ALLOW", "operator's environment"},
		{"sandox-a", "", "SANDOX_SEARCH_KEY", unreachable},
		{"sandox-a", "store", "", "fixed by `sandox up`"},
		{"sandox-a", "debug", "", unreachable},
		{"sandox-b", "", "SANDOX_D", "fixed by `sandox up`"},
		{"sandox-b", "", "SANDOX_NATS_URL", "fixed by `sandox up`"},
		{"sandox-b", "", "SANDOX_SEARCH_KEY", "operator's environment (`SANDOX_SEARCH_*`)"},
		{"sandox-b", "", "SANDOX_A", unreachable},
		{"sandox-c", "", "SANDOX_E", "fixed by `sandox up`"},
		{"sandox-c", "", "SANDOX_POOL_SIZE", "`sandox up -pool`"},
		{"sandox-c", "", "SANDOX_TABLE_X", "operator's environment (`SANDOX_TABLE_*`)"},
		{"sandox-c", "", "SANDOX_ONE", "operator's environment"},
		{"sandox-c", "", "SANDOX_OTHER", unreachable},
		{"sandox-z", "", "SANDOX_A", unreachable},
	}
	for _, tt := range tests {
		t.Run(tt.binary+tt.env+tt.flag, func(t *testing.T) {
			require.Equal(t, tt.want, u.reach(tt.binary, tt.flag, tt.env))
		})
	}
	require.True(t, u.started("sandox-a"))
	require.False(t, u.started("sandox-z"))
	require.Equal(t, "`sandox up -pool` (sandox-a, sandox-c)", u.reachAny("SANDOX_POOL_SIZE"))
	require.Equal(t, "fixed by `sandox up` (sandox-b)", u.reachAny("SANDOX_NATS_URL"))
	require.Equal(t, "—", u.reachAny("SANDOX_NONE"))
}

// TestLoadTreeSkipsEnvironments checks that the walk leaves out virtual
// environments and caches, whose Python reads variables sandox does not.
func TestLoadTreeSkipsEnvironments(t *testing.T) {
	root := t.TempDir()
	write := func(rel, content string) {
		t.Helper()
		p := filepath.Join(root, filepath.FromSlash(rel))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	write("go.mod", "module example.com/x\n")
	write("sdk/python/src/x/a.py", `import os; os.environ.get("SANDOX_A")`)
	write("sdk/python/env-3.11/pyvenv.cfg", "home = /usr/bin\n")
	write("sdk/python/env-3.11/lib/b.py", `import os; os.environ.get("PIP_B")`)
	write("sdk/python/.venv/lib/c.py", `import os; os.environ.get("PIP_C")`)
	write("services/x/node_modules/d.sh", `echo ${NODE_D:-x}`)
	tr, err := loadTree(root)
	require.NoError(t, err)
	require.Equal(t, []string{"sdk/python/src/x/a.py"}, tr.python)
	require.Empty(t, tr.scripts)
}

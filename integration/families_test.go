package integration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/sdk"
)

const familyTools = `def hello() -> str:
    return "hello"
`

// TestToolFamilies creates sandboxes with tools lists as the spec writes
// them and checks each serves exactly the families it was given.
func TestToolFamilies(t *testing.T) {
	mine := writeFile(t, "fam_tools.py", familyTools)
	group := newGroup(t, sdk.GroupConfig{
		ID:               "it-families",
		ComputeResources: schemas.ComputeResources{CPU: "0.5", Memory: "256MiB"},
		Tools:            []string{mine},
	})

	tests := []struct {
		name         string
		id           string
		tools        []string
		wantFamilies []string
		wantTools    []string
		serves       string // a tool that must run
		refuses      string // a tool that must be unknown
	}{
		{"default", "it-fam-default", nil,
			[]string{"filesystem_tools", "terminal_tools"}, []string{"fam_tools", "filesystem_tools", "terminal_tools"},
			"terminal_tools.run", ""},
		{"filesystem only, named with .py", "it-fam-fs", []string{"filesystem_tools.py"},
			[]string{"filesystem_tools"}, []string{"fam_tools", "filesystem_tools"},
			"filesystem_tools.list_directory", "terminal_tools.run"},
		{"terminal only, named without .py", "it-fam-term", []string{"terminal_tools"},
			[]string{"terminal_tools"}, []string{"fam_tools", "terminal_tools"},
			"terminal_tools.run", "filesystem_tools.list_directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sb := startSandbox(t, group, tt.id, sdk.SandboxOptions{Tools: tt.tools})
			st, err := sb.Refresh(t.Context())
			require.NoError(t, err)
			assert.Equal(t, tt.wantFamilies, st.Families, "status families")
			assert.Equal(t, tt.wantTools, st.Tools, "status tools, as the executor reported them")

			args := map[string]string{
				"terminal_tools.run":              `{"command": "echo ok"}`,
				"filesystem_tools.list_directory": `{"path": "."}`,
			}
			obs := send(t, sb, `{"fam_tools.hello": {"description": "user tool", "args": {}}, "`+tt.serves+`": {"description": "served", "args": `+args[tt.serves]+`}}`)
			require.Len(t, obs, 2)
			mustOK(t, obs[0])
			mustOK(t, obs[1])
			if tt.refuses != "" {
				obs := send(t, sb, `{"`+tt.refuses+`": {"description": "not given", "args": `+args[tt.refuses]+`}}`)
				require.Len(t, obs, 1)
				require.NotNil(t, obs[0].Error, "%s in a sandbox without its family", tt.refuses)
				assert.Equal(t, schemas.CodeUnknownTool, obs[0].Error.Code)
			}
			require.NoError(t, sb.End(t.Context()))
		})
	}

	t.Run("a tool file named like a family is refused", func(t *testing.T) {
		shadow := filepath.Join(t.TempDir(), "terminal_tools.py")
		require.NoError(t, os.WriteFile(shadow, []byte(familyTools), 0o644))
		_, err := group.CreateSandbox(t.Context(), "it-fam-shadow", sdk.SandboxOptions{Tools: []string{shadow}})
		require.ErrorIs(t, err, sdk.ErrBadRequest)
		assert.ErrorContains(t, err, "terminal_tools is a built-in tool family")
	})
	t.Run("an unknown family is refused", func(t *testing.T) {
		_, err := group.CreateSandbox(t.Context(), "it-fam-unknown", sdk.SandboxOptions{Tools: []string{"nope_tools.py"}})
		require.ErrorIs(t, err, sdk.ErrBadRequest)
		assert.ErrorContains(t, err, `unknown tool family "nope_tools"`)
	})
}

// TestGroupToolFamilies checks that a group's families are its sandboxes'
// default, and that a sandbox's own families are added to them.
func TestGroupToolFamilies(t *testing.T) {
	group := newGroup(t, sdk.GroupConfig{
		ID:               "it-families-group",
		ComputeResources: schemas.ComputeResources{CPU: "0.5", Memory: "256MiB"},
		Tools:            []string{"filesystem_tools.py"},
		Sandboxes:        []sdk.InitialSandbox{{ID: "it-famg-initial"}},
	})
	tests := []struct {
		name  string
		id    string
		tools []string
		want  []string
	}{
		{"the group's", "it-famg-plain", nil, []string{"filesystem_tools"}},
		{"the group's and its own", "it-famg-more", []string{"terminal_tools.py"}, []string{"filesystem_tools", "terminal_tools"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sb := startSandbox(t, group, tt.id, sdk.SandboxOptions{Tools: tt.tools})
			st, err := sb.Refresh(t.Context())
			require.NoError(t, err)
			assert.Equal(t, tt.want, st.Families)
			assert.Equal(t, tt.want, st.Tools)
			require.NoError(t, sb.End(t.Context()))
		})
	}
	t.Run("an initial sandbox", func(t *testing.T) {
		sb := group.Sandbox("it-famg-initial")
		require.NotNil(t, sb)
		st, err := sb.Refresh(t.Context())
		require.NoError(t, err)
		assert.Equal(t, schemas.StateRunning, st.State)
		assert.Equal(t, []string{"filesystem_tools"}, st.Tools)
	})
}

// TestSeedToolsList makes the spec's own call: built-in families named as
// files next to a tool file of the user's. The sandbox gets exactly those
// families, and only it gets the browser in its image.
func TestSeedToolsList(t *testing.T) {
	mine := writeFile(t, "my_tools.py", familyTools)
	group := newGroup(t, sdk.GroupConfig{
		ID:               "it-families-seed",
		ComputeResources: schemas.ComputeResources{CPU: "1", Memory: "512MiB"},
	})
	web := startSandbox(t, group, "it-fam-seed", sdk.SandboxOptions{
		Tools: []string{"filesystem_tools.py", "terminal_tools.py", "web_tools.py", mine},
	})
	st, err := web.Refresh(t.Context())
	require.NoError(t, err)
	assert.Equal(t, []string{"filesystem_tools", "terminal_tools", "web_tools"}, st.Families)
	assert.Equal(t, []string{"filesystem_tools", "my_tools", "terminal_tools", "web_tools"}, st.Tools)

	descs, err := web.Tools(t.Context())
	require.NoError(t, err)
	modules := map[string]bool{}
	for _, d := range descs {
		module, _, _ := strings.Cut(d.Name, ".")
		modules[module] = true
	}
	assert.Equal(t, map[string]bool{"filesystem_tools": true, "my_tools": true, "terminal_tools": true, "web_tools": true}, modules)

	plain := startSandbox(t, group, "it-fam-seed-plain", sdk.SandboxOptions{Tools: []string{mine}})
	const probe = `{"terminal_tools.run": {"description": "is there a browser", "args": {"command": "if [ -x /usr/bin/chromium ]; then echo browser; else echo none; fi"}}}`
	obs := send(t, web, probe)
	mustOK(t, obs[0])
	assert.Equal(t, "browser", strings.TrimSpace(obs[0].Stdout), "web_tools' image has Chromium")
	obs = send(t, plain, probe)
	mustOK(t, obs[0])
	assert.Equal(t, "none", strings.TrimSpace(obs[0].Stdout), "an image without web_tools has no Chromium")
}

// TestStatusToolsAreServed checks that the status's tools are what the
// executor reported serving when it started: its families and the modules
// of the user's tool files, whose Python host starts on first need. A tool
// file that fails to import is left out from then on: from the tools
// listing, and an action on it is an unknown tool.
func TestStatusToolsAreServed(t *testing.T) {
	broken := writeFile(t, "broken_tools.py", "raise RuntimeError('does not import')\n")
	mine := writeFile(t, "fam_tools.py", familyTools)
	group := newGroup(t, sdk.GroupConfig{
		ID:               "it-families-served",
		ComputeResources: schemas.ComputeResources{CPU: "0.5", Memory: "256MiB"},
	})
	sb, err := group.CreateSandbox(t.Context(), "it-fam-served", sdk.SandboxOptions{Tools: []string{"filesystem_tools", broken, mine}})
	require.NoError(t, err)
	assert.Equal(t, []string{"broken_tools", "fam_tools", "filesystem_tools"}, sb.Status().Tools, "created: what was asked for")
	require.NoError(t, sb.Start(t.Context()))
	st, err := sb.Refresh(t.Context())
	require.NoError(t, err)
	assert.Equal(t, []string{"broken_tools", "fam_tools", "filesystem_tools"}, st.Tools, "running: the families and the tool files' modules (no Python started yet)")

	described, err := sb.Tools(t.Context())
	require.NoError(t, err)
	var names []string
	for _, d := range described {
		names = append(names, d.Name)
	}
	assert.Contains(t, names, "fam_tools.hello")
	for _, n := range names {
		assert.False(t, strings.HasPrefix(n, "broken_tools."), "the broken file serves nothing: %s", n)
	}
	obs := send(t, sb, `{"broken_tools.anything": {"args": {}}}`)
	require.NotNil(t, obs[0].Error)
	assert.Equal(t, schemas.CodeUnknownTool, obs[0].Error.Code)
}

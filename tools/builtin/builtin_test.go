package builtin

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/tools"
)

func TestModulesAreComplete(t *testing.T) {
	seen := map[string]bool{}
	for _, m := range Modules() {
		t.Run(m.Name, func(t *testing.T) {
			assert.False(t, seen[m.Name], "family listed twice")
			seen[m.Name] = true
			assert.Regexp(t, `^[a-z][a-z0-9_]*_tools$`, m.Name)
			assert.NotEmpty(t, m.Summary)
			require.NotNil(t, m.Open)
			for _, f := range m.Image.Files {
				assert.Regexp(t, `^/`, f.Path, "image file paths are absolute")
			}

			// Opening the family gives tools of that module only, and it
			// closes cleanly.
			ws := t.TempDir()
			env := tools.Env{
				Executor: schemas.ExecutorEnv{SandboxID: "sb-1", Workspace: ws},
				Dir:      tools.NewWorkDir(ws),
				Log:      slog.New(slog.DiscardHandler),
			}
			opened, err := m.Open(context.Background(), env)
			require.NoError(t, err)
			require.NotEmpty(t, opened.Tools)
			for _, tl := range opened.Tools {
				assert.Equal(t, m.Name, tl.Module, "tool %s", tl.FullName())
				// Its arguments' schema compiles (on first call): an
				// unknown argument is refused before the tool runs.
				_, err := tl.Call(context.Background(), json.RawMessage(`{"sandox_no_such_argument": 1}`))
				assert.ErrorIs(t, err, tools.ErrInvalidArgs, "tool %s", tl.FullName())
			}
			if opened.Close != nil {
				assert.NoError(t, opened.Close())
			}
		})
	}
	for _, name := range Default {
		assert.True(t, seen[name], "default family %s is in the list", name)
	}
}

func TestSelect(t *testing.T) {
	tests := []struct {
		name    string
		in      []string
		want    []string
		wantErr string
	}{
		{"none gives the default", nil, []string{"filesystem_tools", "terminal_tools"}, ""},
		{"one", []string{"filesystem_tools"}, []string{"filesystem_tools"}, ""},
		{"with .py", []string{"terminal_tools.py"}, []string{"terminal_tools"}, ""},
		{"twice, both spellings", []string{"terminal_tools.py", "terminal_tools", "filesystem_tools"}, []string{"filesystem_tools", "terminal_tools"}, ""},
		{"unknown", []string{"filesystem_tools", "my_tools.py", "nope"}, nil, `unknown tool family "my_tools.py", "nope": the built-in families are `},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := SelectNames(tt.in)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				var e *schemas.Error
				require.ErrorAs(t, err, &e)
				assert.Equal(t, schemas.CodeBadRequest, e.Code)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestSelectKeepsListOrder(t *testing.T) {
	index := map[string]int{}
	var all []string
	for i, m := range Modules() {
		index[m.Name] = i
		all = append(all, m.Name)
	}
	// Asked for in reverse, they come in the order of Modules.
	reversed := make([]string, len(all))
	for i, n := range all {
		reversed[len(all)-1-i] = n
	}
	mods, err := Select(reversed)
	require.NoError(t, err)
	require.Len(t, mods, len(all))
	for i, m := range mods {
		assert.Equal(t, i, index[m.Name], "family %s", m.Name)
	}
}

func TestName(t *testing.T) {
	tests := []struct {
		entry  string
		want   string
		wantOK bool
	}{
		{"filesystem_tools", "filesystem_tools", true},
		{"filesystem_tools.py", "filesystem_tools", true},
		{"my_tools.py", "", false},
		{"dir/filesystem_tools.py", "", false},
		{"filesystem_tools.pyc", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.entry, func(t *testing.T) {
			got, ok := Name(tt.entry)
			assert.Equal(t, tt.wantOK, ok)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestNeeds(t *testing.T) {
	a := tools.Module{Name: "a_tools", Image: tools.ImageNeeds{
		Apt:   []string{"fonts-liberation", "chromium"},
		Files: []tools.ImageFile{{Path: "/etc/a", Content: []byte("a")}},
	}}
	b := tools.Module{Name: "b_tools", Image: tools.ImageNeeds{
		Apt:   []string{"chromium", "curl"},
		Files: []tools.ImageFile{{Path: "/etc/b", Content: []byte("b")}, {Path: "/etc/a", Content: []byte("b's a")}},
	}}
	none := tools.Module{Name: "c_tools"}

	assert.True(t, Needs([]tools.Module{none}).Empty())
	got := Needs([]tools.Module{a, none, b})
	assert.Equal(t, []string{"chromium", "curl", "fonts-liberation"}, got.Apt)
	assert.Equal(t, []tools.ImageFile{
		{Path: "/etc/a", Content: []byte("b's a")},
		{Path: "/etc/b", Content: []byte("b")},
	}, got.Files)
}

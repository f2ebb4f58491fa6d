package catalog

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
)

func TestFamiliesAreComplete(t *testing.T) {
	seen := map[string]bool{}
	for _, f := range Families() {
		t.Run(f.Name, func(t *testing.T) {
			assert.False(t, seen[f.Name], "family listed twice")
			seen[f.Name] = true
			assert.Regexp(t, `^[a-z][a-z0-9_]*_tools$`, f.Name)
			assert.NotEmpty(t, f.Summary)
			for _, file := range f.Image.Files {
				assert.Regexp(t, `^/`, file.Path, "image file paths are absolute")
			}
		})
	}
	for _, name := range Default {
		assert.True(t, seen[name], "default family %s is in the list", name)
	}
	assert.Equal(t, []string{Database, Filesystem, Terminal, Web}, Names())
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
		{"unknown", []string{"filesystem_tools", "my_tools.py", "nope"}, nil, `unknown tool family "my_tools.py", "nope": the built-in families are database_tools, filesystem_tools, terminal_tools, web_tools`},
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
				assert.ErrorIs(t, err, schemas.CodeBadRequest)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestSelectKeepsListOrder(t *testing.T) {
	all := Families()
	index := map[string]int{}
	reversed := make([]string, len(all))
	for i, f := range all {
		index[f.Name] = i
		reversed[len(all)-1-i] = f.Name
	}
	// Asked for in reverse, they come in the order of Families.
	got, err := Select(reversed)
	require.NoError(t, err)
	require.Len(t, got, len(all))
	for i, f := range got {
		assert.Equal(t, i, index[f.Name], "family %s", f.Name)
	}
}

// TestSelectInSubList checks a list that holds only some families (the
// executor built without web_tools): it selects and names only those.
func TestSelectInSubList(t *testing.T) {
	var l List
	for _, f := range Families() {
		if f.Name != Web {
			l = append(l, f)
		}
	}
	_, err := l.Select([]string{Web})
	require.ErrorIs(t, err, schemas.CodeBadRequest)
	assert.ErrorContains(t, err, `unknown tool family "web_tools": the built-in families are database_tools, filesystem_tools, terminal_tools`)
	got, err := l.Select(nil)
	require.NoError(t, err)
	assert.Equal(t, []string{Filesystem, Terminal}, got.Names())
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
	a := Family{Name: "a_tools", Image: ImageNeeds{
		Apt:   []string{"fonts-liberation", "chromium"},
		Files: []ImageFile{{Path: "/etc/a", Content: []byte("a")}},
	}}
	b := Family{Name: "b_tools", Image: ImageNeeds{
		Apt:   []string{"chromium", "curl"},
		Files: []ImageFile{{Path: "/etc/b", Content: []byte("b")}, {Path: "/etc/a", Content: []byte("b's a")}},
	}}
	none := Family{Name: "c_tools"}

	assert.True(t, List{none}.Needs().Empty())
	assert.False(t, a.Image.Empty())
	got := List{a, none, b}.Needs()
	assert.Equal(t, []string{"chromium", "curl", "fonts-liberation"}, got.Apt)
	assert.Equal(t, []ImageFile{
		{Path: "/etc/a", Content: []byte("b's a")},
		{Path: "/etc/b", Content: []byte("b")},
	}, got.Files)
}

// TestSelectedNeeds checks the image needs of real selections: web_tools
// brings Chromium and fonts, the default families nothing.
func TestSelectedNeeds(t *testing.T) {
	l, err := Select(nil)
	require.NoError(t, err)
	assert.True(t, l.Needs().Empty())
	l, err = Select([]string{Web, Database})
	require.NoError(t, err)
	assert.Equal(t, []string{"chromium", "fonts-liberation"}, l.Needs().Apt)
}

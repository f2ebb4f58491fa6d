package sdk

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
)

func TestReadTools(t *testing.T) {
	dir := t.TempDir()
	mine := filepath.Join(dir, "my_tools.py")
	require.NoError(t, os.WriteFile(mine, []byte("def f(): pass\n"), 0o644))
	shadow := filepath.Join(dir, "web_tools.py")
	require.NoError(t, os.WriteFile(shadow, []byte("def g(): pass\n"), 0o644))

	tests := []struct {
		name         string
		entries      []string
		wantFiles    []string
		wantFamilies []string
		wantErr      string
	}{
		{"the seed's list", []string{"filesystem_tools.py", "terminal_tools.py", "web_tools.py", mine},
			[]string{"my_tools.py"}, []string{"filesystem_tools", "terminal_tools", "web_tools"}, ""},
		{"families without .py", []string{"filesystem_tools"}, nil, []string{"filesystem_tools"}, ""},
		// The orchestrator refuses a file named like a family, saying so.
		{"a file named like a family is sent as a file", []string{shadow}, []string{"web_tools.py"}, nil, ""},
		{"a missing path", []string{filepath.Join(dir, "gone.py")}, nil, nil, "gone.py"},
		{"a missing name that is no module name", []string{"not-a-module.py"}, nil, nil, "not-a-module.py"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files, families, err := readTools(tt.entries)
			if tt.wantErr != "" {
				assert.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			var names []string
			for _, f := range files {
				names = append(names, f.Name)
				assert.NotEmpty(t, f.Content)
			}
			assert.Equal(t, tt.wantFiles, names)
			assert.Equal(t, tt.wantFamilies, families)
		})
	}
}

func TestSandboxSpecCarriesFamilies(t *testing.T) {
	spec, err := sandboxSpec("sb-1", SandboxOptions{Tools: []string{"terminal_tools.py"}}, schemas.ComputeResources{})
	require.NoError(t, err)
	assert.Equal(t, []string{"terminal_tools"}, spec.Families)
	assert.Empty(t, spec.Tools)
}

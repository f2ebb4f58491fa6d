package tools

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
)

// TestRegistryRefusesMendedNames checks that a name with anything a tool
// name does not have is refused as written, not trimmed into a tool.
func TestRegistryRefusesMendedNames(t *testing.T) {
	r := NewRegistry(echoTool("terminal_tools"))
	tests := []struct {
		name, ref, suggest string
	}{
		{"trailing line feed", "terminal_tools.echo\n", "terminal_tools.echo"},
		{"trailing CR LF", "terminal_tools.echo\r\n", "terminal_tools.echo"},
		{"leading space", " terminal_tools.echo", "terminal_tools.echo"},
		{"trailing space", "terminal_tools.echo ", "terminal_tools.echo"},
		{"leading tab", "\tterminal_tools.echo", "terminal_tools.echo"},
		{"non-breaking space", "\u00a0terminal_tools.echo", "terminal_tools.echo"},
		{"space inside", "terminal_tools. echo", ""},
		{"bare name with line feed", "echo\n", "echo"},
		{"invalid UTF-8", "terminal_tools.echo\xff", ""},
		{"only space", "   ", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := r.Resolve(tt.ref)
			require.Error(t, err, "got tool %q", got.FullName())
			assert.Equal(t, schemas.CodeUnknownTool, ErrorCode(err))
			assert.Contains(t, err.Error(), strconv.Quote(tt.ref), "the error must quote the name as received")
			if tt.suggest != "" {
				assert.Contains(t, err.Error(), "did you mean "+strconv.Quote(tt.suggest))
			} else {
				assert.NotContains(t, err.Error(), "did you mean")
			}
		})
	}
	_, err := r.Resolve("terminal_tools.echo")
	require.NoError(t, err, "the exact name must still resolve")
}

package terminal

import (
	"testing"

	"github.com/sandox/sandox/schemas"
	"github.com/stretchr/testify/require"
)

func TestKeyBytes(t *testing.T) {
	tests := []struct {
		name string
		keys []string
		want string
	}{
		{"enter", []string{"Enter"}, "\r"},
		{"ctrl-c spellings", []string{"Ctrl-C", "ctrl+c", "C-c", "^C"}, "\x03\x03\x03\x03"},
		{"ctrl-d and ctrl-z", []string{"Ctrl-D", "Ctrl-Z"}, "\x04\x1a"},
		{"arrows", []string{"Up", "Down", "Right", "Left"}, "\x1b[A\x1b[B\x1b[C\x1b[D"},
		{"editing keys", []string{"Tab", "Escape", "Backspace"}, "\t\x1b\x7f"},
		{"single characters", []string{"y", "Enter"}, "y\r"},
		{"case-insensitive", []string{"ENTER", "tab"}, "\r\t"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := keyBytes(tt.keys)
			require.NoError(t, err)
			require.Equal(t, tt.want, string(got))
		})
	}
	_, err := keyBytes([]string{"Ctrl-1"})
	require.ErrorIs(t, err, schemas.CodeInvalidArgs)
}

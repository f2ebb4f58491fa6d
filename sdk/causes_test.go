package sdk

import (
	"io/fs"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestErrorsKeepTheirCause checks that an SDK error matches both its class
// (the sentinel) and the error that caused it.
func TestErrorsKeepTheirCause(t *testing.T) {
	t.Run("no NATS server", func(t *testing.T) {
		// Port 1 on loopback: nothing listens there, the dial fails at once.
		g, err := NewSandboxGroup(GroupConfig{ID: "causes"}, WithURL("nats://127.0.0.1:1"))
		require.NoError(t, err)
		err = g.Start(t.Context())
		require.Error(t, err)
		assert.ErrorIs(t, err, ErrUnavailable, "the class")
		assert.ErrorIs(t, err, nats.ErrNoServers, "the cause")
	})
	t.Run("missing tool file", func(t *testing.T) {
		_, err := NewSandboxGroup(GroupConfig{ID: "causes", Tools: []string{t.TempDir() + "/missing.py"}})
		require.Error(t, err)
		assert.ErrorIs(t, err, ErrBadRequest, "the class")
		assert.ErrorIs(t, err, fs.ErrNotExist, "the cause")
	})
}

package wire

import (
	"errors"
	"fmt"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"

	"github.com/sandox/sandox/schemas"
)

// TestError checks the code each kind of error goes on the wire with.
func TestError(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want schemas.ErrorCode
	}{
		{"a wire error", schemas.Errorf(schemas.CodeNotFound, "sandbox %q not found", "x"), schemas.CodeNotFound},
		{"a wrapped wire error", fmt.Errorf("sandbox x: %w", schemas.Errorf(schemas.CodeConflict, "busy")), schemas.CodeConflict},
		{"no responders", fmt.Errorf("read: %w", nats.ErrNoResponders), schemas.CodeUnavailable},
		{"a timeout", nats.ErrTimeout, schemas.CodeUnavailable},
		{"anything else", errors.New("disk on fire"), schemas.CodeInternal},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Error(tc.err)
			assert.Equal(t, tc.want, got.Code, "message: %s", got.Message)
			// The wire error keeps the cause, or is the one the cause wraps.
			assert.True(t, errors.Is(got, tc.err) || errors.Is(tc.err, got), "got %v for %v", got, tc.err)
		})
	}
}

// TestBusUnavailable checks which errors say that JetStream did not answer.
func TestBusUnavailable(t *testing.T) {
	assert.True(t, BusUnavailable(fmt.Errorf("get: %w", nats.ErrConnectionClosed)))
	assert.False(t, BusUnavailable(errors.New("bad request")))
}

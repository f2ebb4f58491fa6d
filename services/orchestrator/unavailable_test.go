package orchestrator

import (
	"errors"
	"fmt"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/orchestrator/wire"
)

// TestWireErrorOfAnUnansweringBus checks that a command failing because
// JetStream did not answer is refused unavailable (a client may send it
// again), and other errors stay as they were.
func TestWireErrorOfAnUnansweringBus(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want schemas.ErrorCode
	}{
		{name: "no responders", err: fmt.Errorf("sandbox s: %w", nats.ErrNoResponders), want: schemas.CodeUnavailable},
		{name: "no stream response", err: fmt.Errorf("record: %w", jetstream.ErrNoStreamResponse), want: schemas.CodeUnavailable},
		{name: "request timeout", err: nats.ErrTimeout, want: schemas.CodeUnavailable},
		{name: "a wire error wins", err: fmt.Errorf("x: %w", schemas.Errorf(schemas.CodeConflict, "ended: %w", nats.ErrNoResponders)), want: schemas.CodeConflict},
		{name: "anything else", err: errors.New("disk on fire"), want: schemas.CodeInternal},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, wire.Error(tt.err).Code)
		})
	}
}

// Package wire turns the orchestrator's errors into the errors a command
// result or a status reply carries on the wire (schemas.Error): a stable
// code plus a message.
package wire

import (
	"errors"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sandox/sandox/schemas"
)

// Error is err as it goes on the wire: the schemas.Error it wraps, or
// CodeUnavailable when JetStream did not answer (BusUnavailable), or else
// CodeInternal.
func Error(err error) *schemas.Error {
	var we *schemas.Error
	if errors.As(err, &we) {
		return we
	}
	if BusUnavailable(err) {
		return schemas.Errorf(schemas.CodeUnavailable, "NATS did not answer (a node or a stream's leader changing?): %w", err)
	}
	return schemas.Errorf(schemas.CodeInternal, "%w", err)
}

// BusUnavailable reports whether err says that JetStream did not answer: no
// responders (a stream or bucket without a leader, while a cluster elects
// one after a node died) or a request that timed out. A command that fails
// so is refused with CodeUnavailable, which a client may send again, not
// CodeInternal.
func BusUnavailable(err error) bool {
	return errors.Is(err, nats.ErrNoResponders) || errors.Is(err, jetstream.ErrNoStreamResponse) ||
		errors.Is(err, nats.ErrTimeout) || errors.Is(err, nats.ErrConnectionClosed)
}

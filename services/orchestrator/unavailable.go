package orchestrator

import (
	"errors"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// busUnavailable reports whether err says that JetStream did not answer: no
// responders (a stream or bucket without a leader, while a cluster elects
// one after a node died) or a request that timed out. A command that fails
// so is refused with CodeUnavailable, which a client may send again, not
// CodeInternal.
func busUnavailable(err error) bool {
	return errors.Is(err, nats.ErrNoResponders) || errors.Is(err, jetstream.ErrNoStreamResponse) ||
		errors.Is(err, nats.ErrTimeout) || errors.Is(err, nats.ErrConnectionClosed)
}

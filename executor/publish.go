package executor

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// errNotConnected is the error of a publish before the executor connected.
var errNotConnected = errors.New("the executor is not connected yet")

// Publisher returns the tools.Env.Publish of an executor: a JetStream
// publish, on the connection conn returns, that waits for the stream's
// acknowledgement (which comes back under the sandbox's inbox prefix) and
// carries msgID as Nats-Msg-Id, so that the stream drops the repeat of a
// retried message. A publish before conn returns a connection, or whose
// subject no stream captures, fails; the caller retries. It is safe for
// concurrent use.
func Publisher(conn func() *nats.Conn) func(ctx context.Context, subject, msgID string, data []byte) error {
	var mu sync.Mutex
	var js jetstream.JetStream
	var on *nats.Conn
	return func(ctx context.Context, subject, msgID string, data []byte) error {
		nc := conn()
		if nc == nil {
			return fmt.Errorf("publish %s: %w", subject, errNotConnected)
		}
		mu.Lock()
		if on != nc {
			var err error
			if js, err = jetstream.New(nc); err != nil {
				mu.Unlock()
				return fmt.Errorf("publish %s: %w", subject, err)
			}
			on = nc
		}
		j := js
		mu.Unlock()
		m := nats.NewMsg(subject)
		m.Data = data
		if _, err := j.PublishMsg(ctx, m, jetstream.WithMsgID(msgID)); err != nil {
			return fmt.Errorf("publish %s: %w", subject, err)
		}
		return nil
	}
}

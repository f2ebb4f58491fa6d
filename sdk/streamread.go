package sdk

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sandox/sandox/schemas"
)

// streamReader reads the records of a sandbox's long-running work (a job,
// a watch) from their stream. It stops when its context ends, when stop is
// called, or when the sandbox's executor goes away (an event whose kind
// loses batches: the work went with it, and no last record will come);
// gone then holds ErrSandboxGone.
type streamReader struct {
	msgs jetstream.MessagesContext
	stop func()
	gone atomic.Pointer[error]
}

// followStream reads filter from stream after stream sequence after with
// an ordered consumer, watching the sandbox's events meanwhile. what names
// the work in errors ("job j1").
func (s *Sandbox) followStream(ctx context.Context, stream, filter, what string, after uint64) (*streamReader, error) {
	c, err := s.group.link()
	if err != nil {
		return nil, err
	}
	events := make(chan *nats.Msg, 16)
	sub, err := c.nc.ChanSubscribe(schemas.SandboxEventSubject(s.id), events)
	if err != nil {
		return nil, fmt.Errorf("%w: subscribe to %s: %w", ErrUnavailable, schemas.SandboxEventSubject(s.id), err)
	}
	cfg := jetstream.OrderedConsumerConfig{FilterSubjects: []string{filter}}
	if after > 0 {
		cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, after+1
	}
	cctx, cancel := withDefault(ctx, 10*time.Second)
	defer cancel()
	cons, err := c.js.OrderedConsumer(cctx, stream, cfg)
	if err != nil {
		_ = sub.Unsubscribe()
		return nil, fmt.Errorf("%w: read %s: %w", ErrUnavailable, what, err)
	}
	msgs, err := cons.Messages()
	if err != nil {
		_ = sub.Unsubscribe()
		return nil, fmt.Errorf("%w: read %s: %w", ErrUnavailable, what, err)
	}
	r := &streamReader{msgs: msgs}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-ctx.Done():
				msgs.Stop()
				return
			case <-done:
				return
			case m := <-events:
				var ev schemas.Event
				if json.Unmarshal(m.Data, &ev) == nil && ev.Kind.LosesBatches() {
					gone := fmt.Errorf("%w: %s: sandbox %s %s", ErrSandboxGone, what, s.id, ev.Kind)
					r.gone.Store(&gone)
					msgs.Stop()
					return
				}
			}
		}
	}()
	r.stop = func() {
		close(done)
		wg.Wait()
		_ = sub.Unsubscribe()
		msgs.Stop()
	}
	return r, nil
}

package audit

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/auth"
)

// ErrNoLog reports that the audit log stream does not exist (no
// orchestrator has run on this NATS server).
var ErrNoLog = errors.New("no audit log")

// Replay reads the audit log from its first message and calls fn with
// every entry f selects, in the order the stream stored them. It reads the
// whole log, even before f.Since, to learn each sandbox's group and each
// result's command. Without follow it returns once it has read what the
// stream held when it started; with follow it waits for new entries until
// ctx is done (and then returns nil). An error from fn stops it and is
// returned. Replay blocks; it is safe to run several at once.
func Replay(ctx context.Context, js jetstream.JetStream, f Filter, follow bool, fn func(Entry) error) error {
	stream, err := js.Stream(ctx, schemas.EventStream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return fmt.Errorf("%w: stream %s not found", ErrNoLog, schemas.EventStream)
	} else if err != nil {
		return fmt.Errorf("stream %s: %w", schemas.EventStream, err)
	}
	last := stream.CachedInfo().State.LastSeq
	if last == 0 && !follow {
		return nil
	}
	cons, err := stream.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{DeliverPolicy: jetstream.DeliverAllPolicy})
	if err != nil {
		return fmt.Errorf("read %s: %w", schemas.EventStream, err)
	}
	iter, err := cons.Messages()
	if err != nil {
		return fmt.Errorf("read %s: %w", schemas.EventStream, err)
	}
	defer iter.Stop()
	stopped, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		<-stopped.Done()
		iter.Stop()
	}()
	ix := newIndex()
	ix.account = auth.AccountOf(ctx, js.Conn())
	for {
		msg, err := iter.Next()
		if err != nil {
			if ctx.Err() != nil && follow {
				return nil
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("read %s: %w", schemas.EventStream, err)
		}
		md, err := msg.Metadata()
		if err != nil {
			return fmt.Errorf("read %s: %w", schemas.EventStream, err)
		}
		if e, ok := ix.parse(md.Sequence.Stream, md.Timestamp, msg.Subject(), msg.Headers(), msg.Data()); ok && f.Match(e) {
			if err := fn(e); err != nil {
				return err
			}
		}
		if !follow && md.Sequence.Stream >= last {
			return nil
		}
	}
}

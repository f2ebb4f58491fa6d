package audit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sandox/sandox/schemas"
)

// populationSubjects selects every group's population events in the
// audit stream (schemas.PopulationEventSubject); Replay does not read
// them.
const populationSubjects = "sandox.evt.data.>"

// Population returns the progress of each source of the group's database
// population (the data service's schemas.PopulationEvent on
// schemas.PopulationEventSubject, recorded in the audit stream): the
// newest event of each source, in the order the sources began. None when
// the group's databases were never populated, or there is no stream. It
// blocks until it has read the subject's newest event.
func Population(ctx context.Context, js jetstream.JetStream, group string) ([]schemas.PopulationEvent, error) {
	subject := schemas.PopulationEventSubject(group)
	stream, err := js.Stream(ctx, schemas.EventStream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("stream %s: %w", schemas.EventStream, err)
	}
	last, err := stream.GetLastMsgForSubject(ctx, subject)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("population of %s: %w", group, err)
	}
	var order []string
	newest := map[string]schemas.PopulationEvent{}
	err = readEvents(ctx, stream, subject, func(seq uint64, ev schemas.PopulationEvent, ok bool) bool {
		if !ok {
			return seq < last.Sequence
		}
		key := ev.Database + "\x00" + ev.Namespace + "\x00" + ev.Source
		if _, seen := newest[key]; !seen {
			order = append(order, key)
		}
		newest[key] = ev
		return seq < last.Sequence
	})
	if err != nil {
		return nil, fmt.Errorf("population of %s: %w", group, errors.Join(ctx.Err(), err))
	}
	out := make([]schemas.PopulationEvent, len(order))
	for i, key := range order {
		out[i] = newest[key]
	}
	return out, nil
}

// followPopulation reads the population events of the audit stream from
// its first message and calls fn with each, with its stream sequence,
// until ctx is done (then it returns nil) or reading fails.
func followPopulation(ctx context.Context, js jetstream.JetStream, fn func(uint64, schemas.PopulationEvent)) error {
	stream, err := js.Stream(ctx, schemas.EventStream)
	if err != nil {
		return fmt.Errorf("stream %s: %w", schemas.EventStream, err)
	}
	err = readEvents(ctx, stream, populationSubjects, func(seq uint64, ev schemas.PopulationEvent, ok bool) bool {
		if ok {
			fn(seq, ev)
		}
		return true
	})
	if ctx.Err() != nil {
		return nil
	}
	return fmt.Errorf("read %s: %w", populationSubjects, err)
}

// readEvents reads the population events on subject from the stream's
// first message and calls fn with each, with its stream sequence and
// whether it decoded, until fn returns false (then it returns nil), ctx is done or
// reading fails.
func readEvents(ctx context.Context, stream jetstream.Stream, subject string, fn func(uint64, schemas.PopulationEvent, bool) bool) error {
	cons, err := stream.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{FilterSubjects: []string{subject}})
	if err != nil {
		return err
	}
	iter, err := cons.Messages()
	if err != nil {
		return err
	}
	defer iter.Stop()
	stopped, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		<-stopped.Done()
		iter.Stop()
	}()
	for {
		msg, err := iter.Next()
		if err != nil {
			return err
		}
		md, err := msg.Metadata()
		if err != nil {
			return err
		}
		var ev schemas.PopulationEvent
		ok := json.Unmarshal(msg.Data(), &ev) == nil
		if !fn(md.Sequence.Stream, ev, ok) {
			return nil
		}
	}
}

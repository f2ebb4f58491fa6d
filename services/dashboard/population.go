package dashboard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sandox/sandox/schemas"
)

// readPopulation returns the progress of each source of the group's
// database population (the data service's schemas.PopulationEvent on
// schemas.PopulationEventSubject, recorded in the audit stream): the
// newest event of each source, in the order the sources began. None when
// the group's databases were never populated. It blocks until it has read
// the subject's newest event.
func readPopulation(ctx context.Context, js jetstream.JetStream, group string) ([]schemas.PopulationEvent, error) {
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
	cons, err := stream.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{FilterSubjects: []string{subject}})
	if err != nil {
		return nil, fmt.Errorf("population of %s: %w", group, err)
	}
	iter, err := cons.Messages()
	if err != nil {
		return nil, fmt.Errorf("population of %s: %w", group, err)
	}
	defer iter.Stop()
	stopped, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		<-stopped.Done()
		iter.Stop()
	}()
	var order []string
	newest := map[string]schemas.PopulationEvent{}
	for {
		msg, err := iter.Next()
		if err != nil {
			return nil, fmt.Errorf("population of %s: %w", group, errors.Join(ctx.Err(), err))
		}
		var ev schemas.PopulationEvent
		if json.Unmarshal(msg.Data(), &ev) == nil {
			key := ev.Database + "\x00" + ev.Namespace + "\x00" + ev.Source
			if _, seen := newest[key]; !seen {
				order = append(order, key)
			}
			newest[key] = ev
		}
		if md, err := msg.Metadata(); err == nil && md.Sequence.Stream >= last.Sequence {
			break
		}
	}
	out := make([]schemas.PopulationEvent, len(order))
	for i, key := range order {
		out[i] = newest[key]
	}
	return out, nil
}

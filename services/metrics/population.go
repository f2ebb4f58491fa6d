package metrics

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sandox/sandox/schemas"
)

// populationSubjects selects every group's population events in the
// audit stream (schemas.PopulationEventSubject); services/audit does not
// read them.
const populationSubjects = "sandox.evt.data.>"

// followPopulation reads the population events of the audit stream from
// its first message and calls fn with each, with its stream sequence,
// until ctx is done (then it returns nil) or reading fails.
func followPopulation(ctx context.Context, js jetstream.JetStream, fn func(uint64, schemas.PopulationEvent)) error {
	stream, err := js.Stream(ctx, schemas.EventStream)
	if err != nil {
		return fmt.Errorf("stream %s: %w", schemas.EventStream, err)
	}
	cons, err := stream.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{FilterSubjects: []string{populationSubjects}})
	if err != nil {
		return fmt.Errorf("read %s: %w", populationSubjects, err)
	}
	iter, err := cons.Messages()
	if err != nil {
		return fmt.Errorf("read %s: %w", populationSubjects, err)
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
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("read %s: %w", populationSubjects, err)
		}
		md, err := msg.Metadata()
		if err != nil {
			return fmt.Errorf("read %s: %w", populationSubjects, err)
		}
		var ev schemas.PopulationEvent
		if json.Unmarshal(msg.Data(), &ev) == nil {
			fn(md.Sequence.Stream, ev)
		}
	}
}

// population counts one progress event of a population source: the rows
// loaded and skipped since its previous event, and its end. A source whose
// count goes down was populated again (its group started again), and
// counts from zero.
func (c *streamCounters) population(ev schemas.PopulationEvent) {
	key := sourceKey{ev.GroupID, ev.Database, ev.Namespace, ev.Source}
	prev := c.sources[key]
	if ev.Loaded < prev.loaded || len(ev.Bad) < prev.bad {
		prev = sourceProgress{}
	}
	c.popLoaded.WithLabelValues(ev.Database).Add(float64(ev.Loaded - prev.loaded))
	c.popBad.WithLabelValues(ev.Database).Add(float64(len(ev.Bad) - prev.bad))
	if ev.Done {
		delete(c.sources, key)
		c.popDone.WithLabelValues(ev.Database).Inc()
	} else {
		c.sources[key] = sourceProgress{loaded: ev.Loaded, bad: len(ev.Bad)}
	}
	c.popRunning.Set(float64(len(c.sources)))
}

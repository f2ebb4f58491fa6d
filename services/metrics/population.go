package metrics

import "github.com/sandox/sandox/schemas"

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

package memruntime

import (
	"context"
	"time"

	"github.com/sandox/sandox/services/orchestrator/runtime"
)

func (r *Runtime) Events(ctx context.Context, since time.Time, labels ...string) (<-chan runtime.Event, <-chan error) {
	s := &memSub{labels: labels, ch: make(chan runtime.Event, 1024), errc: make(chan error, 1)}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, ev := range r.history {
		if !ev.Time.Before(since) && hasLabels(ev.Labels, labels) {
			s.ch <- ev
		}
	}
	r.subs[s] = struct{}{}
	r.procs.Go(func() {
		<-ctx.Done()
		r.mu.Lock()
		defer r.mu.Unlock()
		if _, ok := r.subs[s]; ok {
			delete(r.subs, s)
			close(s.ch)
		}
	})
	return s.ch, s.errc
}

// BreakEvents ends every event stream with err, as a failing engine
// connection does.
func (r *Runtime) BreakEvents(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for s := range r.subs {
		s.errc <- err
		close(s.ch)
		delete(r.subs, s)
	}
}

// emit records an event and sends it to every stream that wants it; r.mu
// must be held.
func (r *Runtime) emit(ev runtime.Event) {
	ev.Time = time.Now()
	if n := len(r.history); n > 0 && !ev.Time.After(r.history[n-1].Time) {
		ev.Time = r.history[n-1].Time.Add(time.Nanosecond)
	}
	r.history = append(r.history, ev)
	for s := range r.subs {
		if hasLabels(ev.Labels, s.labels) {
			s.ch <- ev
		}
	}
}

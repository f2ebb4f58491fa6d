package audit

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sandox/sandox/schemas"
)

// Handlers are what a Follower calls. The follower calls them one at a
// time, under its lock, so they need no lock of their own against each
// other; they must not block for long.
type Handlers struct {
	// Entry is called with every entry of the log, once, in the order the
	// stream stored them.
	Entry func(Entry)
	// Population, when set, is called with every population event of the
	// log (schemas.PopulationEventSubject), once, in order.
	Population func(schemas.PopulationEvent)
	// Reset, when set, is called when the stream is not the one the
	// entries so far came from (deleted and made again, by sandox down
	// --purge then up, its sequences started over): forget them.
	Reset func()
}

// Follower follows the audit log for as long as it runs: it hands every
// entry (and population event) to its Handlers once, and reads the log
// again from its start whenever reading fails (NATS unreachable, no
// stream yet), skipping what it already handed over. One goroutine, Run's,
// reads; Status is safe for concurrent use.
type Follower struct {
	js  jetstream.JetStream
	h   Handlers
	log *slog.Logger

	mu      sync.Mutex
	last    uint64    // the sequence of the newest entry handed over
	lastPop uint64    // the sequence of the newest population event handed over
	created time.Time // when the stream read from was made
	err     error     // why the log cannot be read now; nil while it can
}

// NewFollower returns a follower of the audit log js holds that calls h.
// h.Entry is required. log receives a warning each time the reason the
// log cannot be read changes; nil discards them.
func NewFollower(js jetstream.JetStream, h Handlers, log *slog.Logger) *Follower {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Follower{js: js, h: h, log: log, err: errors.New("the audit log was not read yet")}
}

// RetryPause is how long a Follower waits before it reads the log again
// after an error, and how often it checks that the stream it reads was not
// made again.
const RetryPause = 2 * time.Second

// Run follows the audit log until ctx is done. It blocks; run it once.
func (f *Follower) Run(ctx context.Context) {
	for {
		created := f.restart(ctx)
		rctx, cancel := context.WithCancel(ctx)
		var wg sync.WaitGroup
		wg.Go(func() { f.watchStream(rctx, cancel, created) })
		var popErr error
		if f.h.Population != nil {
			wg.Go(func() {
				popErr = followPopulation(rctx, f.js, f.addPopulation)
				cancel()
			})
		}
		err := Replay(rctx, f.js, Filter{}, true, func(e Entry) error {
			f.add(e)
			return nil
		})
		cancel()
		wg.Wait()
		err = cmp.Or(err, popErr)
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			err = errors.New("the audit stream was deleted or made again")
		}
		f.mu.Lock()
		changed := f.err == nil || f.err.Error() != err.Error()
		f.err = err
		f.mu.Unlock()
		if changed {
			f.log.Warn("cannot read the audit log; trying again", "err", err, "every", RetryPause)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(RetryPause):
		}
	}
}

// restart calls Reset when the stream is not the one the entries so far
// came from, and returns when the stream was made; zero when it cannot be
// read.
func (f *Follower) restart(ctx context.Context) time.Time {
	stream, err := f.js.Stream(ctx, schemas.EventStream)
	f.mu.Lock()
	defer f.mu.Unlock()
	if err != nil {
		f.err = err
		return time.Time{} // Replay will say why too
	}
	f.err = nil
	info := stream.CachedInfo()
	if info.State.LastSeq < f.last || !f.created.IsZero() && !info.Created.Equal(f.created) {
		if f.h.Reset != nil {
			f.h.Reset()
		}
		f.last, f.lastPop = 0, 0
	}
	f.created = info.Created
	return info.Created
}

// watchStream calls stop when the stream made at created is gone or was
// made again: a reader of a deleted stream waits for ever. It checks every
// RetryPause until ctx is done.
func (f *Follower) watchStream(ctx context.Context, stop context.CancelFunc, created time.Time) {
	if created.IsZero() {
		return
	}
	tick := time.NewTicker(RetryPause)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		stream, err := f.js.Stream(ctx, schemas.EventStream)
		switch {
		case errors.Is(err, jetstream.ErrStreamNotFound):
			stop()
			return
		case err == nil && !stream.CachedInfo().Created.Equal(created):
			stop()
			return
		}
	}
}

// add hands e over unless it was handed over before a read from the start.
func (f *Follower) add(e Entry) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.err = nil
	if e.Seq <= f.last {
		return
	}
	f.last = e.Seq
	f.h.Entry(e)
}

// addPopulation hands a population event over unless it was handed over
// before a read from the start.
func (f *Follower) addPopulation(seq uint64, ev schemas.PopulationEvent) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if seq <= f.lastPop {
		return
	}
	f.lastPop = seq
	f.h.Population(ev)
}

// Status returns the sequence of the newest entry handed over, and why
// the log cannot be read now (nil while it can). A reader of the stream
// waits through a disconnection without an error, so a connection that is
// down is reported here.
func (f *Follower) Status() (uint64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err == nil && !f.js.Conn().IsConnected() {
		return f.last, errors.New("NATS is not connected")
	}
	return f.last, f.err
}

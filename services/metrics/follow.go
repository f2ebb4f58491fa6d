package metrics

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/audit"
)

// follower reads the audit stream into the stream's counters. One
// goroutine, Exporter.Run's, owns the reading; status is safe for
// concurrent use.
type follower struct {
	js  jetstream.JetStream
	sc  *streamCounters
	log *slog.Logger

	mu      sync.Mutex
	last    uint64    // the sequence of the newest entry counted
	lastPop uint64    // the sequence of the newest population event counted
	created time.Time // when the stream counted from was made
	err     error     // why the stream cannot be read now; nil while it can
}

func newFollower(js jetstream.JetStream, sc *streamCounters, log *slog.Logger) *follower {
	return &follower{js: js, sc: sc, log: log, err: errors.New("the audit stream was not read yet")}
}

// retryPause is how long the follower waits before it reads the stream
// again after an error, and how often it checks that the stream it reads
// was not made again.
const retryPause = 2 * time.Second

// run follows the audit stream until ctx is done. When reading fails it
// records why, waits and reads again from the start, counting only the
// entries after the last it counted: the audit index, which shows each
// command once, is rebuilt by every read from the start. A stream made
// again starts the counters again from zero.
func (f *follower) run(ctx context.Context) {
	for {
		created := f.restart(ctx)
		rctx, cancel := context.WithCancel(ctx)
		var wg sync.WaitGroup
		wg.Go(func() { f.watchStream(rctx, cancel, created) })
		var popErr error
		wg.Go(func() {
			popErr = followPopulation(rctx, f.js, f.addPopulation)
			cancel()
		})
		err := audit.Replay(rctx, f.js, audit.Filter{}, true, func(e audit.Entry) error {
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
			f.log.Warn("cannot read the audit stream; trying again", "err", err, "every", retryPause)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(retryPause):
		}
	}
}

// restart resets the counters when the stream is not the one they were
// counted from, and returns when the stream was made; zero when it cannot
// be read.
func (f *follower) restart(ctx context.Context) time.Time {
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
		f.sc.reset()
		f.last, f.lastPop = 0, 0
	}
	f.created = info.Created
	return info.Created
}

// watchStream calls stop when the stream made at created is gone or was
// made again: a reader of a deleted stream waits for ever.
func (f *follower) watchStream(ctx context.Context, stop context.CancelFunc, created time.Time) {
	if created.IsZero() {
		return
	}
	tick := time.NewTicker(retryPause)
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

// add counts e unless it was counted before a read from the start.
func (f *follower) add(e audit.Entry) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.err = nil
	if e.Seq <= f.last {
		return
	}
	f.last = e.Seq
	f.sc.count(e)
}

// addPopulation counts a population event unless it was counted before a
// read from the start.
func (f *follower) addPopulation(seq uint64, ev schemas.PopulationEvent) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if seq <= f.lastPop {
		return
	}
	f.lastPop = seq
	f.sc.population(ev)
}

// status returns the sequence of the newest entry counted, and why the
// stream cannot be read now (nil while it can). A reader of the stream
// waits through a disconnection without an error, so a connection that is
// down is reported here.
func (f *follower) status() (uint64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err == nil && !f.js.Conn().IsConnected() {
		return f.last, errors.New("NATS is not connected")
	}
	return f.last, f.err
}

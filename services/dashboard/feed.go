package dashboard

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/audit"
)

// feed follows the audit log for the live parts of the pages: it keeps the
// newest rows, and hands every new row to the pages that watch. One
// goroutine, Server.Run's, owns the reading; the methods are safe for
// concurrent use.
type feed struct {
	js   jetstream.JetStream
	keep int
	log  *slog.Logger

	mu     sync.Mutex
	recent []Row // the newest keep rows, oldest first
	last   uint64
	// created is when the stream the rows come from was made.
	created time.Time
	err     error // why the log cannot be read now; nil while it can
	subs    map[chan Row]struct{}
}

func newFeed(js jetstream.JetStream, keep int, log *slog.Logger) *feed {
	return &feed{js: js, keep: keep, log: log, subs: map[chan Row]struct{}{}}
}

// retryPause is how long the feed waits before it reads the log again after
// an error (NATS unreachable, no stream yet).
const retryPause = 2 * time.Second

// run follows the audit log until ctx is done. When reading fails it
// records why (Status), waits and reads again from the start, skipping the
// rows it already has. A stream deleted and made again is read again from
// its start.
func (f *feed) run(ctx context.Context) {
	for {
		created := f.restart(ctx)
		rctx, cancel := context.WithCancel(ctx)
		var wg sync.WaitGroup
		wg.Go(func() { f.watchStream(rctx, cancel, created) })
		err := audit.Replay(rctx, f.js, audit.Filter{}, true, func(e audit.Entry) error {
			f.add(rowOf(e))
			return nil
		})
		cancel()
		wg.Wait()
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
			f.log.Warn("cannot read the audit log; trying again", "err", err, "every", retryPause)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(retryPause):
		}
	}
}

// restart forgets the kept rows when the stream is not the one they came
// from (it was deleted and made again, by sandox down --purge then up, and
// its sequences started over), and returns when the stream was made; zero when
// it cannot be read.
func (f *feed) restart(ctx context.Context) time.Time {
	stream, err := f.js.Stream(ctx, schemas.EventStream)
	if err != nil {
		return time.Time{} // Replay will say why
	}
	info := stream.CachedInfo()
	f.mu.Lock()
	defer f.mu.Unlock()
	if info.State.LastSeq < f.last || !f.created.IsZero() && !info.Created.Equal(f.created) {
		f.recent, f.last = nil, 0
	}
	f.created = info.Created
	return info.Created
}

// watchStream calls stop when the stream made at created is gone or was
// made again: a reader of a deleted stream waits for ever. It checks every
// retryPause until ctx is done.
func (f *feed) watchStream(ctx context.Context, stop context.CancelFunc, created time.Time) {
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

// add keeps r and hands it to every watcher. A watcher too slow to take it
// misses it rather than holding up the others.
func (f *feed) add(r Row) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.err = nil
	if r.Seq <= f.last {
		return // read again after an error
	}
	f.last = r.Seq
	f.recent = append(f.recent, r)
	if len(f.recent) > f.keep {
		f.recent = f.recent[len(f.recent)-f.keep:]
	}
	for ch := range f.subs {
		select {
		case ch <- r:
		default:
		}
	}
}

// Status returns the sequence of the newest row read, and why the log
// cannot be read now (nil while it can).
func (f *feed) Status() (uint64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.last, f.err
}

// Recent returns the kept rows that match, newest first, at most n.
func (f *feed) Recent(match func(Row) bool, n int) []Row {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Row
	for i := len(f.recent) - 1; i >= 0 && len(out) < n; i-- {
		if match(f.recent[i]) {
			out = append(out, f.recent[i])
		}
	}
	return out
}

// watch returns the kept rows after seq, oldest first, and a channel of the
// rows that come after them, with nothing lost between the two. Call stop
// when done; it closes nothing, so the channel just stops receiving.
func (f *feed) watch(after uint64) (backlog []Row, rows <-chan Row, stop func()) {
	ch := make(chan Row, 256)
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, r := range f.recent {
		if r.Seq > after {
			backlog = append(backlog, r)
		}
	}
	f.subs[ch] = struct{}{}
	return backlog, ch, func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		delete(f.subs, ch)
	}
}

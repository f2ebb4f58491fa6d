package dashboard

import (
	"context"
	"log/slog"
	"sync"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sandox/sandox/services/audit"
)

// feed follows the audit log for the live parts of the pages: it keeps the
// newest rows, and hands every new row to the pages that watch. One
// goroutine, Server.Run's, owns the reading (an audit.Follower); the
// methods are safe for concurrent use. The follower calls add and reset
// under its own lock, so its lock comes before mu.
type feed struct {
	follow *audit.Follower
	keep   int

	mu     sync.Mutex
	recent []Row // the newest keep rows, oldest first
	subs   map[chan Row]struct{}
}

func newFeed(js jetstream.JetStream, keep int, log *slog.Logger) *feed {
	f := &feed{keep: keep, subs: map[chan Row]struct{}{}}
	f.follow = audit.NewFollower(js, audit.Handlers{
		Entry: func(e audit.Entry) { f.add(rowOf(e)) },
		Reset: f.reset,
	}, log)
	return f
}

// run follows the audit log until ctx is done (audit.Follower.Run).
func (f *feed) run(ctx context.Context) { f.follow.Run(ctx) }

// reset forgets the kept rows: the stream is not the one they came from.
func (f *feed) reset() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.recent = nil
}

// add keeps r and hands it to every watcher; the follower hands each
// entry over once. A watcher too slow to take it
// misses it rather than holding up the others.
func (f *feed) add(r Row) {
	f.mu.Lock()
	defer f.mu.Unlock()
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
func (f *feed) Status() (uint64, error) { return f.follow.Status() }

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

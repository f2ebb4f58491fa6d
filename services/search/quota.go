package search

import (
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Quota bounds how often one sandbox may search: a token bucket per
// sandbox that holds Burst requests and refills at PerMinute a minute.
// Every search is paid for with the operator's API keys, so one sandbox in
// a loop must not spend them for everyone.
type Quota struct {
	// PerMinute is the sustained rate; zero or less turns the quota off.
	PerMinute float64
	// Burst is how many requests a sandbox may send at once after a quiet
	// spell; at least 1.
	Burst int
}

// limiters holds the token buckets of the sandboxes that searched lately.
// It is safe for concurrent use.
type limiters struct {
	quota Quota
	now   func() time.Time

	mu        sync.Mutex
	buckets   map[string]*rate.Limiter
	lastSweep time.Time
}

func newLimiters(q Quota, now func() time.Time) *limiters {
	q.Burst = max(q.Burst, 1)
	return &limiters{quota: q, now: now, buckets: make(map[string]*rate.Limiter)}
}

// take spends one request of sandbox's quota. When none is left it returns
// false and how long until one is.
func (l *limiters) take(sandbox string) (bool, time.Duration) {
	if l.quota.PerMinute <= 0 {
		return true, 0
	}
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sweep(now)
	b, ok := l.buckets[sandbox]
	if !ok {
		b = rate.NewLimiter(rate.Limit(l.quota.PerMinute/60), l.quota.Burst)
		l.buckets[sandbox] = b
	}
	r := b.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return false, d
	}
	return true, 0
}

// sweep forgets, at most once a minute, the buckets that have refilled:
// a full bucket is the same as none, so the map holds only the sandboxes
// that searched within the time a bucket takes to refill.
func (l *limiters) sweep(now time.Time) {
	if now.Sub(l.lastSweep) < time.Minute {
		return
	}
	l.lastSweep = now
	for id, b := range l.buckets {
		if b.TokensAt(now) >= float64(l.quota.Burst) {
			delete(l.buckets, id)
		}
	}
}

// size is the number of buckets held, for tests.
func (l *limiters) size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.buckets)
}

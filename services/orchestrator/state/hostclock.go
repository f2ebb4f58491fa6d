package state

import (
	"sync"
	"time"
)

// hostClock judges how long each host has been silent by this worker's
// own monotonic clock: the time since it first saw the host's current
// record (its revision in the bucket), which every heartbeat replaces.
// The hosts' clocks need not agree: a host whose clock runs minutes
// behind is not taken for lost, nor one whose clock runs ahead for live
// after it died. The price: a worker that has just started counts every
// host's silence from its first read, so it takes HostLostAfter to judge a
// host that died before it started (another running worker, which has
// been watching, usually marks it first).
type hostClock struct {
	mu   sync.Mutex
	seen map[string]hostSighting
}

type hostSighting struct {
	rev uint64
	at  time.Time // when this worker first saw rev (monotonic)
}

// silence records a read of host name's record at revision rev, at now,
// and returns how long the host has been silent.
func (c *hostClock) silence(name string, rev uint64, now time.Time) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen == nil {
		c.seen = map[string]hostSighting{}
	}
	if s, ok := c.seen[name]; ok && s.rev == rev {
		return now.Sub(s.at)
	}
	c.seen[name] = hostSighting{rev: rev, at: now}
	return 0
}

// Package locks serializes the commands on one group or sandbox within an
// orchestrator worker; workers among themselves rely on compare-and-set in
// the store.
//
// Lock order: a group's key (Group) before the key of one of its
// sandboxes (Sandbox), never the other way round, and at most one sandbox
// key at a time. Group commands (create_sandbox, start_group, end_group)
// hold the group key and take each sandbox's key in turn; sandbox commands
// and the event watcher take only the sandbox key. A command forwarded to
// this host takes no group key: a group command holds its key while it
// waits for its parts on other hosts, and must never wait for a group key
// held by one waiting for it.
package locks

import "sync"

// Keyed is a set of mutexes by key. An entry lives only while someone
// holds or waits for its key. The zero value is ready; it is safe for
// concurrent use.
type Keyed struct {
	mu    sync.Mutex
	locks map[string]*keyedLock
}

type keyedLock struct {
	sync.Mutex
	refs int // holders and waiters, guarded by Keyed.mu
}

// Lock blocks until it holds key and returns the func that releases it.
func (k *Keyed) Lock(key string) (unlock func()) {
	k.mu.Lock()
	if k.locks == nil {
		k.locks = make(map[string]*keyedLock)
	}
	l, ok := k.locks[key]
	if !ok {
		l = &keyedLock{}
		k.locks[key] = l
	}
	l.refs++
	k.mu.Unlock()
	l.Lock()
	return func() {
		l.Unlock()
		k.mu.Lock()
		defer k.mu.Unlock()
		if l.refs--; l.refs == 0 {
			delete(k.locks, key)
		}
	}
}

// Size is the number of keys held or waited for.
func (k *Keyed) Size() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.locks)
}

// Group is the key of group id.
func Group(id string) string { return "group/" + id }

// Sandbox is the key of sandbox id.
func Sandbox(id string) string { return "sandbox/" + id }

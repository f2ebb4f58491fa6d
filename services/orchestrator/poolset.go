package orchestrator

import (
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/sandox/sandox/schemas"
)

// poolSource is what the members of a pool are made of: the inputs of a
// create, as a group spec gives them.
type poolSource struct {
	// group is the group whose pool it is; "" is the default pool.
	group string
	// created is when the group was created, so that a pool never serves
	// a later group of the same id.
	created    time.Time
	families   []string
	tools      []schemas.ToolFile
	compute    schemas.ComputeResources
	egress     *schemas.Egress
	overcommit float64
}

// warmPool is one pool of ready sandboxes. It is safe for concurrent use.
type warmPool struct {
	src  poolSource
	size int
	// idle empties the pool after that long without a create; 0 never.
	idle time.Duration

	mu sync.Mutex
	// ready lists the pool ids ready to be claimed, oldest first.
	ready []string
	// claiming counts the pool ids taken by claims not yet done: they
	// still count in the pool's size, so that the pool loop does not fill
	// in their place before the claim took or gave back each one.
	claiming int
	// lastUse is when a create that the pool could serve last came.
	lastUse time.Time
}

func newWarmPool(src poolSource, size int, idle time.Duration) *warmPool {
	return &warmPool{src: src, size: size, idle: idle, lastUse: time.Now()}
}

// touch marks the pool in use: a create came that it could serve.
func (p *warmPool) touch() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.lastUse = time.Now()
}

// take removes and returns the oldest ready pool id; ok is false when
// none is ready. The caller then calls giveBack or claimed with the id.
func (p *warmPool) take() (id string, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.ready) == 0 {
		return "", false
	}
	id, p.ready = p.ready[0], p.ready[1:]
	p.claiming++
	return id, true
}

// giveBack makes a pool id that take returned ready again.
func (p *warmPool) giveBack(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.claiming--
	p.ready = append(p.ready, id)
}

// claimed ends the claim of a pool id that take returned: it left the
// pool (claimed, or removed by a claim that failed).
func (p *warmPool) claimed() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.claiming--
}

// put makes pool id ready to be claimed (again).
func (p *warmPool) put(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ready = append(p.ready, id)
}

// drop removes and returns the newest ready pool id.
func (p *warmPool) drop() (string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.ready) == 0 {
		return "", false
	}
	id := p.ready[len(p.ready)-1]
	p.ready = p.ready[:len(p.ready)-1]
	return id, true
}

// count returns how many sandboxes are ready.
func (p *warmPool) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.ready)
}

// held returns how many sandboxes the pool holds: ready or being claimed.
func (p *warmPool) held() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.ready) + p.claiming
}

// target is how many sandboxes the pool should hold now: its size, or
// none once its idle time has passed without a create it could serve.
func (p *warmPool) target() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.idle > 0 && time.Since(p.lastUse) > p.idle {
		return 0
	}
	return p.size
}

// poolSet is a worker's pools, keyed by group id ("" for the default
// pool). It is safe for concurrent use. Lock order: the set's mu before a
// pool's.
type poolSet struct {
	mu    sync.Mutex
	pools map[string]*warmPool
	// ended remembers, per group id, the creation time of a group whose
	// pool was drained by end_group, so that the pool loop does not fill
	// it again while the group's record is still there.
	ended map[string]time.Time
	// kick wakes the pool loop.
	kick chan struct{}
	// hosts keeps the engine's host for claims.
	hosts hostCache
}

func newPoolSet() *poolSet {
	return &poolSet{pools: map[string]*warmPool{}, ended: map[string]time.Time{}, kick: make(chan struct{}, 1)}
}

// wake asks the pool loop to check the pools.
func (s *poolSet) wake() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// get returns the pool of key, or nil.
func (s *poolSet) get(key string) *warmPool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pools[key]
}

// set makes p the pool of key and returns the pool it replaces, or nil.
func (s *poolSet) set(key string, p *warmPool) *warmPool {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.pools[key]
	s.pools[key] = p
	return old
}

// remove forgets the pool of key and returns it, or nil.
func (s *poolSet) remove(key string) *warmPool {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pools[key]
	delete(s.pools, key)
	return p
}

// all returns every pool, the default one first, then by group id.
func (s *poolSet) all() []*warmPool {
	s.mu.Lock()
	defer s.mu.Unlock()
	keys := slices.Sorted(maps.Keys(s.pools))
	out := make([]*warmPool, 0, len(keys))
	for _, k := range keys {
		out = append(out, s.pools[k])
	}
	return out
}

// add makes pool id ready in p, unless p is no longer one of the set's
// pools (its group ended while the sandbox was made): ok is then false.
func (s *poolSet) add(p *warmPool, id string) (ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pools[p.src.group] != p {
		return false
	}
	p.put(id)
	return true
}

package pool

import (
	"sync"
	"time"

	"github.com/sandox/sandox/schemas"
)

// Source is what the members of a pool are made of: the inputs of a
// create, as a group spec gives them.
type Source struct {
	// Group is the group whose pool it is; "" is the default pool.
	Group string
	// Created is when the group was created, so that a pool never serves
	// a later group of the same id.
	Created    time.Time
	Families   []string
	Tools      []schemas.ToolFile
	Compute    schemas.ComputeResources
	Egress     *schemas.Egress
	Overcommit float64
}

// warm is one pool of ready sandboxes. It is safe for concurrent use.
type warm struct {
	src  Source
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

func newWarm(src Source, size int, idle time.Duration) *warm {
	return &warm{src: src, size: size, idle: idle, lastUse: time.Now()}
}

// touch marks the pool in use: a create came that it could serve.
func (p *warm) touch() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.lastUse = time.Now()
}

// take removes and returns the oldest ready pool id; ok is false when
// none is ready. The caller then calls giveBack or claimed with the id.
func (p *warm) take() (id string, ok bool) {
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
func (p *warm) giveBack(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.claiming--
	p.ready = append(p.ready, id)
}

// claimed ends the claim of a pool id that take returned: it left the
// pool (claimed, or removed by a claim that failed).
func (p *warm) claimed() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.claiming--
}

// put makes pool id ready to be claimed (again).
func (p *warm) put(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ready = append(p.ready, id)
}

// drop removes and returns the newest ready pool id.
func (p *warm) drop() (string, bool) {
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
func (p *warm) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.ready)
}

// held returns how many sandboxes the pool holds: ready or being claimed.
func (p *warm) held() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.ready) + p.claiming
}

// target is how many sandboxes the pool should hold now: its size, or
// none once its idle time has passed without a create it could serve.
func (p *warm) target() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.idle > 0 && time.Since(p.lastUse) > p.idle {
		return 0
	}
	return p.size
}

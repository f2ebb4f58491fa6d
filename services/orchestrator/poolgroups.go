package orchestrator

import (
	"context"
	"time"

	"github.com/sandox/sandox/schemas"
)

// The pools of groups: every worker keeps, for each group whose spec asks
// for one (GroupSpec.Pool), a pool of the group's shape. The pool loop
// learns of groups from the group bucket at each tick, so that a group
// created on another worker gets its pool here too, and a group ended
// anywhere has its pool drained here.

// defaultPool returns the worker's default pool (Config.PoolSize), or nil
// when the size is 0.
func defaultPool(cfg Config) *warmPool {
	if cfg.PoolSize <= 0 {
		return nil
	}
	return newWarmPool(poolSource{compute: cfg.PoolCompute}, cfg.PoolSize, cfg.PoolIdle)
}

// groupPool returns the pool g asks for, or nil when it asks for none.
func (w *Worker) groupPool(g schemas.GroupStatus) *warmPool {
	if g.Spec.Pool == nil || g.Spec.Pool.Size <= 0 {
		return nil
	}
	idle := w.cfg.PoolIdle
	if s := g.Spec.Pool.IdleShrinkSeconds; s > 0 {
		idle = seconds(s)
	}
	src := poolSource{
		group:      g.ID,
		created:    g.CreatedAt,
		families:   g.Spec.Families,
		tools:      g.Spec.Tools,
		compute:    g.Spec.Compute,
		egress:     g.Spec.Egress,
		overcommit: g.Spec.Overcommit,
	}
	return newWarmPool(src, g.Spec.Pool.Size, idle)
}

// checkPoolSpec validates a group's pool.
func checkPoolSpec(p *schemas.PoolSpec) error {
	if p == nil {
		return nil
	}
	if p.Size < 0 || p.Size > schemas.MaxPoolSize {
		return schemas.Errorf(schemas.CodeBadRequest, "pool size %d: want 0 to %d", p.Size, schemas.MaxPoolSize)
	}
	if p.IdleShrinkSeconds < 0 {
		return schemas.Errorf(schemas.CodeBadRequest, "pool idle_shrink_seconds %v: want 0 or more", p.IdleShrinkSeconds)
	}
	return nil
}

// syncGroupPools makes the worker's group pools those of the groups in
// the bucket: a pool for each group that asks for one (replaced when the
// group of that id is a new one), none for a group that is gone or whose
// pool end_group drained. A pool it forgets is drained.
func (w *Worker) syncGroupPools(ctx context.Context) {
	ids, err := bucketKeys(ctx, w.store.groups)
	if err != nil {
		if ctx.Err() == nil {
			w.log.Warn("list groups for their warm pools", "err", err)
		}
		return
	}
	want := map[string]*warmPool{}
	created := map[string]time.Time{}
	for _, id := range ids {
		g, _, err := w.store.group(ctx, id)
		if err != nil {
			continue
		}
		created[id] = g.CreatedAt
		if p := w.groupPool(g); p != nil && !w.pools.endedGroup(id, g.CreatedAt) {
			want[id] = p
		}
	}
	w.pools.forgetEnded(created)
	for _, p := range w.pools.all() {
		if g := p.src.group; g != "" {
			if n, ok := want[g]; !ok || !n.src.created.Equal(p.src.created) {
				w.pools.remove(g)
				w.drainPool(ctx, p)
			}
		}
	}
	for id, p := range want {
		w.pools.adopt(id, p)
	}
}

// adopt makes p the pool of group id unless the group has one or ended
// here.
func (s *poolSet) adopt(id string, p *warmPool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t, ok := s.ended[id]; ok && t.Equal(p.src.created) || s.pools[id] != nil {
		return
	}
	s.pools[id] = p
}

// dropGroupPool drains group g's pool on this worker and keeps the pool
// loop from filling it again while the group's record is there. It is
// called by end_group; other workers drain theirs when the record is gone.
func (w *Worker) dropGroupPool(ctx context.Context, g schemas.GroupStatus) {
	w.pools.markEnded(g.ID, g.CreatedAt)
	if p := w.pools.remove(g.ID); p != nil {
		w.drainPool(ctx, p)
	}
}

// markEnded remembers that group id (created at created) ended here.
func (s *poolSet) markEnded(id string, created time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ended[id] = created
}

// endedGroup reports whether group id, created at created, ended here.
func (s *poolSet) endedGroup(id string, created time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.ended[id]
	return ok && t.Equal(created)
}

// forgetEnded forgets the ended groups that are not in groups (id to
// creation time) as they were then.
func (s *poolSet) forgetEnded(groups map[string]time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, t := range s.ended {
		if c, ok := groups[id]; !ok || !c.Equal(t) {
			delete(s.ended, id)
		}
	}
}

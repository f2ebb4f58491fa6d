package orchestrator

import (
	"context"
	"encoding/json"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sandox/sandox/schemas"
)

// The pools of groups: every worker keeps, for each group whose spec asks
// for one (GroupSpec.Pool), a pool of the group's shape. The pool loop
// follows the group bucket (watchGroups), so that a group created on
// another worker gets its pool here too, and a group ended anywhere has
// its pool drained here.

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

// watchGroups follows the group bucket for the pool loop: the current
// groups first, then each change. The caller stops the watcher.
func (w *Worker) watchGroups(ctx context.Context) (jetstream.KeyWatcher, error) {
	return w.store.WatchGroups(ctx)
}

// groupChanged makes the worker's pool of the group in entry what the
// group now asks for: a pool for a group that asks for one (replacing
// the pool of an earlier group of the same id), none for a group that is
// gone or that asks for none. A pool it forgets is drained.
func (w *Worker) groupChanged(ctx context.Context, entry jetstream.KeyValueEntry) {
	id := entry.Key()
	var want *warmPool
	if entry.Operation() == jetstream.KeyValuePut {
		var g schemas.GroupStatus
		if err := json.Unmarshal(entry.Value(), &g); err != nil {
			w.log.Warn("a group record that does not decode", "group", id, "err", err)
			return
		}
		want = w.groupPool(g)
	} else {
		w.pools.forgetEnded(id)
	}
	if p := w.pools.get(id); p != nil && (want == nil || !want.src.created.Equal(p.src.created)) {
		w.pools.remove(id)
		w.drainPool(ctx, p)
	}
	if want != nil {
		w.pools.adopt(id, want)
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

// forgetEnded forgets that group id ended here: its record is gone.
func (s *poolSet) forgetEnded(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.ended, id)
}

package pool

import (
	"context"
	"encoding/json"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sandox/sandox/schemas"
)

// The pools of groups: every worker keeps, for each group whose spec asks
// for one (GroupSpec.Pool), a pool of the group's shape. The pool loop
// follows the group bucket, so that a group created on another worker
// gets its pool here too, and a group ended anywhere has its pool drained
// here.

// groupPool returns the pool g asks for, or nil when it asks for none.
func (s *Pools) groupPool(g schemas.GroupStatus) *warm {
	if g.Spec.Pool == nil || g.Spec.Pool.Size <= 0 {
		return nil
	}
	idle := s.cfg.Idle
	if secs := g.Spec.Pool.IdleShrinkSeconds; secs > 0 {
		idle = time.Duration(secs * float64(time.Second))
	}
	src := Source{
		Group:      g.ID,
		Created:    g.CreatedAt,
		Families:   g.Spec.Families,
		Tools:      g.Spec.Tools,
		Compute:    g.Spec.Compute,
		Egress:     g.Spec.Egress,
		Overcommit: g.Spec.Overcommit,
	}
	return newWarm(src, g.Spec.Pool.Size, idle)
}

// CheckSpec validates a group's pool: nil (none) is valid. The error is
// CodeBadRequest.
func CheckSpec(p *schemas.PoolSpec) error {
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

// groupChanged makes the worker's pool of the group in entry what the
// group now asks for: a pool for a group that asks for one (replacing
// the pool of an earlier group of the same id), none for a group that is
// gone or that asks for none. A pool it forgets is drained.
func (s *Pools) groupChanged(ctx context.Context, entry jetstream.KeyValueEntry) {
	id := entry.Key()
	var want *warm
	if entry.Operation() == jetstream.KeyValuePut {
		var g schemas.GroupStatus
		if err := json.Unmarshal(entry.Value(), &g); err != nil {
			s.log.Warn("a group record that does not decode", "group", id, "err", err)
			return
		}
		want = s.groupPool(g)
	} else {
		s.forgetEnded(id)
	}
	if p := s.get(id); p != nil && (want == nil || !want.src.Created.Equal(p.src.Created)) {
		s.remove(id)
		s.drain(ctx, p)
	}
	if want != nil {
		s.adopt(id, want)
	}
}

// adopt makes p the pool of group id unless the group has one or ended
// here.
func (s *Pools) adopt(id string, p *warm) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t, ok := s.ended[id]; ok && t.Equal(p.src.Created) || s.pools[id] != nil {
		return
	}
	s.pools[id] = p
}

// DropGroup drains group g's pool on this worker and keeps the pool loop
// from filling it again while the group's record is there. end_group
// calls it; other workers drain theirs when the record is gone. It blocks
// until the pool's sandboxes are removed.
func (s *Pools) DropGroup(ctx context.Context, g schemas.GroupStatus) {
	s.markEnded(g.ID, g.CreatedAt)
	if p := s.remove(g.ID); p != nil {
		s.drain(ctx, p)
	}
}

// markEnded remembers that group id (created at created) ended here.
func (s *Pools) markEnded(id string, created time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ended[id] = created
}

// forgetEnded forgets that group id ended here: its record is gone.
func (s *Pools) forgetEnded(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.ended, id)
}

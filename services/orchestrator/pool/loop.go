package pool

import (
	"context"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sandox/sandox/schemas"
)

// Tick is how often the pool loop checks the pools without a kick.
const Tick = time.Second

// reapInterval is how often a running worker looks for the pooled
// sandboxes of workers that died.
const reapInterval = 30 * time.Second

// Run keeps the pools at their targets until ctx is done, then removes
// the sandboxes still in them. It answers on the worker's pool subject
// meanwhile, so that other workers know its pooled sandboxes are kept,
// follows the group bucket for the pools of groups, and reaps the pooled
// sandboxes of dead workers every reapInterval. A fill that fails (the
// host is full, the image cannot be built) is logged and tried again at
// the next tick. It blocks until ctx is done.
func (s *Pools) Run(ctx context.Context) {
	alive, err := s.nc.Subscribe(schemas.PoolWorkerSubject(s.cfg.Worker), func(m *nats.Msg) { _ = m.Respond(nil) })
	if err != nil {
		s.log.Error("the warm pools are off: answer on the pool subject", "err", err)
		return
	}
	defer func() { _ = alive.Unsubscribe() }()
	defer s.drainAll(context.WithoutCancel(ctx))
	var groups jetstream.KeyWatcher // nil until watching: see rewatch
	defer func() {
		if groups != nil {
			_ = groups.Stop()
		}
	}()
	fill := time.NewTicker(Tick)
	defer fill.Stop()
	reap := time.NewTicker(reapInterval)
	defer reap.Stop()
	for {
		groups = s.rewatch(ctx, groups)
		for _, p := range s.all() {
			s.resize(ctx, p)
		}
		select {
		case <-ctx.Done():
			return
		case entry, ok := <-updates(groups):
			if !ok {
				s.log.Warn("the watch of the groups ended; watching again")
				_ = groups.Stop()
				groups = nil
			} else if entry != nil {
				s.groupChanged(ctx, entry)
			}
		case <-s.kick:
		case <-fill.C:
		case <-reap.C:
			s.Reap(ctx, false)
		}
	}
}

// rewatch returns watcher, or, when it is nil, a new watch of the groups
// (nil again when that fails: the next tick tries again). A new watch
// starts with every group, so the pools of groups catch up.
func (s *Pools) rewatch(ctx context.Context, watcher jetstream.KeyWatcher) jetstream.KeyWatcher {
	if watcher != nil || ctx.Err() != nil {
		return watcher
	}
	watcher, err := s.store.WatchGroups(ctx)
	if err != nil {
		s.log.Warn("watch the groups for their pools", "err", err)
		return nil
	}
	return watcher
}

// updates is the channel of watcher's entries, or nil (never ready)
// without a watcher.
func updates(watcher jetstream.KeyWatcher) <-chan jetstream.KeyValueEntry {
	if watcher == nil {
		return nil
	}
	return watcher.Updates()
}

// resize fills p up to its target, one sandbox at a time, or removes
// what is above it.
func (s *Pools) resize(ctx context.Context, p *warm) {
	target := p.target()
	for ctx.Err() == nil && p.held() < target {
		id, err := s.maker.Fill(ctx, p.src)
		if err != nil {
			if ctx.Err() == nil {
				s.log.Warn("fill the warm pool", "pool", p.src.Group, "err", err)
			}
			return
		}
		if !s.add(p, id) {
			s.removeLogged(ctx, id)
			return
		}
	}
	for p.held() > target {
		id, ok := p.drop()
		if !ok {
			return
		}
		s.removeLogged(ctx, id)
	}
}

// drainAll removes every sandbox still in the pools.
func (s *Pools) drainAll(ctx context.Context) {
	for _, p := range s.all() {
		s.drain(ctx, p)
	}
}

// drain removes every sandbox still in p.
func (s *Pools) drain(ctx context.Context, p *warm) {
	for {
		id, ok := p.drop()
		if !ok {
			return
		}
		s.removeLogged(ctx, id)
	}
}

// removeLogged removes a pooled sandbox that was never claimed and logs
// a failure.
func (s *Pools) removeLogged(ctx context.Context, id string) {
	if err := s.maker.Remove(ctx, id); err != nil {
		s.log.Warn("remove a pooled sandbox", "sandbox", id, "err", err)
	}
}

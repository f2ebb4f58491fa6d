package pool

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/orchestrator/state"
)

// Pooled sandboxes outlive the worker that keeps them only by accident (a
// crash, a lost host): their records say which worker keeps them
// (SandboxStatus.PoolWorker) and each live worker answers on its pool
// subject (schemas.PoolWorkerSubject). Reap removes the unclaimed pooled
// sandboxes of workers that do not answer: at start, also those of the
// worker's own name, since a worker that starts keeps none yet.

// aliveTimeout bounds the question whether a worker lives. A worker that
// does not answer in time is taken to be alive (busy): only "no
// responders" says it is gone.
const aliveTimeout = time.Second

// Reap removes every unclaimed pooled sandbox whose worker is gone (and,
// when starting, those of this worker's name): its container, volume,
// identity, ledger allocation and record. A claimed one belongs to its
// sandbox and is left alone. Failures are logged; the next run tries
// again. It blocks until done.
func (s *Pools) Reap(ctx context.Context, starting bool) {
	ids, err := s.store.SandboxIDs(ctx)
	if err != nil {
		if ctx.Err() == nil {
			s.log.Warn("list pooled sandboxes to reap", "err", err)
		}
		return
	}
	alive := map[string]bool{}
	for _, id := range ids {
		if !schemas.IsPoolID(id) {
			continue
		}
		p, _, err := s.store.Sandbox(ctx, id)
		if err != nil || !p.Pooled || p.ClaimedBy != "" {
			continue
		}
		owner := p.PoolWorker
		if owner == s.cfg.Worker && !starting {
			continue
		}
		if owner != s.cfg.Worker && owner != "" {
			live, ok := alive[owner]
			if !ok {
				live = s.workerAlive(ctx, owner)
				alive[owner] = live
			}
			if live {
				continue
			}
		}
		if err := s.release(ctx, p); err != nil {
			s.log.Warn("remove a pooled sandbox whose worker is gone", "sandbox", id, "pool_worker", owner, "err", err)
			continue
		}
		s.log.Info("removed a pooled sandbox whose worker is gone", "sandbox", id, "pool_worker", owner, "host", p.Host)
	}
	if starting {
		s.removeStaleCreds(ctx)
	}
}

// release removes unclaimed pooled sandbox p: everything of it when it is
// on this worker's host; otherwise (its host is another, maybe lost) what
// is not on that host: its identity, its allocation in that host's ledger
// and its record. A worker that starts on that host again removes the
// container (the orchestrator's reconcile) and the credentials directory
// (removeStaleCreds).
func (s *Pools) release(ctx context.Context, p schemas.SandboxStatus) error {
	if s.ownedHere(p.Host) {
		return s.maker.Remove(ctx, p.ID)
	}
	errs := []error{s.maker.Revoke(ctx, p.ID)}
	if h, err := s.store.Host(ctx, p.Host); err == nil && h.EngineID != "" {
		errs = append(errs, s.store.ReleaseLedger(ctx, state.LedgerKey(h.EngineID), p.ID))
	}
	errs = append(errs, s.store.DeleteSandbox(ctx, p.ID))
	return errors.Join(errs...)
}

// credsDir returns the credentials directory of pooled sandbox poolID,
// as the orchestrator makes it (identity.Identities.PoolDir); "" when
// cfg.CredsDir is.
func (s *Pools) credsDir(poolID string) string {
	if s.cfg.CredsDir == "" {
		return ""
	}
	return filepath.Join(s.cfg.CredsDir, poolID+".d")
}

// removeStaleCreds removes the credentials directories of pooled
// sandboxes that have no record any more (released by a worker of another
// host while this one was gone).
func (s *Pools) removeStaleCreds(ctx context.Context) {
	if s.cfg.CredsDir == "" {
		return
	}
	dirs, err := filepath.Glob(filepath.Join(s.cfg.CredsDir, schemas.PoolIDPrefix+"*.d"))
	if err != nil {
		return
	}
	for _, dir := range dirs {
		id := strings.TrimSuffix(filepath.Base(dir), ".d")
		if _, _, err := s.store.Sandbox(ctx, id); !errors.Is(err, schemas.CodeNotFound) {
			continue
		}
		if err := os.RemoveAll(dir); err != nil {
			s.log.Warn("remove the credentials of a pooled sandbox that no longer exists", "sandbox", id, "err", err)
		}
	}
}

// workerAlive reports whether worker answers on its pool subject. Only
// a "no responders" answer says no.
func (s *Pools) workerAlive(ctx context.Context, worker string) bool {
	ctx, cancel := context.WithTimeout(ctx, aliveTimeout)
	defer cancel()
	_, err := s.nc.RequestWithContext(ctx, schemas.PoolWorkerSubject(worker), nil)
	return !errors.Is(err, nats.ErrNoResponders)
}

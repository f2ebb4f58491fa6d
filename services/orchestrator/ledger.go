package orchestrator

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/schemas/resources"
)

// ledgerKey is the key of an engine's ledger in schemas.LedgerBucket: every
// worker that drives the same engine shares one ledger.
func ledgerKey(engineID string) string {
	if engineID == "" {
		return schemas.LedgerKey
	}
	return schemas.LedgerKey + "." + subjectToken(engineID)
}

// updateLedger applies change to the ledger under key with compare-and-set.
func (s *store) updateLedger(ctx context.Context, key string, change func(*resources.Ledger) error) error {
	_, err := update(ctx, s.ledger, key, nil, change)
	return err
}

// readLedger reads the ledger under key; an absent ledger is empty.
func (s *store) readLedger(ctx context.Context, key string) (resources.Ledger, error) {
	var l resources.Ledger
	if _, err := get(ctx, s.ledger, key, &l); err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
		return l, fmt.Errorf("read ledger: %w", err)
	}
	return l, nil
}

// admit records the resources of sandbox id in the engine's ledger, or
// refuses them with CodeResourceExhausted when they do not fit in what the
// other sandboxes leave free.
func (w *Worker) admit(ctx context.Context, id string, r schemas.ResolvedResources, host resources.Host, overcommit float64) error {
	key, err := w.engineKey(ctx)
	if err != nil {
		return err
	}
	return w.store.updateLedger(ctx, key, func(l *resources.Ledger) error {
		return l.Admit(id, r, host, overcommit)
	})
}

// release forgets the resources of sandbox id.
func (w *Worker) release(ctx context.Context, id string) error {
	key, err := w.engineKey(ctx)
	if err != nil {
		return err
	}
	return w.store.releaseLedger(ctx, key, id)
}

// engineKey returns the ledger key of the worker's engine, asking the
// engine for its id once.
func (w *Worker) engineKey(ctx context.Context) (string, error) {
	w.engine.mu.Lock()
	defer w.engine.mu.Unlock()
	if w.engine.key == "" {
		h, err := w.rt.Host(ctx)
		if err != nil {
			return "", err
		}
		w.engine.key = ledgerKey(h.ID)
	}
	return w.engine.key, nil
}

// releaseLedger forgets the allocation of sandbox id in the ledger under
// key; an id it does not hold is no change.
func (s *store) releaseLedger(ctx context.Context, key, id string) error {
	return s.updateLedger(ctx, key, func(l *resources.Ledger) error {
		if _, ok := l.Allocations[id]; !ok {
			return errUnchanged
		}
		l.Release(id)
		return nil
	})
}

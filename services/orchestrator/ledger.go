package orchestrator

import (
	"context"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/schemas/resources"
	"github.com/sandox/sandox/services/orchestrator/state"
)

// admit records the resources of sandbox id in the engine's ledger, or
// refuses them with CodeResourceExhausted when they do not fit in what the
// other sandboxes leave free.
func (w *Worker) admit(ctx context.Context, id string, r schemas.ResolvedResources, host resources.Host, overcommit float64) error {
	key, err := w.engineKey(ctx)
	if err != nil {
		return err
	}
	return w.store.UpdateLedger(ctx, key, func(l *resources.Ledger) error {
		return l.Admit(id, r, host, overcommit)
	})
}

// release forgets the resources of sandbox id.
func (w *Worker) release(ctx context.Context, id string) error {
	key, err := w.engineKey(ctx)
	if err != nil {
		return err
	}
	return w.store.ReleaseLedger(ctx, key, id)
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
		w.engine.key = state.LedgerKey(h.ID)
	}
	return w.engine.key, nil
}

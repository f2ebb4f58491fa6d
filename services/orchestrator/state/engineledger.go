package state

import (
	"context"
	"sync"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/schemas/resources"
	"github.com/sandox/sandox/services/orchestrator/runtime"
)

// EngineLedger is the ledger of one engine's sandboxes, against which a
// worker admits them: every worker that drives the same engine shares it.
// It asks the engine for its id once, at the first call. It is safe for
// concurrent use.
type EngineLedger struct {
	store  *Store
	engine runtime.HostReader

	mu  sync.Mutex
	key string
}

// NewEngineLedger returns the ledger in store of the engine that engine
// describes.
func NewEngineLedger(store *Store, engine runtime.HostReader) *EngineLedger {
	return &EngineLedger{store: store, engine: engine}
}

// Key returns the ledger's key (LedgerKey of the engine's id), asking the
// engine for its id once; the error is the engine's.
func (l *EngineLedger) Key(ctx context.Context) (string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.key == "" {
		h, err := l.engine.Host(ctx)
		if err != nil {
			return "", err
		}
		l.key = LedgerKey(h.ID)
	}
	return l.key, nil
}

// Update applies change to the ledger with compare-and-set.
func (l *EngineLedger) Update(ctx context.Context, change func(*resources.Ledger) error) error {
	key, err := l.Key(ctx)
	if err != nil {
		return err
	}
	return l.store.UpdateLedger(ctx, key, change)
}

// Admit records the resources r of sandbox id, or refuses them with
// CodeResourceExhausted when they do not fit on host, overcommitted by
// overcommit, beside what the other sandboxes hold.
func (l *EngineLedger) Admit(ctx context.Context, id string, r schemas.ResolvedResources, host resources.Host, overcommit float64) error {
	return l.Update(ctx, func(led *resources.Ledger) error {
		return led.Admit(id, r, host, overcommit)
	})
}

// Release forgets the resources of sandbox id; an id the ledger does not
// hold is no change.
func (l *EngineLedger) Release(ctx context.Context, id string) error {
	key, err := l.Key(ctx)
	if err != nil {
		return err
	}
	return l.store.ReleaseLedger(ctx, key, id)
}

// Read reads the ledger; an absent one is empty.
func (l *EngineLedger) Read(ctx context.Context) (resources.Ledger, error) {
	key, err := l.Key(ctx)
	if err != nil {
		return resources.Ledger{}, err
	}
	return l.store.ReadLedger(ctx, key)
}

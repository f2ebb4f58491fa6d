package state

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/schemas/resources"
)

// LedgerKey is the key of an engine's ledger in schemas.LedgerBucket: every
// worker that drives the same engine shares one ledger.
func LedgerKey(engineID string) string {
	if engineID == "" {
		return schemas.LedgerKey
	}
	return schemas.LedgerKey + "." + SubjectToken(engineID)
}

// UpdateLedger applies change to the ledger under key with compare-and-set.
func (s *Store) UpdateLedger(ctx context.Context, key string, change func(*resources.Ledger) error) error {
	_, err := update(ctx, s.ledger, key, nil, change)
	return err
}

// ReadLedger reads the ledger under key; an absent ledger is empty.
func (s *Store) ReadLedger(ctx context.Context, key string) (resources.Ledger, error) {
	var l resources.Ledger
	if _, err := get(ctx, s.ledger, key, &l); err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
		return l, fmt.Errorf("read ledger: %w", err)
	}
	return l, nil
}

// ReleaseLedger forgets the allocation of sandbox id in the ledger under
// key; an id it does not hold is no change.
func (s *Store) ReleaseLedger(ctx context.Context, key, id string) error {
	return s.UpdateLedger(ctx, key, func(l *resources.Ledger) error {
		if _, ok := l.Allocations[id]; !ok {
			return ErrUnchanged
		}
		l.Release(id)
		return nil
	})
}

package state

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/schemas/resources"
	"github.com/sandox/sandox/services/orchestrator/runtime"
)

// countingEngine names engine id and counts how often it is asked; err,
// when set, is its answer.
type countingEngine struct {
	id    string
	err   error
	asked atomic.Int32
}

func (e *countingEngine) Host(context.Context) (runtime.Host, error) {
	e.asked.Add(1)
	return runtime.Host{ID: e.id}, e.err
}

func TestEngineLedger(t *testing.T) {
	st := testStore(t)
	ctx := t.Context()
	e := &countingEngine{id: "ABC:DEF"}
	l := NewEngineLedger(st, e)
	host := resources.Host{CPUs: 2, MemoryBytes: 4 << 30}

	require.NoError(t, l.Admit(ctx, "sb1", schemas.ResolvedResources{NanoCPUs: 1e9}, host, 1))
	err := l.Admit(ctx, "sb2", schemas.ResolvedResources{NanoCPUs: 2e9}, host, 1)
	assert.ErrorIs(t, err, schemas.CodeResourceExhausted, "past the host's CPUs")
	key, err := l.Key(ctx)
	require.NoError(t, err)
	assert.Equal(t, LedgerKey("ABC:DEF"), key)
	assert.Equal(t, int32(1), e.asked.Load(), "the engine is asked once")

	shared, err := st.ReadLedger(ctx, key)
	require.NoError(t, err)
	assert.Contains(t, shared.Allocations, "sb1", "the ledger is the engine's, in the store")

	require.NoError(t, l.Release(ctx, "sb1"))
	require.NoError(t, l.Release(ctx, "sb1"), "releasing twice is no change")
	got, err := l.Read(ctx)
	require.NoError(t, err)
	assert.Empty(t, got.Allocations)

	broken := errors.New("engine down")
	down := NewEngineLedger(st, &countingEngine{err: broken})
	assert.ErrorIs(t, down.Admit(ctx, "x", schemas.ResolvedResources{}, host, 1), broken)
	assert.ErrorIs(t, down.Release(ctx, "x"), broken)
	_, err = down.Read(ctx)
	assert.ErrorIs(t, err, broken)
}

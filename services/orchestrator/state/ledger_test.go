package state

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/internal/natstest"
	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/schemas/resources"
)

// testStore starts a real embedded NATS server with the sandox buckets.
func testStore(t *testing.T) *Store {
	t.Helper()
	js := natstest.JetStream(t, natstest.Connect(t, natstest.Start(t)))
	require.NoError(t, Setup(t.Context(), js))
	st, err := OpenStore(t.Context(), js)
	require.NoError(t, err)
	return st
}

// TestLedgerAdmitsNoMoreThanFits races admissions from many goroutines, as
// workers on one engine would, and checks that compare-and-set lets exactly
// as many in as fit.
func TestLedgerAdmitsNoMoreThanFits(t *testing.T) {
	s := testStore(t)
	host := resources.Host{CPUs: 4, MemoryBytes: 8 << 30}
	key := LedgerKey("engine:ID:with:colons")
	var (
		wg               sync.WaitGroup
		mu               sync.Mutex
		admitted, denied int
	)
	for i := range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := s.UpdateLedger(t.Context(), key, func(l *resources.Ledger) error {
				return l.Admit(fmt.Sprintf("sb-%d", i), schemas.ResolvedResources{NanoCPUs: 1e9, MemoryBytes: 1 << 30}, host, 1)
			})
			mu.Lock()
			defer mu.Unlock()
			var se *schemas.Error
			switch {
			case err == nil:
				admitted++
			case errors.As(err, &se) && se.Code == schemas.CodeResourceExhausted:
				denied++
			default: // plain testing: a switch over the outcomes reads clearer than assertions
				t.Errorf("admit sb-%d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	require.Equal(t, 4, admitted, "admitted (4 cores, 1 each)")
	require.Equal(t, 8, denied, "refused (4 cores, 1 each)")
	l, err := s.ReadLedger(t.Context(), key)
	require.NoError(t, err)
	used := l.Used()
	require.Equal(t, int64(4e9), used.NanoCPUs, "ledger %+v, want the 4 admitted sandboxes holding 4 cores", l)
	require.Len(t, l.Allocations, 4, "ledger %+v, want the 4 admitted sandboxes holding 4 cores", l)

	// Releasing one makes room for one more; releasing an unknown id is
	// no change.
	var victim string
	for id := range l.Allocations {
		victim = id
		break
	}
	release := func(id string) error { return s.ReleaseLedger(t.Context(), key, id) }
	require.NoError(t, release(victim))
	require.NoError(t, release("never-admitted"))
	err = s.UpdateLedger(t.Context(), key, func(l *resources.Ledger) error {
		return l.Admit("late", schemas.ResolvedResources{NanoCPUs: 1e9}, host, 1)
	})
	require.NoError(t, err, "want the freed core granted")
}

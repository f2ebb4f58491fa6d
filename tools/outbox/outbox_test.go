package outbox

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOutboxRetriesInOrder: records that fail to publish are retried until
// stored, and none overtakes another.
func TestOutboxRetriesInOrder(t *testing.T) {
	var mu sync.Mutex
	var stored []string
	tries := map[string]int{}
	publish := func(_ context.Context, subject, msgID string, _ []byte) error {
		mu.Lock()
		defer mu.Unlock()
		tries[msgID]++
		if tries[msgID] < 3 { // the bus is away for the first two tries of each
			return errors.New("no bus")
		}
		stored = append(stored, msgID)
		return nil
	}
	o := New(t.Context(), publish, "sb/w")
	var last <-chan struct{}
	for i := range 5 {
		last = o.Send("subject", fmt.Sprint(i), nil)
	}
	select {
	case <-last:
	case <-time.After(10 * time.Second):
		t.Fatal("the last record was not stored")
	}
	o.Close()
	assert.Equal(t, []string{"sb/w/0", "sb/w/1", "sb/w/2", "sb/w/3", "sb/w/4"}, stored)
}

// TestOutboxGivesUpWhenItsContextEnds: Close returns once the context
// ended, with records not stored given up.
func TestOutboxGivesUpWhenItsContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	o := New(ctx, func(context.Context, string, string, []byte) error { return errors.New("no bus") }, "p")
	sent := o.Send("s", "k", nil)
	cancel()
	<-sent
	o.Close()
}

func TestBudget(t *testing.T) {
	assert.Nil(t, NewBudget(0), "0 is no limit")
	var none *Budget
	assert.True(t, none.Take(1<<40), "a nil budget takes anything")
	b := NewBudget(10)
	require.True(t, b.Take(6))
	require.False(t, b.Take(5), "over the budget")
	assert.False(t, b.Take(1), "once spent, always spent: output ends at one point")
	assert.True(t, b.Spent())
}

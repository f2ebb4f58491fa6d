package cleanup

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCleanupRunsOnceInReverse checks the cleanup stack: reverse order, a
// failure does not stop the rest, errors joined, run once, and run under
// a context that the caller's cancellation does not reach.
func TestCleanupRunsOnceInReverse(t *testing.T) {
	var (
		c     Stack
		order []string
		calls atomic.Int32
	)
	errVolume := errors.New("volume busy")
	step := func(name string, err error) func(context.Context) error {
		return func(ctx context.Context) error {
			calls.Add(1)
			order = append(order, name)
			assert.NoError(t, ctx.Err(), "undo %s ran under a cancelled context", name)
			return err
		}
	}
	c.Push("record", step("record", nil))
	c.Push("volume", step("volume", errVolume))
	c.Push("container", step("container", nil))

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	err := c.Run(ctx)
	require.ErrorIs(t, err, errVolume)
	assert.Contains(t, err.Error(), "remove volume")
	assert.Equal(t, []string{"container", "volume", "record"}, order)
	require.NoError(t, c.Run(ctx), "second run")
	assert.Equal(t, int32(3), calls.Load(), "each step runs once")
}

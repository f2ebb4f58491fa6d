package state

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestHostClock checks that a host's silence is counted from the first
// sight of its current revision on the judge's clock.
func TestHostClock(t *testing.T) {
	var c hostClock
	t0 := time.Now()
	assert.Zero(t, c.silence("h", 1, t0), "first sight")
	assert.Equal(t, 10*time.Second, c.silence("h", 1, t0.Add(10*time.Second)), "the same record 10 s later")
	assert.Zero(t, c.silence("h", 2, t0.Add(11*time.Second)), "a new heartbeat")
	assert.Equal(t, 4*time.Second, c.silence("h", 2, t0.Add(15*time.Second)))
	assert.Zero(t, c.silence("other", 7, t0.Add(15*time.Second)), "each host on its own")
}

package groupdb

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestDatabaseRestartLimit checks that a database container is started
// again at most dbRestartLimit times within dbRestartWindow, and again
// once the window has passed.
func TestDatabaseRestartLimit(t *testing.T) {
	var r restarts
	now := time.Date(2026, 11, 29, 4, 0, 0, 0, time.UTC)
	for i := range dbRestartLimit {
		assert.True(t, r.allow("db", now.Add(time.Duration(i)*time.Second)), "start %d", i+1)
	}
	assert.False(t, r.allow("db", now.Add(time.Minute)), "one start too many within the window")
	assert.True(t, r.allow("other", now.Add(time.Minute)), "each container counts its own")
	assert.True(t, r.allow("db", now.Add(dbRestartWindow+5*time.Second)), "the window has passed")
}

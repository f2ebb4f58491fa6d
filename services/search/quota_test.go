package search

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// clock is a settable time for the limiters.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func TestQuotaPerSandbox(t *testing.T) {
	c := &clock{t: time.Unix(1_700_000_000, 0)}
	l := newLimiters(Quota{PerMinute: 60, Burst: 3}, c.now)

	for i := range 3 {
		ok, _ := l.take("sb-a")
		require.True(t, ok, "request %d of the burst", i+1)
	}
	ok, wait := l.take("sb-a")
	assert.False(t, ok, "the fourth at once")
	assert.Equal(t, time.Second, wait, "one a second refills")

	ok, _ = l.take("sb-b")
	assert.True(t, ok, "another sandbox has its own bucket")

	c.t = c.t.Add(time.Second)
	ok, _ = l.take("sb-a")
	assert.True(t, ok, "one more a second later")
	ok, _ = l.take("sb-a")
	assert.False(t, ok, "and only one")
}

func TestQuotaOff(t *testing.T) {
	l := newLimiters(Quota{}, time.Now)
	for range 1000 {
		ok, _ := l.take("sb-a")
		require.True(t, ok)
	}
	assert.Zero(t, l.size(), "no buckets kept when there is no quota")
}

func TestQuotaForgetsRefilledBuckets(t *testing.T) {
	c := &clock{t: time.Unix(1_700_000_000, 0)}
	l := newLimiters(Quota{PerMinute: 60, Burst: 2}, c.now)
	l.take("sb-a")
	l.take("sb-b")
	l.take("sb-b")
	require.Equal(t, 2, l.size())

	c.t = c.t.Add(61 * time.Second)
	ok, _ := l.take("sb-c")
	require.True(t, ok)
	assert.Equal(t, 1, l.size(), "the refilled buckets of sb-a and sb-b are gone, sb-c's is new")

	// A forgotten bucket is a full one: sb-b may send its burst again.
	for range 2 {
		ok, _ := l.take("sb-b")
		assert.True(t, ok)
	}
}

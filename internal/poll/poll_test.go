package poll

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestUntilReturnsOnceTheConditionHolds(t *testing.T) {
	var calls atomic.Int32
	start := time.Now()
	Until(t, 10*time.Second, "the third call", func() bool { return calls.Add(1) == 3 })
	assert.Equal(t, int32(3), calls.Load())
	assert.Less(t, time.Since(start), 5*time.Second, "want no wait past the condition")
}

// fakeTB records a failure instead of stopping a test: it is the test's
// view of the *testing.T that Until would fail.
type fakeTB struct {
	testing.TB
	failed string
}

func (f *fakeTB) Helper() {}

func (f *fakeTB) Fatalf(format string, args ...any) {
	f.failed = format
	panic(f) // stop Until as t.FailNow would
}

func TestUntilFailsAfterTheDeadline(t *testing.T) {
	f := &fakeTB{TB: t}
	start := time.Now()
	func() {
		defer func() { require.Equal(t, f, recover()) }()
		Until(f, 50*time.Millisecond, "never", func() bool { return false })
	}()
	assert.Equal(t, "gave up after %s waiting for %s", f.failed)
	assert.GreaterOrEqual(t, time.Since(start), 50*time.Millisecond)
}

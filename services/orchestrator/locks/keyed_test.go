package locks

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestKeyedSerializesOneKey checks that holders of one key run one at a
// time, that other keys do not wait for them, and that no entry is left
// once every holder has released its key.
func TestKeyedSerializesOneKey(t *testing.T) {
	var k Keyed
	var inside, most atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			unlock := k.Lock(Sandbox("a"))
			defer unlock()
			n := inside.Add(1)
			for {
				m := most.Load()
				if n <= m || most.CompareAndSwap(m, n) {
					break
				}
			}
			time.Sleep(time.Millisecond) // hold the key while the others wait
			inside.Add(-1)
		})
	}
	unlockOther := k.Lock(Group("a")) // another key: taken at once
	assert.NotEqual(t, Group("a"), Sandbox("a"))
	unlockOther()
	wg.Wait()
	assert.Equal(t, int32(1), most.Load(), "holders of one key at once")
	require.Zero(t, k.Size(), "entries left")
}

// TestKeyedSize checks that Size counts held keys.
func TestKeyedSize(t *testing.T) {
	var k Keyed
	u1, u2 := k.Lock("x"), k.Lock("y")
	assert.Equal(t, 2, k.Size())
	u1()
	assert.Equal(t, 1, k.Size())
	u2()
	assert.Zero(t, k.Size())
}

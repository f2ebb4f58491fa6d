package outbox

import "sync"

// Budget is how many bytes of records one sandbox may still put into the
// streams (job output, watch events). Records that say how work started
// or ended are not counted: only the ones a sandbox can write without end.
// A nil *Budget is unlimited. It is safe for concurrent use.
type Budget struct {
	mu   sync.Mutex
	left int64
}

// NewBudget returns a budget of bytes; zero or less is nil, no limit.
func NewBudget(bytes int64) *Budget {
	if bytes <= 0 {
		return nil
	}
	return &Budget{left: bytes}
}

// Take spends n bytes and reports whether the budget had them. Once a Take
// fails every later one fails too, however small: what a sandbox records
// ends at one point, not with holes.
func (b *Budget) Take(n int) bool {
	if b == nil {
		return true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.left < int64(n) {
		b.left = -1
		return false
	}
	b.left -= int64(n)
	return true
}

// Spent reports whether a Take failed.
func (b *Budget) Spent() bool {
	if b == nil {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.left < 0
}

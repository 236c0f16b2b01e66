package verify

import "sync"

// MemoryBudget bounds the bytes of receipts held in memory at once across
// workers: a worker takes a receipt's size from it before reading and
// gives it back after. A receipt over the budget waits until it is alone.
const MemoryBudget = 256 << 20

// budget is a weighted semaphore.
type budget struct {
	mu   sync.Mutex
	cond *sync.Cond
	free int64
	cap  int64
}

func newBudget(n int64) *budget {
	b := &budget{free: n, cap: n}
	b.cond = sync.NewCond(&b.mu)
	return b
}

// acquire takes n (clamped to the whole budget) and returns what it took.
func (b *budget) acquire(n int64) int64 {
	n = min(max(n, 1), b.cap)
	b.mu.Lock()
	for b.free < n {
		b.cond.Wait()
	}
	b.free -= n
	b.mu.Unlock()
	return n
}

func (b *budget) release(n int64) {
	b.mu.Lock()
	b.free += n
	b.mu.Unlock()
	b.cond.Broadcast()
}

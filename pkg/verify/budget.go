package verify

import "sync"

// MemoryBudget bounds what receipts being verified hold in memory at once
// across workers: a worker takes a receipt's size (twice the cap when the
// size is unknown and the read doubles its buffer) plus receiptOverhead
// from it before reading and gives it back after. Verifying a receipt in
// place (evidence.CheckReceipt) holds its bytes and little more, so the
// budget bounds the memory of the whole run. It is under twice the
// receipt cap: two receipts near the cap are verified one after the
// other, while thousands of small ones run on every worker.
const MemoryBudget = 96 << 20

// receiptOverhead is what verifying a receipt holds beside its bytes: one
// entry as a tree and as canonical text, the provenance and governance
// objects, the open objects' members (see evidence.CheckReceipt).
const receiptOverhead = 1 << 20

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

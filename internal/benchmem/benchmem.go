// Package benchmem measures how much memory the Go runtime holds while a
// benchmark's code runs. It is for benchmarks: only _test.go files import
// it.
package benchmem

import (
	"runtime/metrics"
	"sync"
	"time"
)

// Peak runs f and returns the most memory the Go runtime held meanwhile, in
// MB (2^20 bytes), sampled every 2 ms and once more after f returns:
//
//   - mapped: everything the runtime has mapped from the OS
//     (/memory/classes/total:bytes), memory it has since returned included;
//   - resident: mapped minus what it has returned to the OS
//     (/memory/classes/heap/released:bytes), close to the process's
//     resident size.
//
// Each is the peak of its own series: the two may come from different
// samples. Peak does not collect garbage first (that would change what f's
// run costs and what mapped reaches): to keep the set-up's garbage out of
// resident, call debug.FreeOSMemory just before.
func Peak(f func()) (mapped, resident float64) {
	sample := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	var peakMapped, peakResident uint64
	read := func() {
		metrics.Read(sample)
		total, released := sample[0].Value.Uint64(), sample[1].Value.Uint64()
		peakMapped = max(peakMapped, total)
		peakResident = max(peakResident, total-released)
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				read()
			}
		}
	})
	f()
	close(done)
	wg.Wait()
	read()
	return float64(peakMapped) / (1 << 20), float64(peakResident) / (1 << 20)
}

// CPU runs f and returns the CPU time (user and system, all threads) the
// process used meanwhile, in seconds; ok=false where the platform does not
// say. On a machine shared with other work, CPU time per item is steadier
// than wall time per item: it counts what the code costs, not how long it
// waited for a core.
func CPU(f func()) (seconds float64, ok bool) {
	before, ok := cpuTime()
	f()
	after, ok2 := cpuTime()
	return after - before, ok && ok2
}

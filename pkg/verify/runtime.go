package verify

import "runtime/debug"

// The Go runtime settings deponent-verify runs under (TuneRuntime).
//
// What a run keeps is bounded (MemoryBudget, the walk's and the zip's
// caps); almost everything it allocates is garbage by the end of the
// receipt that allocated it. The collector therefore runs less often than
// Go's default (GCPercent), and the memory limit keeps the process under
// MemoryLimit however big the receipts: near the limit the collector runs
// as often as it must.
const (
	GCPercent   = 400
	MemoryLimit = 176 << 20
)

// TuneRuntime applies GCPercent and MemoryLimit to the process and returns
// a function that restores the settings it found. The command calls it
// once; the benchmarks call it so that they measure what the command does.
// A library caller need not: Run is correct under any setting.
func TuneRuntime() (restore func()) {
	gc := debug.SetGCPercent(GCPercent)
	limit := debug.SetMemoryLimit(MemoryLimit)
	return func() {
		debug.SetGCPercent(gc)
		debug.SetMemoryLimit(limit)
	}
}

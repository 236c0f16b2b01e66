package verify

// Benchmarks, not timed tests. Run with
//
//	go test -run '^$' -bench . -benchtime 3x ./pkg/verify/
//
// They report throughput (entries/s, receipts/s, MB/s) and the peak memory
// of the process while verifying (peak-MB: memory the Go runtime holds,
// less what it has returned to the OS, sampled every 2 ms after the
// set-up's garbage is returned; see benchmem.Peak's resident).

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/deponent-dev/deponent-action/internal/benchmem"
	"github.com/deponent-dev/deponent-action/pkg/canon"
	"github.com/deponent-dev/deponent-action/pkg/evidence"
	"github.com/deponent-dev/deponent-action/pkg/verify/verifytest"
)

// BenchmarkLedger1M verifies a 1,000,000-entry ledger file through
// deponent-verify's code path (Run: classification, package evidence's streaming
// verifier, the anchors, the report): entries of package evidence benchmarks'
// typical size (about 450 bytes), entries as the action writes them (with
// exit code and jail, about 520 bytes), and those again with the
// blocked-entry count (--max-blocked 0).
func BenchmarkLedger1M(b *testing.B) {
	defer TuneRuntime()() // as the command runs
	const n = 1_000_000
	dir := b.TempDir()
	type ledger struct {
		path, head string
		size       int64
	}
	ledgers := map[string]ledger{}
	build := func(name string, entry func(int) evidence.Record) ledger {
		if l, ok := ledgers[name]; ok {
			return l
		}
		l := ledger{path: filepath.Join(dir, name+".jsonl")}
		l.head = verifytest.Ledger(b, l.path, n, entry)
		st, err := os.Stat(l.path)
		if err != nil {
			b.Fatal(err)
		}
		l.size = st.Size()
		ledgers[name] = l
		return l
	}
	for _, c := range []struct {
		name, ledger string
		entry        func(int) evidence.Record
		scan         bool
	}{
		{"plain-450B", "plain", verifytest.Plain, false},
		{"action-520B", "action", verifytest.Typical, false},
		{"action-520B+max-blocked", "action", verifytest.Typical, true},
	} {
		l := build(c.ledger, c.entry)
		b.Run(c.name, func(b *testing.B) {
			o := Options{ChainOnly: true} // a bare ledger records no outcome
			want := int64(n)
			o.Len, o.Head = &want, l.head
			if c.scan {
				zero := int64(0)
				o.MaxBlocked = &zero
			}
			runtime.GC()
			var peak float64
			b.SetBytes(l.size)
			b.ResetTimer()
			for b.Loop() {
				debug.FreeOSMemory() // the set-up's garbage does not count
				_, resident := benchmem.Peak(func() {
					rep, err := Run([]string{l.path}, o)
					if err != nil || !rep.OK || rep.Items[0].Entries != n {
						b.Fatalf("verify: %v %+v", err, rep.Items)
					}
				})
				peak = max(peak, resident)
			}
			b.ReportMetric(float64(b.N)*n/b.Elapsed().Seconds(), "entries/s")
			b.ReportMetric(float64(l.size)/n, "bytes/entry")
			b.ReportMetric(peak, "peak-MB")
		})
	}
}

// benchStore writes a store of count receipts of 50 entries each, as
// Persist lays it out (receipts, index.jsonl, LATEST), without Persist's
// per-receipt fsyncs, which would only slow the set-up. It returns the
// receipts' bytes.
func benchStore(b *testing.B, root string, count int) (size int64) {
	dir := filepath.Join(root, "deponent")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	rs := verifytest.Canaries(verifytest.Jail)
	for i := 0; len(rs) < 49; i++ {
		rs = append(rs, verifytest.Typical(i))
	}
	rs = append(rs, verifytest.Ran(evidence.AgentHarness, verifytest.Jail, 0))
	var index []byte
	var last string
	for i := range count {
		// A day apart: each run's chain is its own (a session's clock offset
		// is under a day), as the verifier requires of distinct receipts.
		r := verifytest.Build(b, verifytest.Spec{SessionID: fmt.Sprintf("s%05d", i), Records: rs,
			Now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).Add(time.Duration(i) * 24 * time.Hour)})
		data := verifytest.Bytes(r)
		size += int64(len(data))
		if err := os.WriteFile(filepath.Join(dir, r.ID+".json"), data, 0o644); err != nil {
			b.Fatal(err)
		}
		line := canon.Obj(canon.M("receipt_id", canon.Str(r.ID)), canon.M("ts", canon.Str(r.TS)),
			canon.M("model", canon.Str(r.Model)), canon.M("task", canon.Str(r.Task)), canon.M("outcome", canon.Str(string(r.Outcome))),
			canon.M("file", canon.Str(r.ID+".json")), canon.M("signature", canon.Str(r.Signature)))
		index = append(canon.AppendOrdered(index, line), '\n')
		last = r.ID
	}
	if err := os.WriteFile(filepath.Join(dir, evidence.IndexFile), index, 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, evidence.LatestFile), []byte(last+"\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	return size
}

// BenchmarkStore2000 verifies a directory of 2,000 receipts of 50 entries
// each (about 25 KB each) with every requirement on, and the same store as
// a zip artifact. Beside receipts/s (wall time) it reports cpu-us/receipt
// and receipts/cpu-s, the process's CPU time per receipt: on a machine
// shared with other work, wall time measures the queue for a core as much
// as the code. Two baselines run in the same process, on the same files:
//
//   - read+sha256: walk the directory, read every file and hash it once,
//     the floor under any verifier that reads what it verifies;
//   - ledger: the same 100,000 entries as a bare ledger's lines, through
//     the ledger verifier (receipts/s is its entries/s divided by 50).
func BenchmarkStore2000(b *testing.B) {
	defer TuneRuntime()() // as the command runs
	const count, perReceipt = 2000, 50
	root := b.TempDir()
	size := benchStore(b, root, count)
	zipPath := filepath.Join(b.TempDir(), "artifact.zip")
	if err := os.WriteFile(zipPath, verifytest.ZipDir(b, root), 0o644); err != nil {
		b.Fatal(err)
	}
	// As many entries of the same shape, as one bare ledger.
	ledgerPath := filepath.Join(b.TempDir(), "same-entries.jsonl")
	verifytest.Ledger(b, ledgerPath, count*perReceipt, verifytest.Typical)
	o := DefaultOptions() // every requirement
	zero, n := int64(0), count
	o.MaxBlocked, o.MinReceipts = &zero, &n
	o.ExpectCommit, o.ExpectRepo, o.ExpectPolicySHA256 = verifytest.Commit, verifytest.Repo, verifytest.PolicySH
	verifyAll := func(b *testing.B, path string) func() {
		return func() {
			rep, err := Run([]string{path}, o)
			if err != nil || !rep.OK || rep.Receipts != count {
				why := ""
				for _, it := range rep.Items {
					if !it.OK {
						why = it.Path + ": " + it.Reason()
						break
					}
				}
				b.Fatalf("verify: %v ok=%v receipts=%d; first failure: %s", err, rep.OK, rep.Receipts, why)
			}
		}
	}
	readAll := func() {
		files, _ := filepath.Glob(filepath.Join(root, "deponent", "*.json"))
		if len(files) != count {
			b.Fatalf("%d files", len(files))
		}
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				b.Fatal(err)
			}
			sha256.Sum256(data)
		}
	}
	want := int64(count * perReceipt)
	ledgerAll := func() {
		rep, err := Run([]string{ledgerPath}, Options{ChainOnly: true, Anchors: evidence.Anchors{Len: &want}})
		if err != nil || !rep.OK {
			b.Fatalf("ledger: %v %+v", err, rep.Items)
		}
	}
	for _, c := range []struct {
		name string
		run  func() // verifies the equivalent of count receipts
	}{
		{"directory", verifyAll(b, root)},
		{"zip", verifyAll(b, zipPath)},
		{"baseline-read+sha256", readAll},
		{"baseline-ledger", ledgerAll},
	} {
		b.Run(c.name, func(b *testing.B) {
			runtime.GC()
			var peak, cpu float64
			b.SetBytes(size)
			b.ResetTimer()
			for b.Loop() {
				debug.FreeOSMemory() // the set-up's garbage does not count
				_, resident := benchmem.Peak(func() {
					sec, _ := benchmem.CPU(c.run)
					cpu += sec
				})
				peak = max(peak, resident)
			}
			receipts := float64(b.N) * count
			b.ReportMetric(receipts/b.Elapsed().Seconds(), "receipts/s")
			if cpu > 0 {
				b.ReportMetric(cpu/receipts*1e6, "cpu-us/receipt")
				b.ReportMetric(receipts/cpu, "receipts/cpu-s")
			}
			b.ReportMetric(peak, "peak-MB")
		})
	}
}

// BenchmarkHostileReceipt: a receipt at the 64 MiB cap whose extra field
// is [0,0,0,…] (32 million values, validly signed: a receipt anyone can
// write), verified alone and as two such files in one directory, with
// every requirement on: it verifies, and the process's peak memory
// (resident, see benchmem.Peak) stays under 200 MB. A tree of it would
// take gigabytes.
func BenchmarkHostileReceipt(b *testing.B) {
	defer TuneRuntime()() // as the command runs
	dir := b.TempDir()
	data := verifytest.Padded(b, verifytest.Spec{}, evidence.MaxReceiptBytes)
	one := filepath.Join(dir, "one", "r.json")
	two := filepath.Join(dir, "two")
	for _, p := range []string{one, filepath.Join(two, "a.json"), filepath.Join(two, "b.json")} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	size := len(data)
	data = nil // the benchmark's copy is not the verifier's memory
	const limitMB = 200
	for _, c := range []struct{ name, path string }{{"one-file", one}, {"two-in-a-directory", two}} {
		b.Run(c.name, func(b *testing.B) {
			runtime.GC()
			var peak float64
			b.SetBytes(int64(size))
			for b.Loop() {
				debug.FreeOSMemory()
				_, resident := benchmem.Peak(func() {
					rep, err := Run([]string{c.path}, Options{})
					if err != nil || !rep.OK {
						b.Fatalf("verify: %v %+v", err, rep.Items)
					}
				})
				peak = max(peak, resident)
			}
			b.ReportMetric(peak, "peak-MB")
			b.ReportMetric(float64(size)/(1<<20), "receipt-MiB")
			if peak >= limitMB {
				b.Errorf("peak %.0f MB: over the %d MB bound", peak, limitMB)
			}
		})
	}
}

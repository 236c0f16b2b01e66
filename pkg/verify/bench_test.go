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
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"testing"

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
// per-receipt fsyncs, which would only slow the set-up.
func benchStore(b *testing.B, root string, count int) int64 {
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
	var size int64
	var last string
	for i := range count {
		r := verifytest.Build(b, verifytest.Spec{SessionID: fmt.Sprintf("s%05d", i), Records: rs})
		data := verifytest.Bytes(r)
		size += int64(len(data))
		if err := os.WriteFile(filepath.Join(dir, r.ID+".json"), data, 0o644); err != nil {
			b.Fatal(err)
		}
		line := canon.Obj(canon.M("receipt_id", canon.Str(r.ID)), canon.M("file", canon.Str(r.ID+".json")),
			canon.M("ts", canon.Str(r.TS)), canon.M("outcome", canon.Str(string(r.Outcome))), canon.M("signature", canon.Str(r.Signature)))
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
// each with every receipt policy on, and the same store as a zip artifact.
func BenchmarkStore2000(b *testing.B) {
	const count = 2000
	root := b.TempDir()
	size := benchStore(b, root, count)
	zipPath := filepath.Join(b.TempDir(), "artifact.zip")
	if err := os.WriteFile(zipPath, verifytest.ZipDir(b, root), 0o644); err != nil {
		b.Fatal(err)
	}
	o := DefaultOptions() // every requirement
	zero, n := int64(0), count
	o.MaxBlocked, o.MinReceipts = &zero, &n
	o.ExpectCommit, o.ExpectRepo, o.ExpectPolicySHA256 = verifytest.Commit, verifytest.Repo, verifytest.PolicySH
	for _, c := range []struct{ name, path string }{{"directory", root}, {"zip", zipPath}} {
		b.Run(c.name, func(b *testing.B) {
			runtime.GC()
			var peak float64
			b.SetBytes(size)
			b.ResetTimer()
			for b.Loop() {
				debug.FreeOSMemory() // the set-up's garbage does not count
				_, resident := benchmem.Peak(func() {
					rep, err := Run([]string{c.path}, o)
					if err != nil || !rep.OK || rep.Receipts != count {
						b.Fatalf("verify: %v ok=%v receipts=%d", err, rep.OK, rep.Receipts)
					}
				})
				peak = max(peak, resident)
			}
			b.ReportMetric(float64(b.N)*count/b.Elapsed().Seconds(), "receipts/s")
			b.ReportMetric(float64(b.N)*count*50/b.Elapsed().Seconds(), "entries/s")
			b.ReportMetric(peak, "peak-MB")
		})
	}
}

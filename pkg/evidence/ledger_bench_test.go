package evidence

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/deponent-dev/deponent-action/internal/benchmem"
	"github.com/deponent-dev/deponent-action/pkg/canon"
)

// typicalRecord is an entry of the size the issue calls typical (about 450
// bytes on disk): the reference's fields for a command, its verdict and
// reason, and the outcome hash.
func typicalRecord(i int) Record {
	return Record{
		Agent: "builder", Tool: "run_cmd",
		Params:  map[string]any{"cmd": fmt.Sprintf("pytest -q tests/t%04d.py", i%10000)},
		Verdict: VerdictAllow, BlastClass: ClassLocalExec, Reason: "allowlisted, in-sandbox, non-chained-to-deny",
		OutcomeSHA256: HashOutcome([]byte(fmt.Sprint(i))),
	}
}

var (
	benchLedgerOnce sync.Once
	benchLedgerPath string
	benchLedgerErr  error
	benchLedgerDir  string
)

// benchLedger writes (once per process) a 1,000,000-entry ledger of typical
// entries and returns its path.
func benchLedger(b *testing.B) string {
	benchLedgerOnce.Do(func() {
		dir, err := os.MkdirTemp("", "deponent-bench-")
		if err != nil {
			benchLedgerErr = err
			return
		}
		path := filepath.Join(dir, "ledger-1m.jsonl")
		l, err := OpenLedger(LedgerOptions{Path: path, NoSync: true, Discard: true})
		if err != nil {
			benchLedgerErr = err
			return
		}
		for i := range 1_000_000 {
			if _, err := l.Append(typicalRecord(i)); err != nil {
				benchLedgerErr = err
				return
			}
		}
		benchLedgerErr = l.Close()
		benchLedgerPath = path
		benchLedgerDir = dir
	})
	if benchLedgerErr != nil {
		b.Fatal(benchLedgerErr)
	}
	return benchLedgerPath
}

// BenchmarkVerifyLedgerFile1M verifies a 1,000,000-entry ledger file end to
// end (read, parse, canonicalise, hash, link) and reports entries/s, MB/s
// and the peak memory of the process (peak-MB: everything the Go runtime
// has mapped, sampled every 2 ms; see benchmem.Peak's mapped). The issue's
// bar: at least 1,000,000 entries/s on 2 cores (15x the Python reference's
// 66,000) under 100 MB.
// BenchmarkSHA256SameBytes beside it is the physical limit for the hashing
// part of the work on the same bytes.
func BenchmarkVerifyLedgerFile1M(b *testing.B) {
	path := benchLedger(b)
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	runtime.GC()
	var peak float64
	b.SetBytes(st.Size())
	b.ResetTimer()
	for b.Loop() {
		mapped, _ := benchmem.Peak(func() {
			rep, err := VerifyLedgerFile(path, VerifyOptions{})
			if err != nil || rep.Break != nil || rep.Entries != 1_000_000 {
				b.Fatalf("verify: %v %v %d", err, rep.Break, rep.Entries)
			}
		})
		peak = max(peak, mapped)
	}
	b.ReportMetric(float64(b.N)*1_000_000/b.Elapsed().Seconds(), "entries/s")
	b.ReportMetric(float64(st.Size())/1_000_000, "bytes/entry")
	b.ReportMetric(peak, "peak-MB")
}

// BenchmarkSHA256SameBytes hashes the same file's bytes in 450-byte pieces
// on all cores: the ceiling for a verifier that must hash every entry.
func BenchmarkSHA256SameBytes(b *testing.B) {
	data, err := os.ReadFile(benchLedger(b))
	if err != nil {
		b.Fatal(err)
	}
	lines := bytes.SplitAfter(data, []byte{'\n'})
	workers := runtime.GOMAXPROCS(0)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for b.Loop() {
		var wg sync.WaitGroup
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				h := sha256.New()
				var sum [32]byte
				for i := w; i < len(lines); i += workers {
					h.Reset()
					h.Write(lines[i])
					h.Sum(sum[:0])
				}
			}()
		}
		wg.Wait()
	}
	b.ReportMetric(float64(b.N)*float64(len(lines))/b.Elapsed().Seconds(), "entries/s")
}

// BenchmarkLedgerAppend reports appends per second, durable (fsync on every
// append) and not.
func BenchmarkLedgerAppend(b *testing.B) {
	for _, mode := range []struct {
		name   string
		noSync bool
	}{{"fsync", false}, {"nosync", true}} {
		b.Run(mode.name, func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "l.jsonl")
			l, err := OpenLedger(LedgerOptions{Path: path, NoSync: mode.noSync, Discard: true})
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			i := 0
			for b.Loop() {
				if _, err := l.Append(typicalRecord(i)); err != nil {
					b.Fatal(err)
				}
				i++
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "entries/s")
		})
	}
}

// benchReceipt is a receipt of a clean governed run of 50 entries (the six
// canaries, 43 typical jailed commands, the verify command) as Persist
// writes it.
func benchReceipt(b *testing.B) []byte {
	l, _ := OpenLedger(LedgerOptions{})
	ran := func(r Record) Record {
		r.Extra = append(r.Extra, canon.M(FieldExitCode, canon.Int(0)), canon.M(FieldJail, canon.Str("bwrap")))
		return r
	}
	var rs []Record
	// Each canary records the action it attempts.
	canaryTool := map[string]string{CanaryWriteOutside: ToolWriteFile, CanaryUnknownTool: "delete_database"}
	for _, name := range GateCanaries {
		tool := canaryTool[name]
		if tool == "" {
			tool = ToolRunCmd
		}
		rs = append(rs, Record{Agent: AgentCanary, Tool: tool, Params: map[string]any{}, Verdict: VerdictBlock,
			BlastClass: ClassDestructive, Reason: "r", Extra: []canon.Member{canon.M(FieldCanary, canon.Str(name))}})
	}
	for _, name := range JailCanaries {
		rs = append(rs, ran(Record{Agent: AgentCanary, Tool: ToolRunCmd, Params: map[string]any{}, Verdict: VerdictAllow,
			BlastClass: ClassLocalExec, Reason: "r", Extra: []canon.Member{canon.M(FieldCanary, canon.Str(name))}}))
	}
	for i := 0; len(rs) < 49; i++ {
		rs = append(rs, ran(typicalRecord(i)))
	}
	h := typicalRecord(0)
	h.Agent = AgentHarness
	rs = append(rs, ran(h))
	for _, r := range rs {
		if _, err := l.Append(r); err != nil {
			b.Fatal(err)
		}
	}
	// The harness's last entry ran the configured verify command.
	g := Governance{Canaries: true, JailCanaries: true, VerifyCommand: h.Params["cmd"].(string), Jail: "bwrap"}
	a := Assess(l.Entries(), g)
	if a.Outcome != OutcomePass {
		b.Fatal(a.Reasons)
	}
	r, err := BuildReceipt(ReceiptInput{Producer: "deponent", SessionID: "b", Entries: l.Entries(), Outcome: a.Outcome,
		Extra: []canon.Member{canon.M(RFieldGovernance, g.Value(a))}})
	if err != nil {
		b.Fatal(err)
	}
	return canon.AppendIndent(nil, r.Body, "  ")
}

// BenchmarkVerifyReceipt: one receipt of 50 entries, read and recomputed,
// and kept whole as trees (VerifyReceipt)…
func BenchmarkVerifyReceipt(b *testing.B) {
	data := benchReceipt(b)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := VerifyReceipt(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCheckReceipt: … and recomputed in place (CheckReceipt, what the
// verifier runs), against hashing its bytes once (the floor) in the same
// run.
func BenchmarkCheckReceipt(b *testing.B) {
	data := benchReceipt(b)
	b.Run("check", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			f, err := CheckReceipt(data)
			if err != nil || !f.Governed || f.Assessment.Outcome != OutcomePass {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "receipts/s")
	})
	b.Run("sha256-floor", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			sha256.Sum256(data)
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "receipts/s")
	})
}

// BenchmarkEntryCheck: one typical entry through the verifier's per-line
// work (transcode, schema check, hash), on one core.
func BenchmarkEntryCheck(b *testing.B) {
	l, _ := OpenLedger(LedgerOptions{})
	e, err := l.Append(typicalRecord(7))
	if err != nil {
		b.Fatal(err)
	}
	line := canon.AppendCanonical(nil, e) // as the ledger writes it
	w := newWorker(false)
	b.SetBytes(int64(len(line) + 1))
	for b.Loop() {
		if _, msg := w.check(line); msg != "" {
			b.Fatal(msg)
		}
	}
}

// BenchmarkEntrySHA256: the hashing alone of one typical entry line, the
// floor under BenchmarkEntryCheck.
func BenchmarkEntrySHA256(b *testing.B) {
	l, _ := OpenLedger(LedgerOptions{})
	e, err := l.Append(typicalRecord(7))
	if err != nil {
		b.Fatal(err)
	}
	line := canon.AppendCanonical(nil, e)
	b.SetBytes(int64(len(line) + 1))
	for b.Loop() {
		sha256.Sum256(line)
	}
}

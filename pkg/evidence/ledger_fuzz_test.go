package evidence

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/deponent-dev/deponent-action/pkg/canon"
)

// addInteropSeeds seeds a fuzzer with the reference's vectors of one kind.
func addInteropSeeds(f *testing.F, dir string) {
	names, _ := filepath.Glob(filepath.Join(interopDir, dir, "*"))
	for _, n := range names {
		if data, err := os.ReadFile(n); err == nil && len(data) < 64<<10 {
			f.Add(data)
		}
	}
}

// FuzzVerifyReceipt: any bytes give a receipt or a *ReceiptError, never a
// panic; an accepted receipt re-serialised in any layout verifies again, and
// any change to one of its signed bytes does not.
func FuzzVerifyReceipt(f *testing.F) {
	addInteropSeeds(f, "receipts")
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := VerifyReceipt(data)
		if err != nil {
			if _, ok := err.(*ReceiptError); !ok {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		if _, err := VerifyReceipt(canon.AppendOrdered(nil, r.Body)); err != nil {
			t.Fatalf("re-serialised receipt does not verify: %v", err)
		}
		changed := r.Body.With(RFieldTask, canon.Str(r.Task+"x"))
		if _, err := VerifyReceipt(canon.AppendOrdered(nil, changed)); err == nil {
			t.Fatal("a changed task still verifies")
		}
	})
}

// FuzzVerifyLedger: any bytes give a report, never a panic; a report
// without a break names as many entries as there are lines, and a break is
// never past the input.
func FuzzVerifyLedger(f *testing.F) {
	addInteropSeeds(f, "ledgers")
	f.Add([]byte(""))
	f.Add([]byte("\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rep, err := VerifyLedger(bytes.NewReader(data), VerifyOptions{Workers: 2})
		if err != nil {
			t.Fatalf("reading from memory failed: %v", err)
		}
		lines := int64(bytes.Count(data, []byte{'\n'}))
		if rep.Break == nil {
			if rep.Entries != lines || (len(data) > 0 && data[len(data)-1] != '\n') {
				t.Fatalf("verified %d entries from %d lines", rep.Entries, lines)
			}
			return
		}
		if rep.Break.Line < 1 || rep.Break.Line > lines+1 || rep.Break.Index != rep.Break.Line-1 {
			t.Fatalf("break %+v outside %d lines", rep.Break, lines)
		}
		if rep.Entries != rep.Break.Index {
			t.Fatalf("%d entries verified before a break at %d", rep.Entries, rep.Break.Index)
		}
	})
}

package evidence

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
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

// treeVerify is the receipt verifier as it was before receipts were read
// in place: the whole body parsed as a tree, the chain re-linked from the
// tree, the content hash taken over the tree's canonical form. It is the
// oracle CheckReceipt is held to.
func treeVerify(data []byte) (*Receipt, error) {
	v, err := canon.Parse(data, canon.Limits{MaxBytes: MaxReceiptBytes, MaxDepth: 64, MaxMembers: ReceiptLimits.MaxMembers})
	if err != nil {
		return nil, err
	}
	if v.Kind() != canon.Object {
		return nil, errors.New("not an object")
	}
	r := &Receipt{}
	for _, k := range receiptStringFields {
		m, ok := v.Get(k)
		if _, isStr := m.AsString(); !ok || !isStr {
			return nil, fmt.Errorf("field %s", k)
		}
	}
	r.ID = EntryString(v, RFieldID)
	r.Signature = EntryString(v, RFieldSignature)
	if EntryString(v, RFieldSchema) != ReceiptSchema || r.ID == "" || !isHexHash(r.Signature) {
		return nil, errors.New("schema, id or signature")
	}
	if p, ok := v.Get(RFieldProvenance); !ok || p.Kind() != canon.Object {
		return nil, errors.New("provenance")
	}
	chain, ok := v.Get(RFieldChain)
	if !ok || chain.Kind() != canon.Object {
		return nil, errors.New("chain")
	}
	g, ok := chain.Get(RFieldGenesis)
	if s, isStr := g.AsString(); !ok || !isStr || s == "" {
		return nil, errors.New("genesis")
	}
	es, ok := chain.Get(RFieldEntries)
	if !ok || es.Kind() != canon.Array {
		return nil, errors.New("entries")
	}
	r.Chain = VerifyEntries(es.Elems(), EntryString(chain, RFieldGenesis), Anchors{})
	if r.Chain.Break != nil {
		return nil, r.Chain.Break
	}
	sum := sha256.Sum256(canon.AppendCanonicalWithout(nil, v, RFieldSignature))
	if hex.EncodeToString(sum[:]) != r.Signature {
		return nil, errors.New("signature")
	}
	return r, nil
}

// agree fails unless CheckReceipt and the tree verifier agree on data.
func agree(t *testing.T, data []byte) {
	t.Helper()
	facts, cerr := CheckReceipt(data)
	want, terr := treeVerify(data)
	if (cerr == nil) != (terr == nil) {
		t.Fatalf("CheckReceipt: %v; the tree verifier: %v", cerr, terr)
	}
	if cerr == nil && (facts.ID != want.ID || facts.Chain.Head != want.Chain.Head || facts.Chain.Entries != want.Chain.Entries) {
		t.Fatalf("CheckReceipt read %s %+v, the tree verifier %s %+v", facts.ID, facts.Chain, want.ID, want.Chain)
	}
}

var signatureMember = regexp.MustCompile(`"signature": "[0-9a-f]{64}"`)

// resign replaces the one signature member of data by the content hash of
// what data parses to; nil when it does not parse or has no such member.
func resign(data []byte) []byte {
	locs := signatureMember.FindAllIndex(data, -1)
	if len(locs) != 1 {
		return nil
	}
	v, err := canon.Parse(data, canon.DefaultLimits)
	if err != nil || v.Kind() != canon.Object {
		return nil
	}
	sum := sha256.Sum256(canon.AppendCanonicalWithout(nil, v, RFieldSignature))
	out := append([]byte(nil), data[:locs[0][0]]...)
	out = append(out, `"signature": "`+hex.EncodeToString(sum[:])+`"`...)
	return append(out, data[locs[0][1]:]...)
}

// FuzzVerifyReceipt: any bytes give a receipt or a *ReceiptError, never a
// panic; CheckReceipt, reading in place, accepts exactly what the tree
// verifier accepts, with the same chain; an accepted receipt
// re-serialised in any layout verifies again, and any change to one of
// its signed bytes does not.
func FuzzVerifyReceipt(f *testing.F) {
	addInteropSeeds(f, "receipts")
	f.Fuzz(func(t *testing.T, data []byte) {
		_, cerr := CheckReceipt(data)
		if len(data) < 30000 { // too small to reach the caps on an entry's or a part's values
			agree(t, data)
			// Most changes break the content hash, and little else is
			// reached: sign what the change left, in place, and compare
			// again (the layout, escapes and extra fields are kept).
			if resigned := resign(data); resigned != nil {
				agree(t, resigned)
			}
		}
		r, err := VerifyReceipt(data)
		if (err == nil) != (cerr == nil) {
			t.Fatalf("VerifyReceipt: %v; CheckReceipt: %v", err, cerr)
		}
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

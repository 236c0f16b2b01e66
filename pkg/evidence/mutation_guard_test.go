package evidence

// Direct tests for the comparisons a careless change would weaken without
// any other test noticing (issue 17; internal/mutate applies each such
// change and requires these tests to fail):
//
//   - every hash and the signature is compared whole, never on a prefix: a
//     stored hash that differs from the recomputed one only after its first
//     16 hex digits (what a 64-bit prefix collision would give a forger)
//     must be refused, by the in-memory verifier, the streaming verifier
//     (inside a batch and across a batch boundary) and the receipt's
//     signature check;
//   - the LAST entry's hash is checked like every other;
//   - a duplicate key is refused on the streaming verifier's fast path, in
//     params and at the top level, even when the entry_hash was computed
//     over the duplicated text.
//
// The forgeries are built with an independent hash helper (sha256 over
// prev + "\n" + the canonical payload), so a test does not lean on the code
// it checks to make its own inputs.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/deponent-dev/deponent-action/pkg/canon"
)

// entryHashOf recomputes an entry's hash over its stored prev_hash.
func entryHashOf(t *testing.T, e canon.Value) string {
	t.Helper()
	prev, ok := e.Get(FieldPrevHash)
	require.True(t, ok)
	p, _ := prev.AsString()
	h := sha256.New()
	h.Write([]byte(p + "\n"))
	h.Write(canon.AppendCanonicalWithout(nil, e, FieldPrevHash, FieldEntryHash))
	return hex.EncodeToString(h.Sum(nil))
}

func storedHash(t *testing.T, e canon.Value) string {
	t.Helper()
	v, ok := e.Get(FieldEntryHash)
	require.True(t, ok)
	s, _ := v.AsString()
	require.Len(t, s, 64)
	return s
}

// relink re-chains entries[from:] onto the entry_hash stored in
// entries[from-1] (or the genesis), recomputing each hash: what a forger
// does after changing one entry, so the only thing wrong is that entry.
func relink(t *testing.T, entries []canon.Value, from int) {
	t.Helper()
	prev := Genesis
	if from > 0 {
		prev = storedHash(t, entries[from-1])
	}
	for i := from; i < len(entries); i++ {
		e := entries[i].With(FieldPrevHash, canon.Str(prev))
		e = e.With(FieldEntryHash, canon.Str(entryHashOf(t, e)))
		entries[i] = e
		prev = storedHash(t, e)
	}
}

// tailForgeries returns h changed at one hex digit past the first 16: the
// last digit (so a compare on any prefix shorter than 64 digits accepts
// it) and the 17th (the first one a 16-digit prefix compare ignores).
func tailForgeries(h string) map[string]string {
	flip := func(pos int) string {
		b := []byte(h)
		if b[pos] == '0' {
			b[pos] = '1'
		} else {
			b[pos] = '0'
		}
		return string(b)
	}
	return map[string]string{"last digit": flip(63), "17th digit": flip(16)}
}

func ledgerBytes(entries []canon.Value, ordered bool) []byte {
	var b []byte
	for _, e := range entries {
		if ordered {
			b = canon.AppendOrdered(b, e) // the writer's member order: the transcoder's path
		} else {
			b = canon.AppendCanonical(b, e) // canonical: the fast path
		}
		b = append(b, '\n')
	}
	return b
}

// assertAllPathsBreak checks that every verifier refuses the chain with
// the given break at index idx: in memory, streamed (both line shapes,
// several worker counts), and inside a re-signed receipt.
func assertAllPathsBreak(t *testing.T, entries []canon.Value, kind BreakKind, idx int64) {
	t.Helper()
	rep := VerifyEntries(entries, Genesis, Anchors{})
	if assert.NotNil(t, rep.Break, "in memory: must not verify") {
		assert.Equal(t, kind, rep.Break.Kind, "in memory: %v", rep.Break)
		assert.Equal(t, idx, rep.Break.Index, "in memory: %v", rep.Break)
	}
	for _, ordered := range []bool{false, true} {
		for _, workers := range []int{1, 3} {
			rep, err := VerifyLedger(bytes.NewReader(ledgerBytes(entries, ordered)), VerifyOptions{Workers: workers})
			require.NoError(t, err)
			if assert.NotNil(t, rep.Break, "streamed (ordered=%v, workers=%d): must not verify", ordered, workers) {
				assert.Equal(t, kind, rep.Break.Kind, "streamed: %v", rep.Break)
				assert.Equal(t, idx, rep.Break.Index, "streamed: %v", rep.Break)
			}
		}
	}
	_, err := VerifyReceipt(resignedReceipt(t, entries))
	var re *ReceiptError
	if assert.ErrorAs(t, err, &re, "receipt: must not verify") && assert.NotNil(t, re.Break, "receipt: %v", err) {
		assert.Equal(t, kind, re.Break.Kind, "receipt: %v", err)
		assert.Equal(t, idx, re.Break.Index, "receipt: %v", err)
	}
}

// resignedReceipt is a well-formed receipt around entries whose signature
// matches its body: only the chain can make it fail.
func resignedReceipt(t *testing.T, entries []canon.Value) []byte {
	t.Helper()
	body := buildTestReceipt(t, chainOf(t, 1)).Body
	chain, _ := body.Get(RFieldChain)
	body = body.With(RFieldChain, chain.With(RFieldEntries, canon.Arr(entries...)))
	sum := sha256.Sum256(canon.AppendCanonicalWithout(nil, body, RFieldSignature))
	body = body.With(RFieldSignature, canon.Str(hex.EncodeToString(sum[:])))
	return canon.AppendIndent(nil, body, "  ")
}

// TestForgeryHelpersControl: the helpers rebuild a valid chain, and the
// untouched chain passes every path the tests below check.
func TestForgeryHelpersControl(t *testing.T) {
	es := chainOf(t, 4)
	want := make([]string, len(es))
	for i, e := range es {
		want[i] = storedHash(t, e)
		assert.Equal(t, want[i], entryHashOf(t, e), "entryHashOf agrees with the ledger")
	}
	relink(t, es, 0)
	for i, e := range es {
		assert.Equal(t, want[i], storedHash(t, e), "relink of an intact chain changes nothing")
	}
	assert.True(t, VerifyEntries(es, Genesis, Anchors{}).OK())
	for _, ordered := range []bool{false, true} {
		rep, err := VerifyLedger(bytes.NewReader(ledgerBytes(es, ordered)), VerifyOptions{Workers: 2})
		require.NoError(t, err)
		assert.True(t, rep.OK(), "%v", rep.Break)
		assert.Equal(t, int64(4), rep.Entries)
	}
	_, err := VerifyReceipt(resignedReceipt(t, es))
	require.NoError(t, err)
}

// TestEntryHashComparedWhole: an entry whose stored entry_hash differs
// from its recomputed hash only after the 16th hex digit, with the rest of
// the chain re-linked onto the forged hash, is a hash-mismatch at that
// entry — first, middle and last.
func TestEntryHashComparedWhole(t *testing.T) {
	const n = 4
	// One chain for the forgery and its use: entries carry a timestamp, so
	// two chains built a second apart hash differently.
	base := chainOf(t, n)
	for k := range n {
		for what, forged := range tailForgeries(storedHash(t, base[k])) {
			t.Run(fmt.Sprintf("entry %d %s", k, what), func(t *testing.T) {
				es := slices.Clone(base)
				require.Equal(t, storedHash(t, es[k])[:16], forged[:16], "the forgery keeps the 16-digit prefix")
				es[k] = es[k].With(FieldEntryHash, canon.Str(forged))
				relink(t, es, k+1)
				assertAllPathsBreak(t, es, BreakHash, int64(k))
			})
		}
	}
}

// TestPrevHashComparedWhole: an entry whose prev_hash differs from the
// previous entry_hash only after the 16th digit (its own hash recomputed
// over that prev_hash, the rest re-linked) is a prev-hash break there.
func TestPrevHashComparedWhole(t *testing.T) {
	const n = 4
	base := chainOf(t, n)
	for k := 1; k < n; k++ {
		for what, forged := range tailForgeries(storedHash(t, base[k-1])) {
			t.Run(fmt.Sprintf("entry %d %s", k, what), func(t *testing.T) {
				es := slices.Clone(base)
				es[k] = es[k].With(FieldPrevHash, canon.Str(forged))
				es[k] = es[k].With(FieldEntryHash, canon.Str(entryHashOf(t, es[k])))
				relink(t, es, k+1)
				assertAllPathsBreak(t, es, BreakPrevHash, int64(k))
			})
		}
	}
}

// TestLastEntryHashChecked: editing the last entry alone (content changed,
// stored hash kept) is caught — in a one-entry chain too, where the first
// entry is the last.
func TestLastEntryHashChecked(t *testing.T) {
	for _, n := range []int{1, 2, 5} {
		t.Run(fmt.Sprintf("%d entries", n), func(t *testing.T) {
			es := chainOf(t, n)
			es[n-1] = es[n-1].With(FieldReason, canon.Str("edited after the fact"))
			assertAllPathsBreak(t, es, BreakHash, int64(n-1))
			// Editing the stored hash alone is caught too.
			es = chainOf(t, n)
			es[n-1] = es[n-1].With(FieldEntryHash, canon.Str(strings.Repeat("0", 64)))
			assertAllPathsBreak(t, es, BreakHash, int64(n-1))
		})
	}
}

// TestStreamedForgeriesAcrossBatches: the same forgeries in a ledger of
// large entries that spans several of the streaming verifier's batches,
// at every index, so one falls on the first line of a batch (where the
// batch's first prev_hash is linked to the previous batch's head).
func TestStreamedForgeriesAcrossBatches(t *testing.T) {
	const n = 26
	blob := strings.Repeat("x", 100_000)
	l, err := OpenLedger(LedgerOptions{})
	require.NoError(t, err)
	for i := range n {
		r := rec(i)
		r.Extra = []canon.Member{canon.M("blob", canon.Str(blob))}
		_, err := l.Append(r)
		require.NoError(t, err)
	}
	good := l.Entries()
	// Control: read as a file or a pipe delivers it (64 KiB a read), the
	// ledger is cut into several batches, the later ones holding several
	// lines. (A bytes.Reader hands over everything in one read, and one
	// batch may then hold it all.)
	data := ledgerBytes(good, false)
	work, order := make(chan *batch, 64), make(chan *batch, 64)
	go func() {
		for range work {
		}
	}()
	readBatches(&chunkReader{data: data}, work, order, make(chan []byte, 1), nil)
	var firstLines []int64
	for b := range order {
		if b.data != nil {
			firstLines = append(firstLines, b.firstLn)
		}
	}
	close(work)
	require.GreaterOrEqual(t, len(firstLines), 2, "the ledger must span several batches")
	require.Less(t, firstLines[1], int64(n-3), "the second batch must hold several lines")
	rep, err := VerifyLedger(&chunkReader{data: data}, VerifyOptions{Workers: 2})
	require.NoError(t, err)
	require.True(t, rep.OK(), "control: %v", rep.Break)

	check := func(es []canon.Value, kind BreakKind, k int) {
		t.Helper()
		rep, err := VerifyLedger(&chunkReader{data: ledgerBytes(es, false)}, VerifyOptions{Workers: 2})
		require.NoError(t, err)
		if assert.NotNil(t, rep.Break, "%s at entry %d must not verify", kind, k) {
			assert.Equal(t, kind, rep.Break.Kind, "entry %d: %v", k, rep.Break)
			assert.Equal(t, int64(k), rep.Break.Index, "entry %d: %v", k, rep.Break)
		}
	}
	for k := 1; k < n; k++ {
		es := append([]canon.Value(nil), good...)
		es[k] = es[k].With(FieldEntryHash, canon.Str(tailForgeries(storedHash(t, es[k]))["last digit"]))
		relink(t, es, k+1)
		check(es, BreakHash, k)

		es = append([]canon.Value(nil), good...)
		es[k] = es[k].With(FieldPrevHash, canon.Str(tailForgeries(storedHash(t, es[k-1]))["last digit"]))
		es[k] = es[k].With(FieldEntryHash, canon.Str(entryHashOf(t, es[k])))
		relink(t, es, k+1)
		check(es, BreakPrevHash, k)
	}
}

// chunkReader delivers data at most 64 KiB a read, as a file or a pipe.
type chunkReader struct{ data []byte }

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), 64<<10)], c.data)
	c.data = c.data[n:]
	return n, nil
}

// TestSignatureComparedWhole: a receipt whose signature differs from the
// recomputed one only after the 16th hex digit does not verify.
func TestSignatureComparedWhole(t *testing.T) {
	r := buildTestReceipt(t, chainOf(t, 3))
	_, err := VerifyReceipt(canon.AppendIndent(nil, r.Body, "  "))
	require.NoError(t, err, "control")
	for what, forged := range tailForgeries(r.Signature) {
		body := r.Body.With(RFieldSignature, canon.Str(forged))
		_, err := VerifyReceipt(canon.AppendIndent(nil, body, "  "))
		var re *ReceiptError
		if assert.ErrorAs(t, err, &re, what) {
			assert.Equal(t, RFieldSignature, re.Where, what)
			assert.Contains(t, re.Msg, "does not match", what)
		}
		// Persist, handed a receipt whose signature is off in the tail,
		// refuses before writing anything.
		bad := *r
		bad.Signature = forged
		bad.Body = body
		_, err = Persist(t.TempDir(), &bad)
		assert.ErrorContains(t, err, "signature does not match", what)
	}
}

// fastLine builds one ledger line in the exact shape the writer emits
// (canonical, so the streaming verifier takes its fast path), with params
// written as given and an entry_hash computed over exactly that text.
func fastLine(params string, dupAgent bool) string {
	agent := `"agent": "a", `
	if dupAgent {
		agent = `"agent": "a", "agent": "a", `
	}
	head := `{` + agent + `"blast_class": "c", `
	mid := `"outcome_sha256": "", "params": ` + params + `, `
	tail := `"reason": "r", "tool": "run_cmd", "ts": "2026-01-01T00:00:00+00:00", "verdict": "ALLOW"}`
	sum := sha256.Sum256([]byte(Genesis + "\n" + head + mid + tail))
	return head + `"entry_hash": "` + hex.EncodeToString(sum[:]) + `", ` + mid + `"prev_hash": "` + Genesis + `", ` + tail + "\n"
}

// TestDuplicateKeyOnFastPath: a duplicate key is a malformed entry even in
// a line shaped for the fast path whose entry_hash matches its text.
func TestDuplicateKeyOnFastPath(t *testing.T) {
	verify := func(line string) ChainReport {
		t.Helper()
		rep, err := VerifyLedger(strings.NewReader(line), VerifyOptions{Workers: 1})
		require.NoError(t, err)
		return rep
	}
	// Control: the construction is a valid entry, hashed as the verifier
	// hashes it, and in the canonical shape the writer uses.
	ok := fastLine(`{"j": "1", "k": "2"}`, false)
	rep := verify(ok)
	require.True(t, rep.OK(), "control: %v", rep.Break)
	v, err := canon.Parse([]byte(strings.TrimSuffix(ok, "\n")), EntryLimits)
	require.NoError(t, err)
	require.Equal(t, strings.TrimSuffix(ok, "\n"), string(canon.Canonical(v)), "control: the line is canonical")

	for name, line := range map[string]string{
		"in params":    fastLine(`{"k": "1", "k": "2"}`, false),
		"same value":   fastLine(`{"k": "1", "k": "1"}`, false),
		"top level":    fastLine(`{"j": "1", "k": "2"}`, true),
		"params first": fastLine(`{"a": "1", "a": "2", "b": "3"}`, false),
	} {
		rep := verify(line)
		if assert.NotNil(t, rep.Break, "%s: must not verify", name) {
			assert.Equal(t, BreakMalformed, rep.Break.Kind, "%s: %v", name, rep.Break)
			assert.Contains(t, rep.Break.Detail, "duplicate key", name)
		}
		assert.Zero(t, rep.Entries, name)
	}
}

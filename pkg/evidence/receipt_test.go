package evidence

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/deponent-dev/deponent-action/pkg/canon"
)

func chainOf(t *testing.T, n int) []canon.Value {
	t.Helper()
	l, err := OpenLedger(LedgerOptions{})
	require.NoError(t, err)
	for i := range n {
		_, err := l.Append(rec(i))
		require.NoError(t, err)
	}
	return l.Entries()
}

func buildTestReceipt(t *testing.T, entries []canon.Value) *Receipt {
	t.Helper()
	r, err := BuildReceipt(ReceiptInput{
		Producer: "deponent", SessionID: "s1", Model: "m", Task: "t", Outcome: "GOVERNED_PASS",
		Entries:    entries,
		Provenance: canon.Obj(canon.M("commit", canon.Str("abc"))),
		Extra:      []canon.Member{canon.M("governance", canon.Obj(canon.M("jailed", canon.BoolValue(true))))},
		Now:        time.Date(2026, 11, 29, 18, 47, 20, 0, time.UTC),
	})
	require.NoError(t, err)
	return r
}

func TestPersistWritesStore(t *testing.T) {
	root := t.TempDir()
	r := buildTestReceipt(t, chainOf(t, 4))
	path, err := Persist(root, r)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(root, "deponent", "20261129T184720Z_s1.json"), path)

	got, err := VerifyReceiptFile(path)
	require.NoError(t, err)
	assert.Equal(t, r.Signature, got.Signature)
	assert.Equal(t, int64(4), got.Chain.Entries)
	assert.Equal(t, OutcomePass, got.Outcome)

	idx := string(mustRead(t, filepath.Join(root, "deponent", IndexFile)))
	assert.Equal(t, 1, strings.Count(idx, "\n"))
	assert.Contains(t, idx, `"receipt_id": "20261129T184720Z_s1"`)
	assert.Contains(t, idx, `"file": "20261129T184720Z_s1.json"`)
	// The reference's fields, for its readers.
	assert.Contains(t, idx, `"model": "m", "task": "t", "outcome": "GOVERNED_PASS"`)
	assert.Equal(t, "20261129T184720Z_s1\n", string(mustRead(t, filepath.Join(root, "deponent", LatestFile))))

	// Testimony is never overwritten.
	_, err = Persist(root, r)
	assert.ErrorContains(t, err, "refusing to overwrite")
	// No temporary files are left behind.
	names, _ := os.ReadDir(filepath.Join(root, "deponent"))
	for _, n := range names {
		assert.False(t, strings.HasPrefix(n.Name(), "."), "leftover %s", n.Name())
	}

	// A second receipt is indexed and becomes LATEST.
	r2, err := BuildReceipt(ReceiptInput{Producer: "deponent", SessionID: "s2", Entries: chainOf(t, 1), Now: time.Date(2026, 11, 29, 18, 50, 0, 0, time.UTC)})
	require.NoError(t, err)
	_, err = Persist(root, r2)
	require.NoError(t, err)
	assert.Equal(t, 2, strings.Count(string(mustRead(t, filepath.Join(root, "deponent", IndexFile))), "\n"))
	assert.Equal(t, "20261129T185000Z_s2\n", string(mustRead(t, filepath.Join(root, "deponent", LatestFile))))
}

func TestBuildAndPersistRefuseBrokenChains(t *testing.T) {
	es := chainOf(t, 3)
	es[1] = es[1].With(FieldVerdict, canon.Str(string(VerdictBlock)))
	_, err := BuildReceipt(ReceiptInput{Producer: "p", SessionID: "s", Entries: es})
	assert.ErrorContains(t, err, "refusing to sign a chain that does not verify")

	// A receipt whose chain was broken after it was built.
	r := buildTestReceipt(t, chainOf(t, 3))
	r.Entries = es
	_, err = Persist(t.TempDir(), r)
	assert.ErrorContains(t, err, "refusing a chain that does not verify")
	// Or whose body changed after signing.
	r = buildTestReceipt(t, chainOf(t, 3))
	r.Body = r.Body.With(RFieldOutcome, canon.Str("GOVERNED_FAIL"))
	_, err = Persist(t.TempDir(), r)
	assert.ErrorContains(t, err, "signature does not match")

	for _, bad := range []string{"", "../x", "a/b", ".hidden", strings.Repeat("x", 200), "sp ace"} {
		_, err = BuildReceipt(ReceiptInput{Producer: bad, SessionID: "s"})
		assert.Error(t, err, "producer %q", bad)
		_, err = BuildReceipt(ReceiptInput{Producer: "p", SessionID: bad})
		assert.Error(t, err, "session %q", bad)
	}
	_, err = BuildReceipt(ReceiptInput{Producer: "p", SessionID: "s", Provenance: canon.Str("x")})
	assert.ErrorContains(t, err, "provenance must be an object")
	_, err = BuildReceipt(ReceiptInput{Producer: "p", SessionID: "s", Extra: []canon.Member{canon.M(RFieldSignature, canon.Str("x"))}})
	assert.ErrorContains(t, err, "shadow")
}

// TestPersistRoundTripFailure: when what landed on disk does not verify,
// Persist fails and LATEST does not move.
func TestPersistRoundTripFailure(t *testing.T) {
	root := t.TempDir()
	_, err := Persist(root, buildTestReceipt(t, chainOf(t, 1)))
	require.NoError(t, err)
	latest := mustRead(t, filepath.Join(root, "deponent", LatestFile))

	r, err := BuildReceipt(ReceiptInput{Producer: "deponent", SessionID: "s10", Entries: chainOf(t, 2), Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)})
	require.NoError(t, err)
	// Sabotage the disk between the write and the read-back, as a faulty
	// filesystem would.
	testHookAfterWrite = func(path string) {
		data := mustRead(t, path)
		require.NoError(t, os.WriteFile(path, bytes.Replace(data, []byte("GOVERNED"), []byte("GOVERNEd"), 1), 0o644))
	}
	defer func() { testHookAfterWrite = nil }()
	r2, err := BuildReceipt(ReceiptInput{Producer: "deponent", SessionID: "s9", Outcome: "GOVERNED_PASS", Entries: chainOf(t, 2), Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)})
	require.NoError(t, err)
	_, err = Persist(root, r2)
	assert.ErrorContains(t, err, "does not verify")
	assert.Equal(t, latest, mustRead(t, filepath.Join(root, "deponent", LatestFile)), "LATEST must not move")
	// The damaged receipt stays where a verifier will flag it.
	_, err = VerifyReceiptFile(filepath.Join(root, "deponent", r2.ID+".json"))
	assert.ErrorContains(t, err, "signature")

	// A name already taken by something else is refused before writing.
	require.NoError(t, os.MkdirAll(filepath.Join(root, "deponent", r.ID+".json"), 0o755))
	testHookAfterWrite = nil
	_, err = Persist(root, r)
	assert.ErrorContains(t, err, "refusing to overwrite")
}

func TestVerifyReceiptSchema(t *testing.T) {
	r := buildTestReceipt(t, chainOf(t, 2))
	good := canon.AppendIndent(nil, r.Body, "  ")
	_, err := VerifyReceipt(good)
	require.NoError(t, err, "positive control")

	resign := func(v canon.Value) []byte {
		v = v.With(RFieldSignature, canon.Str(signature(v)))
		return canon.AppendIndent(nil, v, "  ")
	}
	body := r.Body
	for _, k := range []string{RFieldID, RFieldSchema, RFieldProducer, RFieldTS, RFieldSession, RFieldModel, RFieldTask, RFieldOutcome, RFieldChain, RFieldProvenance} {
		_, err := VerifyReceipt(resign(body.Without(k)))
		assert.ErrorContains(t, err, `missing field "`+k+`"`, k)
		_, err = VerifyReceipt(resign(body.With(k, canon.Int(1))))
		assert.ErrorContains(t, err, "is a number", k)
	}
	_, err = VerifyReceipt(resign(body.With(RFieldSchema, canon.Str("deponent-receipt/v2"))))
	assert.ErrorContains(t, err, "unsupported schema")
	_, err = VerifyReceipt(resign(body.With(RFieldID, canon.Str(""))))
	assert.ErrorContains(t, err, "receipt_id is empty")
	_, err = VerifyReceipt(canon.AppendIndent(nil, body.With(RFieldSignature, canon.Int(5)), ""))
	assert.ErrorContains(t, err, "is a number")

	chain, _ := body.Get(RFieldChain)
	for _, c := range []struct {
		chain canon.Value
		msg   string
	}{
		{chain.Without(RFieldGenesis), `missing field "genesis"`},
		{chain.With(RFieldGenesis, canon.NullValue()), "genesis is a null"},
		{chain.With(RFieldGenesis, canon.Str("")), "genesis is empty"},
		{chain.Without(RFieldEntries), `missing field "entries"`},
		{chain.With(RFieldEntries, canon.Obj()), "entries is a object"},
		{chain.With(RFieldEntries, canon.Arr(canon.Str("x"))), "entry is a string"},
	} {
		_, err := VerifyReceipt(resign(body.With(RFieldChain, c.chain)))
		assert.ErrorContains(t, err, c.msg)
	}
	_, err = VerifyReceipt([]byte(`[1, 2]`))
	assert.ErrorContains(t, err, "receipt is a JSON array")
	// A ledger saved under a receipt's name.
	ledger := mustRead(t, writeLedger(t, 2))
	_, err = VerifyReceipt(ledger)
	assert.ErrorContains(t, err, "looks like a JSONL ledger")
	_, err = VerifyReceipt(nil)
	assert.ErrorContains(t, err, "empty")
	// Size cap, without reading past it.
	_, err = VerifyReceiptReader(bytes.NewReader(make([]byte, MaxReceiptBytes+10)))
	assert.ErrorContains(t, err, "larger than the")
}

func TestVerifyReceiptFileErrors(t *testing.T) {
	_, err := VerifyReceiptFile(filepath.Join(t.TempDir(), "nope.json"))
	assert.ErrorContains(t, err, "nope.json: cannot read")
	dir := t.TempDir()
	_, err = VerifyReceiptFile(dir)
	assert.ErrorContains(t, err, "cannot read")
}

// TestPersistIndexTask: an index line keeps the task's first 80
// characters (code points, as the reference's task[:80]).
func TestPersistIndexTask(t *testing.T) {
	root := t.TempDir()
	task := strings.Repeat("é", 79) + "🚀ab"
	r, err := BuildReceipt(ReceiptInput{Producer: "deponent", SessionID: "s1", Model: "m", Task: task, Outcome: OutcomePass,
		Entries: chainOf(t, 1), Now: time.Date(2026, 11, 29, 18, 47, 20, 0, time.UTC)})
	require.NoError(t, err)
	_, err = Persist(root, r)
	require.NoError(t, err)
	line := bytes.TrimSuffix(mustRead(t, filepath.Join(root, "deponent", IndexFile)), []byte("\n"))
	v, err := canon.Parse(line, canon.DefaultLimits)
	require.NoError(t, err)
	got, _ := v.Get(RFieldTask)
	assert.Equal(t, canon.Str(strings.Repeat("é", 79)+"🚀").String(), got.String())
}

// TestCheckReceiptFacts: CheckReceipt says what it established, on an
// error too: the fields read, the chain as far as it verified.
func TestCheckReceiptFacts(t *testing.T) {
	entries := chainOf(t, 6)
	r := buildTestReceipt(t, entries)
	data := canon.AppendIndent(nil, r.Body, "  ")
	f, err := CheckReceipt(data)
	require.NoError(t, err)
	assert.Equal(t, r.ID, f.ID)
	assert.Equal(t, int64(6), f.Chain.Entries)
	assert.Equal(t, canon.Null, f.Body.Kind(), "CheckReceipt keeps no tree")
	assert.Nil(t, f.Entries)
	assert.False(t, f.Governed, "an object without a schema is not ours")
	assert.NoError(t, f.GovernanceErr)
	assert.Equal(t, int64(6), f.Assessment.Entries, "the chain is still judged, for its counts")

	// A field changed after the hash: every entry verified, the content
	// hash does not match.
	changed := bytes.Replace(data, []byte(`"task": "t"`), []byte(`"task": "T"`), 1)
	f, err = CheckReceipt(changed)
	require.ErrorContains(t, err, "content hash does not match")
	assert.NotContains(t, err.Error(), "signed")
	assert.Equal(t, int64(6), f.Chain.Entries)
	assert.Equal(t, r.ID, f.ID)

	// An entry changed: the chain verified up to it.
	mid, _ := entries[3].Get(FieldEntryHash)
	s, _ := mid.AsString()
	broken := bytes.Replace(data, []byte(`"entry_hash": "`+s+`"`), []byte(`"entry_hash": "`+strings.Repeat("0", 64)+`"`), 1)
	require.NotEqual(t, data, broken)
	f, err = CheckReceipt(broken)
	var re *ReceiptError
	require.ErrorAs(t, err, &re)
	require.NotNil(t, re.Break)
	assert.Equal(t, BreakHash, re.Break.Kind)
	assert.Equal(t, int64(3), f.Chain.Entries)
	head, _ := entries[2].Get(FieldEntryHash)
	assert.Equal(t, canon.Str(f.Chain.Head).String(), head.String())
}

// TestCheckReceiptHoldsNoTree: a receipt whose extra field holds millions
// of values is verified without a tree of them: the bytes allocated are a
// small part of the receipt's size (counted, not timed). A tree would
// take tens of bytes a value.
func TestCheckReceiptHoldsNoTree(t *testing.T) {
	const values = 4 << 20
	extra := bytes.Repeat([]byte("0,"), values)
	extra[len(extra)-1] = ']'
	in := ReceiptInput{Producer: "deponent", SessionID: "s1", Outcome: OutcomePass, Entries: chainOf(t, 3),
		Extra: []canon.Member{canon.M("zeros", canon.Arr())}}
	r, err := BuildReceipt(in)
	require.NoError(t, err)
	// Put the zeros in, and sign what is there: a valid, hostile receipt.
	body := canon.AppendIndent(nil, r.Body.Without(RFieldSignature), "  ")
	body = bytes.Replace(body, []byte(`"zeros": []`), append([]byte(`"zeros": [`), extra...), 1)
	h := sha256.New()
	d, err := canon.NewDoc(body, ReceiptLimits)
	require.NoError(t, err)
	w := bufio.NewWriter(h)
	_, err = d.WriteCanonical(w, d.Root(), 0)
	require.NoError(t, err)
	w.Flush()
	sig := hex.EncodeToString(h.Sum(nil))
	data := append(body[:len(body)-2], []byte(",\n  \"signature\": \""+sig+"\"\n}")...)

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f, err := CheckReceipt(data)
	runtime.ReadMemStats(&after)
	require.NoError(t, err)
	assert.Equal(t, int64(3), f.Chain.Entries)
	allocated := after.TotalAlloc - before.TotalAlloc
	assert.Less(t, allocated, uint64(len(data)/8), "%d bytes allocated to check %d bytes of %d values", allocated, len(data), values)

	// Held whole, it is refused: too many values for a tree.
	_, err = VerifyReceipt(data)
	assert.ErrorContains(t, err, "values")
}

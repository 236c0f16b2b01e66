package evidence

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/deponent-dev/deponent-action/pkg/canon"
)

func rec(i int) Record {
	return Record{Agent: "builder", Tool: "run_cmd", Params: map[string]any{"cmd": fmt.Sprintf("echo %d", i)},
		Verdict: VerdictAllow, BlastClass: ClassLocalExec, Reason: "allowlisted", OutcomeSHA256: HashOutcome([]byte{byte(i)})}
}

func writeLedger(t *testing.T, n int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ledger.jsonl")
	l, err := OpenLedger(LedgerOptions{Path: path})
	require.NoError(t, err)
	for i := range n {
		_, err := l.Append(rec(i))
		require.NoError(t, err)
	}
	require.NoError(t, l.Close())
	return path
}

func TestLedgerAppendAndVerify(t *testing.T) {
	l, err := OpenLedger(LedgerOptions{})
	require.NoError(t, err)
	assert.Equal(t, Genesis, l.Head())
	var last canon.Value
	for i := range 5 {
		last, err = l.Append(rec(i))
		require.NoError(t, err)
	}
	rep := l.Verify()
	require.True(t, rep.OK(), "%v", rep.Break)
	assert.Equal(t, int64(5), rep.Entries)
	h, _ := last.Get(FieldEntryHash)
	hs, _ := h.AsString()
	assert.Equal(t, hs, l.Head())
	assert.Equal(t, hs, rep.Head)
	assert.Equal(t, int64(5), l.Len())
	assert.Equal(t, int64(5), rep.Allowed)

	// Tamper with a retained entry: the recomputation notices.
	es := l.Entries()
	es[2] = es[2].With(FieldReason, canon.Str("changed"))
	rep = VerifyEntries(es, Genesis, Anchors{})
	require.NotNil(t, rep.Break)
	assert.Equal(t, BreakHash, rep.Break.Kind)
	assert.Equal(t, int64(2), rep.Break.Index)
	// Reorder: a prev-hash break at the first moved entry.
	es = l.Entries()
	es[1], es[2] = es[2], es[1]
	rep = VerifyEntries(es, Genesis, Anchors{})
	require.NotNil(t, rep.Break)
	assert.Equal(t, BreakPrevHash, rep.Break.Kind)
	assert.Equal(t, int64(1), rep.Break.Index)
	// Truncation passes a bare chain; only an anchor catches it.
	es = l.Entries()[:3]
	assert.True(t, VerifyEntries(es, Genesis, Anchors{}).OK())
	rep = VerifyEntries(es, Genesis, Anchors{Len: ptr(5)})
	require.NotNil(t, rep.Break)
	assert.Equal(t, BreakLength, rep.Break.Kind)
	rep = VerifyEntries(es, Genesis, Anchors{Head: hs})
	require.NotNil(t, rep.Break)
	assert.Equal(t, BreakHead, rep.Break.Kind)
	assert.True(t, VerifyEntries(l.Entries(), Genesis, Anchors{Len: ptr(5), Head: hs}).OK())
}

func TestLedgerRecordRules(t *testing.T) {
	l, err := OpenLedger(LedgerOptions{})
	require.NoError(t, err)
	_, err = l.Append(Record{Verdict: "MAYBE"})
	assert.ErrorContains(t, err, `verdict "MAYBE"`)
	_, err = l.Append(Record{Verdict: VerdictAllow, OutcomeSHA256: "ABC"})
	assert.ErrorContains(t, err, "outcome_sha256")
	_, err = l.Append(Record{Verdict: VerdictAllow, Extra: []canon.Member{canon.M(FieldPrevHash, canon.Str("x"))}})
	assert.ErrorContains(t, err, "shadow")
	_, err = l.Append(Record{Verdict: VerdictAllow, Extra: []canon.Member{canon.M(FieldExitCode, canon.Int(1)), canon.M(FieldExitCode, canon.Int(2))}})
	assert.ErrorContains(t, err, "twice")
	assert.Equal(t, int64(0), l.Len(), "refused records leave no entry")

	// Parameters are stringified and cut to 200 characters, never bytes.
	e, err := l.Append(Record{Verdict: VerdictBlock, Params: map[string]any{"s": strings.Repeat("é", 300), "n": 42, "b": false, "v": canon.Arr(canon.Int(1))}})
	require.NoError(t, err)
	p, _ := e.Get(FieldParams)
	s, _ := mustMember(t, p, "s").AsString()
	assert.Equal(t, 200, len([]rune(s)))
	assert.Equal(t, 400, len(s))
	n, _ := mustMember(t, p, "n").AsString()
	assert.Equal(t, "42", n)
	b, _ := mustMember(t, p, "b").AsString()
	assert.Equal(t, "false", b)
	v, _ := mustMember(t, p, "v").AsString()
	assert.Equal(t, "[1]", v)
	// The outcome is a hash; the entry never holds it verbatim.
	o, _ := mustMember(t, e, FieldOutcomeSHA256).AsString()
	assert.Equal(t, "", o)
}

func mustMember(t *testing.T, v canon.Value, k string) canon.Value {
	t.Helper()
	m, ok := v.Get(k)
	require.True(t, ok, k)
	return m
}

// TestLedgerConcurrentAppends: one ledger, several goroutines; the chain is
// intact, every append is in it, and each goroutine's appends keep their
// order.
func TestLedgerConcurrentAppends(t *testing.T) {
	path := filepath.Join(t.TempDir(), "l.jsonl")
	l, err := OpenLedger(LedgerOptions{Path: path, NoSync: true})
	require.NoError(t, err)
	const workers, each = 8, 50
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				_, err := l.Append(Record{Agent: fmt.Sprintf("a%d", w), Tool: "run_cmd", Params: map[string]any{"i": i}, Verdict: VerdictAllow})
				assert.NoError(t, err)
			}
		}()
	}
	wg.Wait()
	require.NoError(t, l.Close())
	rep, err := VerifyLedgerFile(path, VerifyOptions{Anchors: Anchors{Len: ptr(int64(workers * each))}})
	require.NoError(t, err)
	require.True(t, rep.OK(), "%v", rep.Break)
	next := map[string]int{}
	for _, e := range l.Entries() {
		a, _ := mustMember(t, e, FieldAgent).AsString()
		i, _ := mustMember(t, mustMember(t, e, FieldParams), "i").AsString()
		assert.Equal(t, fmt.Sprint(next[a]), i, "agent %s out of order", a)
		next[a]++
	}
}

func TestLedgerFileReopenAndRefuseBroken(t *testing.T) {
	path := writeLedger(t, 3)
	l, err := OpenLedger(LedgerOptions{Path: path})
	require.NoError(t, err)
	assert.Equal(t, int64(3), l.Len())
	assert.Len(t, l.Entries(), 3)
	_, err = l.Append(rec(3))
	require.NoError(t, err)
	// A second writer is refused while the first holds the file.
	_, err = OpenLedger(LedgerOptions{Path: path})
	assert.ErrorContains(t, err, "another process")
	require.NoError(t, l.Close())
	_, err = l.Append(rec(9))
	assert.Error(t, err, "append after close")

	rep, err := VerifyLedgerFile(path, VerifyOptions{})
	require.NoError(t, err)
	require.True(t, rep.OK(), "%v", rep.Break)
	assert.Equal(t, int64(4), rep.Entries)

	// Tamper on disk: the ledger refuses to extend it.
	data, _ := os.ReadFile(path)
	require.NoError(t, os.WriteFile(path, bytes.Replace(data, []byte("echo 1"), []byte("echo X"), 1), 0o644))
	_, err = OpenLedger(LedgerOptions{Path: path})
	assert.ErrorContains(t, err, "does not verify; refusing to extend it")
	assert.ErrorContains(t, err, "hash-mismatch")
}

func TestLedgerFileLinesAreNewlineOnly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "l.jsonl")
	l, err := OpenLedger(LedgerOptions{Path: path})
	require.NoError(t, err)
	_, err = l.Append(Record{Agent: "a\u2028b\nc\r", Tool: "t", Verdict: VerdictBlock, Params: map[string]any{"x": "\u2029"}})
	require.NoError(t, err)
	require.NoError(t, l.Close())
	data, _ := os.ReadFile(path)
	assert.Equal(t, 1, bytes.Count(data, []byte{'\n'}))
	assert.True(t, bytes.HasSuffix(data, []byte("}\n")))
	assert.Contains(t, string(data), "\u2028", "U+2028 is written raw, as the reference does")
	assert.Equal(t, string(canon.Canonical(l.Entries()[0]))+"\n", string(data), "each line is C(entry)")
}

// TestVerifyLedgerBadInput: each bad input is a break or an error that says
// where, never a panic and never OK.
func TestVerifyLedgerBadInput(t *testing.T) {
	good := string(mustRead(t, writeLedger(t, 3)))
	lines := strings.SplitAfter(good, "\n")
	cases := []struct {
		name, data string
		kind       BreakKind
		line       int64
		msg        string
	}{
		{"torn", good[:len(good)-20], BreakMalformed, 3, "torn last line"},
		{"no final newline", strings.TrimSuffix(good, "\n"), BreakMalformed, 3, "torn last line"},
		{"blank line", lines[0] + "\n" + lines[1], BreakMalformed, 2, "empty line"},
		{"crlf junk", lines[0] + "\r\n", BreakMalformed, 2, "column 2: expected a JSON object, found end of input"},
		{"not json", lines[0] + "hello\n", BreakMalformed, 2, "column 1: expected a JSON object"},
		{"invalid utf8", lines[0] + "{\"ts\": \"\xff\"}\n", BreakMalformed, 2, "invalid UTF-8"},
		{"nan", lines[0] + `{"ts": NaN}` + "\n", BreakMalformed, 2, "NaN"},
		{"dup key", strings.Replace(lines[0], `{"agent": `, `{"agent": "x", "agent": `, 1), BreakMalformed, 1, "duplicate key"},
		{"wrong type", strings.Replace(lines[0], `"tool": "run_cmd"`, `"tool": 7`, 1), BreakMalformed, 1, `field "tool" is a number`},
		{"params not strings", strings.Replace(lines[0], `"cmd": "echo 0"`, `"cmd": 0`, 1), BreakMalformed, 1, "not a string"},
		{"missing field", strings.Replace(lines[0], `"reason": "allowlisted", `, ``, 1), BreakMalformed, 1, `missing field "reason"`},
		{"array line", "[1]\n", BreakMalformed, 1, "expected a JSON object"},
		{"deep", lines[0] + `{"x": ` + strings.Repeat("[", 100000) + "\n", BreakMalformed, 2, "nesting deeper"},
		{"bad verdict", strings.Replace(lines[0], `"ALLOW"`, `"allow"`, 1), BreakMalformed, 1, "verdict"},
		{"upper hash", strings.ToUpper(lines[0][:0]) + upperHash(lines[0]), BreakMalformed, 1, "entry_hash"},
		{"swap", lines[1] + lines[0] + lines[2], BreakPrevHash, 1, "genesis"},
		{"delete middle", lines[0] + lines[2], BreakPrevHash, 2, "does not match"},
		{"duplicate line", lines[0] + lines[0], BreakPrevHash, 2, "does not match"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rep, err := VerifyLedger(strings.NewReader(c.data), VerifyOptions{})
			require.NoError(t, err)
			require.NotNil(t, rep.Break, "must not verify")
			assert.Equal(t, c.kind, rep.Break.Kind, rep.Break.Error())
			assert.Equal(t, c.line, rep.Break.Line, rep.Break.Error())
			assert.Contains(t, rep.Break.Error(), c.msg)
		})
	}
	// Empty input is an empty chain: it verifies, and only an anchor can
	// say it should not be empty.
	rep, err := VerifyLedger(strings.NewReader(""), VerifyOptions{})
	require.NoError(t, err)
	assert.True(t, rep.OK())
	assert.Equal(t, int64(0), rep.Entries)
	rep, _ = VerifyLedger(strings.NewReader(""), VerifyOptions{Anchors: Anchors{Len: ptr(1)}})
	assert.Equal(t, BreakLength, rep.Break.Kind)
}

func upperHash(line string) string {
	i := strings.Index(line, `"entry_hash": "`) + len(`"entry_hash": "`)
	return line[:i] + strings.ToUpper(line[i:i+64]) + line[i+64:]
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}

// hugeLine yields valid lines, then a line of n bytes, without holding it.
type hugeLine struct {
	prefix []byte
	n      int64
	sent   int64
}

func (h *hugeLine) Read(p []byte) (int, error) {
	if len(h.prefix) > 0 {
		k := copy(p, h.prefix)
		h.prefix = h.prefix[k:]
		return k, nil
	}
	if h.sent >= h.n {
		return 0, io.EOF
	}
	k := int64(len(p))
	if k > h.n-h.sent {
		k = h.n - h.sent
	}
	for i := range p[:k] {
		p[i] = 'x'
	}
	h.sent += k
	return int(k), nil
}

// TestVerifyLedgerGiantLine: a 1 GiB line is refused at the cap, after
// reading little more than the cap.
func TestVerifyLedgerGiantLine(t *testing.T) {
	good := mustRead(t, writeLedger(t, 2))
	src := &hugeLine{prefix: good, n: 1 << 30}
	rep, err := VerifyLedger(src, VerifyOptions{})
	require.NoError(t, err)
	require.NotNil(t, rep.Break)
	assert.Equal(t, int64(3), rep.Break.Line)
	assert.Contains(t, rep.Break.Detail, "longer than the 1048576-byte cap")
	assert.Less(t, src.sent, int64(8<<20), "read far past the cap")
	assert.Equal(t, int64(2), rep.Entries)
}

// TestVerifyLedgerAcrossBatches: breaks are found and reported at the right
// index whatever batch boundary they fall on.
func TestVerifyLedgerAcrossBatches(t *testing.T) {
	path := filepath.Join(t.TempDir(), "l.jsonl")
	l, err := OpenLedger(LedgerOptions{Path: path, NoSync: true, Discard: true})
	require.NoError(t, err)
	const n = 4000 // several 256 KiB batches
	for i := range n {
		_, err := l.Append(rec(i))
		require.NoError(t, err)
	}
	head := l.Head()
	require.NoError(t, l.Close())
	data := mustRead(t, path)
	for _, workers := range []int{1, 2, 7} {
		rep, err := VerifyLedger(bytes.NewReader(data), VerifyOptions{Workers: workers, Anchors: Anchors{Len: ptr(int64(n)), Head: head}})
		require.NoError(t, err)
		require.True(t, rep.OK(), "%v", rep.Break)
		assert.Equal(t, head, rep.Head)
	}
	lines := bytes.SplitAfter(data, []byte{'\n'})
	for _, victim := range []int{0, 1, 500, 1999, 2000, 3998, 3999} {
		// Drop one line: the next one's prev_hash no longer links (or, for
		// the last, only the length anchor knows).
		var b bytes.Buffer
		for i, ln := range lines {
			if i != victim {
				b.Write(ln)
			}
		}
		rep, err := VerifyLedger(bytes.NewReader(b.Bytes()), VerifyOptions{Workers: 3, Anchors: Anchors{Len: ptr(int64(n))}})
		require.NoError(t, err)
		require.NotNil(t, rep.Break, "victim %d", victim)
		if victim == n-1 {
			assert.Equal(t, BreakLength, rep.Break.Kind)
			continue
		}
		assert.Equal(t, BreakPrevHash, rep.Break.Kind, "victim %d", victim)
		assert.Equal(t, int64(victim), rep.Break.Index, "victim %d", victim)
		assert.Equal(t, int64(victim), rep.Entries, "entries verified before the break")
	}
}

type failingReader struct{ after int }

func (f *failingReader) Read(p []byte) (int, error) {
	if f.after <= 0 {
		return 0, fmt.Errorf("disk on fire")
	}
	n := min(len(p), f.after)
	for i := range p[:n] {
		p[i] = ' '
	}
	f.after -= n
	return n, nil
}

func TestVerifyLedgerReadError(t *testing.T) {
	_, err := VerifyLedger(&failingReader{after: 10}, VerifyOptions{})
	assert.ErrorContains(t, err, "disk on fire")
	_, err = VerifyLedgerFile(filepath.Join(t.TempDir(), "missing.jsonl"), VerifyOptions{})
	assert.Error(t, err)
}

func ptr(n int64) *int64 { return &n }

// TestParamsMustBeStringsInAnyOrder: an entry whose params hold a
// non-string fails the same way whether its members are written in key
// order (the fast path) or in another order (the full transcoder), and
// wherever in params the non-string sits. The check once saw only the last
// member read, so one of these orders passed.
func TestParamsMustBeStringsInAnyOrder(t *testing.T) {
	for _, params := range [][]canon.Member{
		{canon.M("a", canon.Int(1)), canon.M("b", canon.Str("x"))},
		{canon.M("b", canon.Str("x")), canon.M("a", canon.Int(1))},
		{canon.M("a", canon.Str("x")), canon.M("b", canon.Int(1))},
		{canon.M("b", canon.Int(1)), canon.M("a", canon.Str("x"))},
	} {
		payload := canon.Obj(
			canon.M(FieldTS, canon.Str("2026-01-02T03:04:05+00:00")), canon.M(FieldAgent, canon.Str("builder")),
			canon.M(FieldTool, canon.Str(ToolRunCmd)), canon.M(FieldParams, canon.Obj(params...)),
			canon.M(FieldVerdict, canon.Str(string(VerdictAllow))), canon.M(FieldBlastClass, canon.Str(string(ClassLocalExec))),
			canon.M(FieldReason, canon.Str("r")), canon.M(FieldOutcomeSHA256, canon.Str("")),
		)
		hash := chainHash(sha256.New(), Genesis, canon.Canonical(payload))
		entry := payload.With(FieldPrevHash, canon.Str(Genesis)).With(FieldEntryHash, canon.Str(hash))
		for name, line := range map[string][]byte{
			"key order":       canon.Canonical(entry),
			"insertion order": canon.AppendOrdered(nil, entry),
		} {
			rep, err := VerifyLedger(bytes.NewReader(append(line, '\n')), VerifyOptions{})
			require.NoError(t, err)
			require.NotNil(t, rep.Break, "%s: %s must not verify", name, line)
			assert.Equal(t, BreakMalformed, rep.Break.Kind, name)
			assert.Contains(t, rep.Break.Detail, `field "params" holds a value that is not a string`, "%s: %s", name, line)
			// The tree verifier agrees.
			assert.NotNil(t, VerifyEntries([]canon.Value{entry}, Genesis, Anchors{}).Break)
		}
	}
}

package evidence

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/deponent-dev/deponent-action/pkg/canon"
)

// interopDir holds a copy of ../shared/interop: receipts and ledgers written
// by the Python reference, valid and tampered, with manifest.json.
const interopDir = "testdata/interop"

type vector struct {
	File   string `json:"file"`
	Kind   string `json:"kind"`
	Expect string `json:"expect"`
	Why    string `json:"why"`
}

func loadManifest(t *testing.T) []vector {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(interopDir, "manifest.json"))
	require.NoError(t, err)
	var vs []vector
	require.NoError(t, json.Unmarshal(data, &vs))
	require.NotEmpty(t, vs)
	return vs
}

// TestInteropManifest: every vector gets the verdict the manifest expects.
func TestInteropManifest(t *testing.T) {
	vs := loadManifest(t)
	kinds := map[string]int{}
	for _, v := range vs {
		t.Run(v.File, func(t *testing.T) {
			path := filepath.Join(interopDir, v.File)
			var err error
			switch v.Kind {
			case "receipt":
				_, err = VerifyReceiptFile(path)
			case "ledger":
				var rep ChainReport
				rep, err = VerifyLedgerFile(path, VerifyOptions{})
				if err == nil && rep.Break != nil {
					err = rep.Break
				}
				if err == nil {
					require.Greater(t, rep.Entries, int64(0))
				}
			default:
				t.Fatalf("unknown kind %q", v.Kind)
			}
			switch v.Expect {
			case "valid":
				assert.NoError(t, err, v.Why)
			case "invalid":
				if assert.Error(t, err, v.Why) {
					t.Logf("%s: %v", v.File, err)
				}
			default:
				t.Fatalf("unknown expectation %q", v.Expect)
			}
			kinds[v.Kind+"/"+v.Expect]++
		})
	}
	// The manifest covers both kinds both ways; if it ever stops doing so,
	// this test would prove less than it claims.
	for _, k := range []string{"receipt/valid", "receipt/invalid", "ledger/valid", "ledger/invalid"} {
		assert.Positive(t, kinds[k], k)
	}
}

// TestInteropCopyIsCurrent: the fixture copy matches the shared vectors when
// they are reachable (in the development workspace).
func TestInteropCopyIsCurrent(t *testing.T) {
	shared := filepath.Join("..", "..", "..", "shared", "interop")
	if _, err := os.Stat(filepath.Join(shared, "manifest.json")); err != nil {
		skipWithoutShared(t, "shared interop vectors not present at %s (fine on a clone): %v", shared, err)
	}
	for _, v := range loadManifest(t) {
		a, err := os.ReadFile(filepath.Join(shared, v.File))
		require.NoError(t, err)
		b, err := os.ReadFile(filepath.Join(interopDir, v.File))
		require.NoError(t, err)
		assert.True(t, bytes.Equal(a, b), "%s differs from the shared copy", v.File)
	}
}

// TestInteropBreakKinds pins what each tampered vector is caught as.
func TestInteropBreakKinds(t *testing.T) {
	ledger := map[string]struct {
		kind  BreakKind
		index int64
	}{
		"tamper-reason.jsonl":        {BreakHash, 1},
		"tamper-swap.jsonl":          {BreakPrevHash, 0},
		"tamper-delete-middle.jsonl": {BreakPrevHash, -1},
		"torn-last-line.jsonl":       {BreakMalformed, 55},
	}
	for file, want := range ledger {
		rep, err := VerifyLedgerFile(filepath.Join(interopDir, "ledgers", file), VerifyOptions{})
		require.NoError(t, err)
		require.NotNil(t, rep.Break, file)
		assert.Equal(t, want.kind, rep.Break.Kind, file)
		if want.index >= 0 {
			assert.Equal(t, want.index, rep.Break.Index, file)
			assert.Equal(t, want.index+1, rep.Break.Line, file)
		}
	}
	receipts := map[string]string{
		"tamper-verdict.json":          "hash-mismatch",
		"tamper-outcome.json":          "content hash does not match",
		"tamper-reorder-resigned.json": "prev-hash-break",
		"tamper-rehash-one-entry.json": "prev-hash-break",
		"tamper-truncate.json":         "content hash does not match",
		"tamper-no-signature.json":     `missing field "signature"`,
		"tamper-signature-case.json":   "not 64 lowercase hex",
		"tamper-genesis.json":          "is not the genesis",
		"tamper-u2028.json":            "content hash does not match",
		"tamper-entries-type.json":     "want an array",
		"broken-json.json":             "unterminated string",
		"empty-file.json":              "file is empty",
		"not-utf8.json":                "invalid UTF-8",
		"dupkey-outcome.json":          `duplicate key "outcome"`,
		"nan.json":                     "NaN is not JSON",
		"probe-deep-nesting.json":      "nesting deeper than 64 levels",
	}
	for file, want := range receipts {
		_, err := VerifyReceiptFile(filepath.Join(interopDir, "receipts", file))
		if assert.Error(t, err, file) {
			assert.Contains(t, err.Error(), want, file)
			assert.Contains(t, err.Error(), file, "error must name the file")
		}
	}
}

// TestOurReceiptsVerifyUnderReferenceRules: receipts and ledger lines this
// kernel writes are recomputed by plainVerify, an implementation of the
// reference's rules that shares no code with the writer: it decodes with
// encoding/json (numbers as json.Number) and encodes with its own simple
// canonical writer.
func TestOurReceiptsVerifyUnderReferenceRules(t *testing.T) {
	dir := t.TempDir()
	lpath := filepath.Join(dir, "ledger.jsonl")
	l, err := OpenLedger(LedgerOptions{Path: lpath, Now: fixedClock()})
	require.NoError(t, err)
	for _, r := range awkwardRecords() {
		_, err := l.Append(r)
		require.NoError(t, err)
	}
	require.NoError(t, l.Close())

	// The ledger file, line by line.
	data, err := os.ReadFile(lpath)
	require.NoError(t, err)
	prev := Genesis
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	require.Len(t, lines, len(awkwardRecords()))
	for i, line := range lines {
		entry := plainDecode(t, []byte(line)).(map[string]any)
		require.Equal(t, prev, entry["prev_hash"], "line %d", i+1)
		want := plainEntryHash(entry)
		require.Equal(t, want, entry["entry_hash"], "line %d", i+1)
		prev = want
	}

	// A receipt over the same chain, persisted and read back from disk.
	l2, err := OpenLedger(LedgerOptions{Path: lpath})
	require.NoError(t, err)
	defer l2.Close()
	f, _ := canon.Float(0.25)
	r, err := BuildReceipt(ReceiptInput{
		Producer: "deponent", SessionID: "t1", Model: "möđel-🚀",
		Task:    strings.Repeat("é", 200) + "\u2028",
		Outcome: "GOVERNED_PASS", Entries: l2.Entries(),
		Provenance: canon.Obj(canon.M("commit", canon.Str("abc")), canon.M("n", canon.Int(-7)), canon.M("f", f),
			canon.M("big", canon.BigInt(new(big.Int).Lsh(big.NewInt(1), 80)))),
		Extra: []canon.Member{canon.M("governance", canon.Obj(canon.M("html", canon.Str("<b>&amp;</b>\u2029"))))},
		Now:   time.Date(2026, 11, 29, 18, 47, 20, 0, time.UTC),
	})
	require.NoError(t, err)
	path, err := Persist(filepath.Join(dir, "receipts"), r)
	require.NoError(t, err)
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	body := plainDecode(t, raw).(map[string]any)
	assert.Equal(t, "20261129T184720Z_t1", body["receipt_id"])
	assert.Equal(t, 160, len([]rune(body["task"].(string))), "task is cut to 160 characters")
	sig := body["signature"].(string)
	delete(body, "signature")
	assert.Equal(t, plainSHA(plainCanonical(body)), sig, "signature under the reference's rules")
	chain := body["chain"].(map[string]any)
	prev = chain["genesis"].(string)
	for i, e := range chain["entries"].([]any) {
		entry := e.(map[string]any)
		require.Equal(t, prev, entry["prev_hash"], "entry %d", i)
		require.Equal(t, plainEntryHash(entry), entry["entry_hash"], "entry %d", i)
		prev = entry["entry_hash"].(string)
	}
}

func fixedClock() func() time.Time {
	t0 := time.Date(2026, 11, 29, 18, 47, 20, 0, time.UTC)
	return func() time.Time { return t0 }
}

// awkwardRecords exercise every escaping and truncation rule.
func awkwardRecords() []Record {
	return []Record{
		{Agent: "builder", Tool: "run_cmd", Params: map[string]any{"cmd": "echo tab\there \u2028 \u2029 <b>&amp;</b> /"}, Verdict: VerdictAllow, BlastClass: ClassLocalExec, Reason: "ok", OutcomeSHA256: HashOutcome([]byte("out")),
			Extra: []canon.Member{canon.M(FieldExitCode, canon.Int(0)), canon.M(FieldDurationMS, canon.Int(12)), canon.M(FieldJail, canon.Str("bwrap"))}},
		{Agent: "agént-🚀", Tool: "write_file", Params: map[string]any{"path": "dir/ü.py", "content": strings.Repeat("🚀", 250)}, Verdict: VerdictAllow, BlastClass: ClassLocalWrite, Reason: "write inside sandbox"},
		{Agent: "reviewer", Tool: "tööl", Params: map[string]any{"n": 761111, "b": true, "x": nil, "f": 1e16, "ctl": "\x00\x01\x1f\x7f\"\\"}, Verdict: VerdictBlock, BlastClass: ClassUnknownTool, Reason: "no policy for tool 'tööl' (deny-by-default)"},
		{Agent: "deponent-canary", Tool: "run_cmd", Params: map[string]any{"cmd": "rm -rf /"}, Verdict: VerdictBlock, BlastClass: ClassDestructive, Reason: "matched deny pattern 'rm -rf'",
			Extra: []canon.Member{canon.M(FieldUnjailed, canon.BoolValue(false)), canon.M("ratio", mustFloat(2.5e-07))}},
	}
}

func mustFloat(f float64) canon.Value {
	v, err := canon.Float(f)
	if err != nil {
		panic(err)
	}
	return v
}

// --- A deliberately plain implementation of the reference's rules. ---

func plainDecode(t *testing.T, data []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	require.NoError(t, dec.Decode(&v))
	return v
}

func plainSHA(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func plainEntryHash(entry map[string]any) string {
	payload := map[string]any{}
	for k, v := range entry {
		if k != "prev_hash" && k != "entry_hash" {
			payload[k] = v
		}
	}
	return plainSHA([]byte(entry["prev_hash"].(string) + "\n" + string(plainCanonical(payload))))
}

// plainCanonical is json.dumps(v, sort_keys=True, ensure_ascii=False).
func plainCanonical(v any) []byte {
	var b strings.Builder
	plainWrite(&b, v)
	return []byte(b.String())
}

func plainWrite(b *strings.Builder, v any) {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		if x {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case json.Number:
		s := string(x)
		if strings.ContainsAny(s, ".eE") {
			f, _ := strconv.ParseFloat(s, 64)
			b.WriteString(plainPyFloat(f))
		} else {
			b.WriteString(s)
		}
	case string:
		b.WriteByte('"')
		for _, r := range x {
			switch {
			case r == '"':
				b.WriteString(`\"`)
			case r == '\\':
				b.WriteString(`\\`)
			case r == '\n':
				b.WriteString(`\n`)
			case r == '\r':
				b.WriteString(`\r`)
			case r == '\t':
				b.WriteString(`\t`)
			case r == '\b':
				b.WriteString(`\b`)
			case r == '\f':
				b.WriteString(`\f`)
			case r < 0x20:
				fmt.Fprintf(b, `\u%04x`, r)
			default:
				b.WriteRune(r)
			}
		}
		b.WriteByte('"')
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			plainWrite(b, e)
		}
		b.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteString(", ")
			}
			plainWrite(b, k)
			b.WriteString(": ")
			plainWrite(b, x[k])
		}
		b.WriteByte('}')
	}
}

// plainPyFloat: Python's repr through %r-like rules, computed differently
// from the kernel (via the 'g'-style exponent of strconv's shortest form).
func plainPyFloat(f float64) string {
	if f == 0 {
		if 1/f < 0 {
			return "-0.0"
		}
		return "0.0"
	}
	s := strconv.FormatFloat(f, 'e', -1, 64) // d.ddde±XX
	mant, expS, _ := strings.Cut(s, "e")
	exp, _ := strconv.Atoi(expS)
	if exp < -4 || exp >= 16 {
		sign := "+"
		if exp < 0 {
			sign, exp = "-", -exp
		}
		return fmt.Sprintf("%se%s%02d", mant, sign, exp)
	}
	out := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.Contains(out, ".") {
		out += ".0"
	}
	return out
}

func TestPlainFloatAgreesWithGolden(t *testing.T) {
	for _, c := range []struct {
		f    float64
		want string
	}{{1.5, "1.5"}, {1e16, "1e+16"}, {1e-05, "1e-05"}, {0.1, "0.1"}, {123456789.0, "123456789.0"}, {math.Copysign(0, -1), "-0.0"}, {0, "0.0"}, {1e22, "1e+22"}, {2.5e-07, "2.5e-07"}, {100.0, "100.0"}, {0.0001, "0.0001"}, {1e15, "1000000000000000.0"}} {
		assert.Equal(t, c.want, plainPyFloat(c.f), "%v", c.f)
	}
}

package canon

import (
	"bufio"
	"encoding/binary"
	"math"
	"math/big"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFloatReprMatchesPython checks every double in testdata/pyfloat.txt
// (written by CPython's json.dumps) against our rendering.
func TestFloatReprMatchesPython(t *testing.T) {
	f, err := os.Open("testdata/pyfloat.txt")
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		hexBits, want, ok := strings.Cut(line, " ")
		require.True(t, ok, line)
		bits, err := strconv.ParseUint(hexBits, 16, 64)
		require.NoError(t, err)
		got := pyFloatRepr(math.Float64frombits(bits))
		if got != want {
			t.Errorf("double %s: got %s, Python writes %s", hexBits, got, want)
		}
		n++
	}
	require.NoError(t, sc.Err())
	require.Greater(t, n, 5000, "golden file too short")
}

// TestNumberLiterals checks literal -> canonical against Python's
// json.dumps(json.loads(literal)) (testdata/numbers.txt).
func TestNumberLiterals(t *testing.T) {
	data, err := os.ReadFile("testdata/numbers.txt")
	require.NoError(t, err)
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		lit, want, _ := strings.Cut(line, " ")
		v, err := Parse([]byte(lit), DefaultLimits)
		if want == "ERROR" {
			assert.Error(t, err, lit)
			continue
		}
		if assert.NoError(t, err, lit) {
			assert.Equal(t, want, string(Canonical(v)), lit)
		}
	}
}

func TestStringEscapes(t *testing.T) {
	cases := map[string]string{
		"plain":                `"plain"`,
		"q\"b\\s":              `"q\"b\\s"`,
		"\n\r\t\b\f":           `"\n\r\t\b\f"`,
		"\x00\x01\x1f":         `"\u0000\u0001\u001f"`,
		"\x7f":                 "\"\x7f\"",
		"\u2028\u2029":         "\"\u2028\u2029\"",
		"<>&/":                 `"<>&/"`,
		"é🚀日本":                 `"é🚀日本"`,
		"\ufeffbom":            "\"\ufeffbom\"",
		"bad\xffutf8":          "\"bad\uFFFDutf8\"",
		"\x1b[31m":             `"\u001b[31m"`,
		strings.Repeat("a", 3): `"aaa"`,
	}
	for in, want := range cases {
		assert.Equal(t, want, string(AppendString(nil, in)), "%q", in)
	}
}

func TestCanonicalShape(t *testing.T) {
	big, _ := new(big.Int).SetString("-12345678901234567890123", 10)
	f, err := Float(1e16)
	require.NoError(t, err)
	v := Obj(
		M("b", Arr(Int(1), BigInt(big), f, NullValue(), BoolValue(true), BoolValue(false))),
		M("a", Obj()),
		M("é", Arr()),
		M("Z", Str("x")),
		M("\"", Str("q")),
	)
	// Code-point order: '"' (0x22) < 'Z' < 'a' < 'b' < 'é'.
	want := `{"\"": "q", "Z": "x", "a": {}, "b": [1, -12345678901234567890123, 1e+16, null, true, false], "é": []}`
	assert.Equal(t, want, string(Canonical(v)))
	assert.Equal(t, `{"b": [1, -12345678901234567890123, 1e+16, null, true, false], "a": {}, "é": [], "Z": "x", "\"": "q"}`, string(AppendOrdered(nil, v)))
	// Without drops top-level members only.
	assert.Equal(t, `{"Z": "x", "a": {}}`, string(AppendCanonicalWithout(nil, Obj(M("a", Obj()), M("b", Int(1)), M("Z", Str("x"))), "b")))

	_, err = Float(math.NaN())
	assert.Error(t, err)
	_, err = Float(math.Inf(-1))
	assert.Error(t, err)
	assert.Panics(t, func() { Obj(M("a", Int(1)), M("a", Int(2))) })
}

func TestIndentRoundTrips(t *testing.T) {
	src := `{"z": [1, {"y": "\u2028", "x": []}], "a": {}, "n": -0.0}`
	v, err := Parse([]byte(src), DefaultLimits)
	require.NoError(t, err)
	pretty := AppendIndent(nil, v, "  ")
	assert.Contains(t, string(pretty), "\n  \"z\": [\n    1,")
	back, err := Parse(pretty, DefaultLimits)
	require.NoError(t, err)
	assert.Equal(t, string(Canonical(v)), string(Canonical(back)))
}

func TestParseRejects(t *testing.T) {
	deep := strings.Repeat("[", 100000) + strings.Repeat("]", 100000)
	cases := []struct{ in, msg string }{
		{"", "empty input"},
		{"   ", "unexpected end of input"},
		{"\xef\xbb\xbf{}", "byte-order mark"},
		{`{"a": 1`, "unexpected end of input in object"},
		{`{"a": 1,}`, "expected a string key"},
		{`[1, 2`, "unexpected end of input in array"},
		{`[1 2]`, "expected ',' or ']'"},
		{`{"a" 1}`, "expected ':'"},
		{`{"a": 1} x`, "unexpected data after"},
		{`{"a": 1, "a": 2}`, "duplicate key \"a\""},
		{`{"\u0061": 1, "a": 2}`, "duplicate key \"a\""},
		{`NaN`, "NaN is not JSON"},
		{`[Infinity]`, "Infinity is not JSON"},
		{`-Infinity`, "Infinity is not JSON"},
		{`1e400`, "overflows"},
		{`01`, "unexpected data after"},
		{`1.`, "expected a digit after '.'"},
		{`1e`, "expected an exponent digit"},
		{`-`, "expected a digit"},
		{`+1`, "expected a JSON value"},
		{`"abc`, "unterminated string"},
		{"\"a\x01b\"", "raw control character 0x01"},
		{"\"a\nb\"", "raw control character 0x0a"},
		{"\"\xff\"", "invalid UTF-8"},
		{"\"\xed\xa0\x80\"", "invalid UTF-8"}, // surrogate encoded in UTF-8
		{`"\ud800"`, "lone high surrogate"},
		{`"\udc00"`, "lone low surrogate"},
		{`"\ud800\u0041"`, "lone high surrogate"},
		{`"\x41"`, "invalid escape"},
		{`"\u12"`, "invalid \\u escape"},
		{`tru`, "invalid literal"},
		{`{'a': 1}`, "expected a string key"},
		{deep, "nesting deeper than 64 levels"},
		{"1" + strings.Repeat("0", 4300), "more than 4300 digits"},
	}
	for _, c := range cases {
		_, err := Parse([]byte(c.in), DefaultLimits)
		if assert.Error(t, err, "%.40q", c.in) {
			assert.Contains(t, err.Error(), c.msg, "%.40q", c.in)
			var pe *Error
			assert.ErrorAs(t, err, &pe)
		}
		// The transcoder refuses the same inputs (wrapped in an object).
		tr := NewTranscoder(DefaultLimits, nil, nil)
		_, err = tr.Object([]byte(`{"k": ` + c.in + `}`))
		if c.in != "" && c.in != "   " && !strings.Contains(c.msg, "after") && !strings.Contains(c.msg, "byte-order") && !strings.Contains(c.msg, "end of input") {
			assert.Error(t, err, "transcoder accepted %.40q", c.in)
		}
	}
}

func TestParsePositions(t *testing.T) {
	_, err := Parse([]byte("{\n  \"a\": 1,\n  \"a\": 2\n}"), DefaultLimits)
	var pe *Error
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, 3, pe.Line)
	assert.Equal(t, 3, pe.Col)
	assert.Equal(t, 14, pe.Offset)
}

func TestParseSizeCap(t *testing.T) {
	_, err := Parse([]byte(`"`+strings.Repeat("x", 100)+`"`), Limits{MaxBytes: 50, MaxDepth: 4})
	assert.ErrorContains(t, err, "over the 50-byte cap")
}

func TestParseAccepts(t *testing.T) {
	cases := map[string]string{
		`{"a":[1,2,{"b":null}],"c":true}`: `{"a": [1, 2, {"b": null}], "c": true}`,
		`"\u00e9\/\"\\\b\f\n\r\t\u0001"`:  "\"é/\\\"\\\\\\b\\f\\n\\r\\t\\u0001\"",
		`"\ud83d\ude80"`:                  `"🚀"`,
		`"\u2028"`:                        "\"\u2028\"",
		` [ ] `:                           `[]`,
		`{"b":1,"a":2}`:                   `{"a": 2, "b": 1}`,
		`"\u001B"`:                        `"\u001b"`,
		`"\u0022"`:                        `"\""`,
	}
	for in, want := range cases {
		v, err := Parse([]byte(in), DefaultLimits)
		if assert.NoError(t, err, in) {
			assert.Equal(t, want, string(Canonical(v)), in)
		}
	}
}

func TestTranscoderMatchesTree(t *testing.T) {
	inputs := []string{
		`{"ts": "2026", "params": {"cmd": "ls\u2028x", "b": "\u00e9"}, "prev_hash": "GENESIS", "entry_hash": "ab", "n": [1, 2.50, -0, {"z": {}, "a": []}]}`,
		`{}`,
		`{"entry_hash": "x"}`,
		`{"\"": 1, "Z": 2, "a": 3, "é": 4, "\ud83d\ude80": 5, "\uffff": 6}`,
		`{"prev_hash": "G\u0045NESIS", "verdict": "ALLOW", "jail": null, "unjailed": true}`,
	}
	tr := NewTranscoder(DefaultLimits, []string{"prev_hash", "entry_hash"}, []string{"prev_hash", "entry_hash", "verdict", "unjailed"})
	for _, in := range inputs {
		v, err := Parse([]byte(in), DefaultLimits)
		require.NoError(t, err)
		want := AppendCanonicalWithout(nil, v, "prev_hash", "entry_hash")
		got, err := tr.Object([]byte(in))
		require.NoError(t, err, in)
		assert.Equal(t, string(want), string(got), in)
		for i, key := range []string{"prev_hash", "entry_hash", "verdict", "unjailed"} {
			c := tr.Captured(i)
			mv, ok := v.Get(key)
			assert.Equal(t, ok, c.Found, key)
			if ok {
				assert.Equal(t, mv.Kind(), c.Kind, key)
				if s, isStr := mv.AsString(); isStr {
					assert.Equal(t, s, string(c.Str), key)
				}
				if b, isBool := mv.AsBool(); isBool {
					assert.Equal(t, b, c.Bool, key)
				}
			}
		}
	}
	_, err := tr.Object([]byte(`[1]`))
	assert.ErrorContains(t, err, "expected a JSON object")
	_, err = tr.Object([]byte(`{"prev_hash": "a", "prev_hash": "b"}`))
	assert.ErrorContains(t, err, "duplicate key")
}

// TestTranscoderFlatStringsIgnoresOrder: whether every member of a
// captured object is a string is answered over all its members, in any
// order, by Object and by Fast alike. It once looked at the last member
// only, so the same entry passed in one key order and failed in another.
func TestTranscoderFlatStringsIgnoresOrder(t *testing.T) {
	tr := NewTranscoder(DefaultLimits, nil, []string{"params"})
	cases := map[string]bool{
		`{"params": {"a": 1, "b": "x"}}`:                false, // canonical order, non-string first
		`{"params": {"b": "x", "a": 1}}`:                false, // insertion order, non-string first in key order
		`{"params": {"a": "x", "b": 1}}`:                false,
		`{"params": {"b": 1, "a": "x"}}`:                false,
		`{"params": {"a": "x", "b": {"c": "d"}}}`:       false,
		`{"params": {"a": {"c": "d"}, "b": "x"}}`:       false,
		`{"params": {"a": [1], "b": "x"}}`:              false,
		`{"params": {"a": "x", "b": "y"}}`:              true,
		`{"params": {"b": "y", "a": "x"}}`:              true,
		`{"params": {}}`:                                true,
		`{"z": {"q": 1}, "params": {"a": "x"}}`:         true,
		`{"params": {"a": "x"}, "z": {"q": 1, "r": 2}}`: true,
	}
	for in, want := range cases {
		_, err := tr.Object([]byte(in))
		require.NoError(t, err, in)
		assert.Equal(t, want, tr.Captured(0).FlatStrings, "Object %s", in)
		v, err := Parse([]byte(in), DefaultLimits)
		require.NoError(t, err)
		if _, _, ok := tr.Fast(Canonical(v)); ok {
			assert.Equal(t, want, tr.Captured(0).FlatStrings, "Fast %s", Canonical(v))
		}
	}
}

func TestValueAccessors(t *testing.T) {
	v, err := Parse([]byte(`{"s": "x", "i": 42, "f": 1.5, "b": false, "a": [1], "o": {"k": null}, "big": 123456789012345678901234}`), DefaultLimits)
	require.NoError(t, err)
	s, ok := mustGet(t, v, "s").AsString()
	assert.True(t, ok)
	assert.Equal(t, "x", s)
	i, ok := mustGet(t, v, "i").AsInt64()
	assert.True(t, ok)
	assert.Equal(t, int64(42), i)
	_, ok = mustGet(t, v, "big").AsInt64()
	assert.False(t, ok, "an int over int64 must not pretend to fit")
	_, ok = mustGet(t, v, "f").AsInt64()
	assert.False(t, ok)
	assert.True(t, mustGet(t, v, "f").IsFloat())
	assert.Equal(t, Array, mustGet(t, v, "a").Kind())
	assert.Len(t, mustGet(t, v, "a").Elems(), 1)
	assert.Equal(t, Null, mustGet(t, mustGet(t, v, "o"), "k").Kind())
	w := v.With("s", Str("y")).Without("big")
	assert.Equal(t, `{"a": [1], "b": false, "f": 1.5, "i": 42, "o": {"k": null}, "s": "y"}`, w.String())
	assert.True(t, Equal(v, v))
	assert.False(t, Equal(v, w))
	assert.Equal(t, "object", Object.String())
}

func mustGet(t *testing.T, v Value, k string) Value {
	t.Helper()
	m, ok := v.Get(k)
	require.True(t, ok, k)
	return m
}

// TestFloatBitsRoundTrip: what we write for a double parses back to the
// same double (repr's promise).
func TestFloatBitsRoundTrip(t *testing.T) {
	var b [8]byte
	for i := uint64(0); i < 20000; i++ {
		binary.LittleEndian.PutUint64(b[:], i*0x9E3779B97F4A7C15)
		f := math.Float64frombits(binary.LittleEndian.Uint64(b[:]))
		if math.IsNaN(f) || math.IsInf(f, 0) {
			continue
		}
		s := pyFloatRepr(f)
		g, err := strconv.ParseFloat(s, 64)
		require.NoError(t, err, s)
		require.Equal(t, math.Float64bits(f), math.Float64bits(g), s)
	}
}

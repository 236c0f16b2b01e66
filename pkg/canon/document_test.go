package canon

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeCanonical is C(v) of the document's value by Doc.WriteCanonical.
func writeCanonical(data []byte, lim Limits) ([]byte, error) {
	d, err := NewDoc(data, lim)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	w := bufio.NewWriter(&out)
	end, err := d.WriteCanonical(w, d.Root(), 0)
	if err != nil {
		return nil, err
	}
	if err := d.End(end); err != nil {
		return nil, err
	}
	w.Flush()
	return out.Bytes(), nil
}

func TestDocWriteCanonicalMatchesTree(t *testing.T) {
	inputs := []string{
		`{"b": 1, "a": [1, 2.50, -0, 1e16, {"z": {}, "y": []}], "\u00e9": "x\u2028\n\"\\\/\u0001", "\ud83d\ude80": true}`,
		`[]`, `{}`, `"\u0000\u001f"`, `-0.0`, `12345678901234567890123`, `null`,
		`{"\"": 1, "Z": 2, "a": 3, "é": 4, "\ud83d\ude80": 5, "\uffff": 6, "\u00e8": 7}`,
		" \n{\"k\" : [ 1 , { \"b\" : 2 , \"a\" : 1 } ] }\n",
	}
	for _, in := range inputs {
		v, err := Parse([]byte(in), DefaultLimits)
		require.NoError(t, err, in)
		got, err := writeCanonical([]byte(in), DefaultLimits)
		require.NoError(t, err, in)
		assert.Equal(t, string(Canonical(v)), string(got), in)
	}
}

func TestDocRefusesWhatParseRefuses(t *testing.T) {
	lim := Limits{MaxBytes: 1 << 20, MaxDepth: 8, MaxMembers: 3}
	for _, in := range []string{
		`{"a": 1, "a": 2}`,
		`{"x": [{"a": 1, "\u0061": 2}]}`, // a duplicate found only once decoded, nested
		`{"a": 1, "b": 2, "c": 3, "d": 4}`,
		`[[[[[[[[[1]]]]]]]]]`,
		`{"a": NaN}`, `[1e400]`, `["\ud800"]`, "[\"\xff\"]", `{"a" 1}`, `[1,]`, `[1 2]`, `{"a": 1,}`,
		`[1] x`, ``, `   `, "\xef\xbb\xbf1", `"abc`, `[tru]`,
	} {
		_, perr := Parse([]byte(in), lim)
		require.Error(t, perr, in)
		_, err := writeCanonical([]byte(in), lim)
		assert.Error(t, err, "%s: Parse says %v", in, perr)
		var ce *Error
		if err != nil {
			assert.ErrorAs(t, err, &ce, in)
		}
	}
}

// TestDocObject: members in key order, in place; a duplicate among them
// refused, one nested deeper left to whoever reads that object.
func TestDocObject(t *testing.T) {
	src := []byte(`{"b": [1, {"y": 1, "y": 2}], "a": "x", "\u00e9": {}}`)
	d, err := NewDoc(src, DefaultLimits)
	require.NoError(t, err)
	fs, end, err := d.Object(d.Root(), 0)
	require.NoError(t, err)
	assert.Equal(t, len(src), end)
	require.Len(t, fs, 3)
	assert.Equal(t, []string{"a", "b", "é"}, []string{fs[0].Key, fs[1].Key, fs[2].Key})
	assert.Equal(t, `"x"`, string(d.Bytes(fs[0].At, fs[0].End)))
	assert.Equal(t, String, d.KindAt(fs[0].At))
	assert.Equal(t, Array, d.KindAt(fs[1].At))
	// The nested duplicate is found by the readers of that object.
	n := 0
	_, err = d.Array(fs[1].At, 1, func(i, at int) (int, error) {
		n++
		return d.Skip(at, 2)
	})
	assert.ErrorContains(t, err, `duplicate key "y" in object`)
	assert.Equal(t, 2, n)
	_, err = writeCanonical(src, DefaultLimits)
	assert.ErrorContains(t, err, `duplicate key "y" in object`)

	_, _, err = d.Object(fs[0].At, 1)
	assert.ErrorContains(t, err, "expected a JSON object")
	d2, _ := NewDoc([]byte(`{"a": 1, "b": 2, "a": 3}`), DefaultLimits)
	_, _, err = d2.Object(0, 0)
	assert.ErrorContains(t, err, "line 1, column 18 (byte 17): duplicate key \"a\" in object")
}

func TestDocParseAtAndTranscoderAt(t *testing.T) {
	entry := `{"prev_hash": "GENESIS", "ts": "t", "params": {"b": "x", "a": "y"}, "entry_hash": "h", "n": [1.50, {"z": 1, "a": 2}]}`
	src := []byte("{\n  \"chain\": {\n    \"entries\": [\n      " + entry + "\n    ]\n  }\n}\n")
	d, err := NewDoc(src, DefaultLimits)
	require.NoError(t, err)
	top, _, err := d.Object(d.Root(), 0)
	require.NoError(t, err)
	chain, _, err := d.Object(top[0].At, 1)
	require.NoError(t, err)
	tree, err := Parse([]byte(entry), DefaultLimits)
	require.NoError(t, err)
	tr := NewTranscoder(DefaultLimits, []string{"prev_hash", "entry_hash"}, []string{"prev_hash", "params"})
	tr.KeepFull()
	_, err = d.Array(chain[0].At, 2, func(i, at int) (int, error) {
		v, end, err := d.ParseAt(at, 3, 0)
		require.NoError(t, err)
		assert.True(t, Equal(tree, v))
		out, end2, err := tr.ObjectAt(d, at, 3)
		require.NoError(t, err)
		assert.Equal(t, end, end2)
		assert.Equal(t, string(AppendCanonicalWithout(nil, tree, "prev_hash", "entry_hash")), string(out))
		assert.Equal(t, string(Canonical(tree)), string(tr.Full()))
		assert.Equal(t, "GENESIS", string(tr.Captured(0).Str))
		assert.True(t, tr.Captured(1).FlatStrings)
		return end, nil
	})
	require.NoError(t, err)

	// The depth cap counts from the document's root.
	deep := Limits{MaxBytes: 1 << 20, MaxDepth: 5}
	d, err = NewDoc([]byte(`[[[{"a": [[1]]}]]]`), deep)
	require.NoError(t, err)
	_, _, err = NewTranscoder(DefaultLimits, nil, nil).ObjectAt(d, 3, 3)
	assert.ErrorContains(t, err, "nesting deeper than 5 levels")
	_, _, err = d.ParseAt(3, 3, 0)
	assert.ErrorContains(t, err, "nesting deeper than 5 levels")

	// An object over the Transcoder's byte cap is refused as such, not
	// read to its end.
	big := []byte(`[{"a": "` + strings.Repeat("x", 1000) + `"}]`)
	d, _ = NewDoc(big, DefaultLimits)
	_, _, err = NewTranscoder(Limits{MaxBytes: 100, MaxDepth: 8}, nil, nil).ObjectAt(d, 1, 1)
	assert.ErrorContains(t, err, "object is longer than the 100-byte cap")
}

// TestValueAndMemberCaps: Parse, the transcoder (both paths) and the Doc
// readers apply the same caps on what is parsed.
func TestValueAndMemberCaps(t *testing.T) {
	lim := Limits{MaxBytes: 1 << 20, MaxDepth: 16, MaxValues: 6, MaxMembers: 3}
	tr := NewTranscoder(lim, nil, nil)
	cases := map[string]string{
		`{"a": 1, "b": 2, "c": 3}`:                 "",
		`{"a": 1, "b": 2, "c": 3, "d": 4}`:         "more than 3 members",
		`{"a": [1, 2, 3, 4]}`:                      "",
		`{"a": [1, 2, 3, 4, 5]}`:                   "more than 6 values",
		`{"a": {"b": 1, "c": 2, "d": 3, "e": 4}}`:  "more than 3 members",
		`{"a": {"b": "1", "c": "2"}, "d": "3"}`:    "",
		`{"a": {"b": "1", "c": "2"}, "d": [3, 4]}`: "more than 6 values",
	}
	for in, msg := range cases {
		_, perr := Parse([]byte(in), lim)
		_, terr := tr.Object([]byte(in))
		_, _, fast := tr.Fast([]byte(in))
		if msg == "" {
			assert.NoError(t, perr, in)
			assert.NoError(t, terr, in)
			continue
		}
		assert.ErrorContains(t, perr, msg, in)
		assert.ErrorContains(t, terr, msg, in)
		assert.False(t, fast, "Fast must not accept %s", in)
		if strings.Contains(msg, "members") {
			_, err := writeCanonical([]byte(in), lim)
			assert.ErrorContains(t, err, msg, in)
		}
	}
}

// TestDocMemoryFollowsMembersNotValues: hashing the canonical form of a
// document of millions of values allocates next to nothing: the memory of
// a reader is its bytes, not a tree (counted in bytes allocated, not in
// time).
func TestDocMemoryFollowsMembersNotValues(t *testing.T) {
	var b bytes.Buffer
	b.WriteString(`{"extra": [`)
	for i := range 4 << 20 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('0')
	}
	b.WriteString(`], "s": "`)
	b.WriteString(strings.Repeat(`\u00e9x`, 1<<20))
	b.WriteString(`"}`)
	data := b.Bytes()
	h := sha256.New()
	w := bufio.NewWriterSize(h, 32<<10)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	d, err := NewDoc(data, Limits{MaxBytes: 64 << 20, MaxDepth: 64, MaxMembers: 1 << 14})
	require.NoError(t, err)
	_, err = d.WriteCanonical(w, d.Root(), 0)
	require.NoError(t, err)
	runtime.ReadMemStats(&after)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20), "bytes allocated to hash %d bytes of 4M values", len(data))
}

// TestParseSpanTransient: a transient tree is the same tree, however its
// containers nest and however the slab grows while it is read; the next
// transient parse reuses the memory (which is why the caller must be done
// with the first).
func TestParseSpanTransient(t *testing.T) {
	var b strings.Builder
	b.WriteString(`[`)
	for i := range 200 {
		if i > 0 {
			b.WriteString(`, `)
		}
		b.WriteString(`{"a": [1, {"b": "x"}, [true, null]], "c": {"d": {"e": [2, 3]}}, "f": "` + strings.Repeat("y", i) + `"}`)
	}
	b.WriteString(`]`)
	src := []byte(b.String())
	want, err := Parse(src, DefaultLimits)
	require.NoError(t, err)
	d, err := NewDoc(src, DefaultLimits)
	require.NoError(t, err)
	got, err := d.ParseSpanTransient(0, len(src), 0, 0)
	require.NoError(t, err)
	assert.True(t, Equal(want, got))
	assert.Equal(t, string(Canonical(want)), string(Canonical(got)))

	small := []byte(`{"z": [9, 9, 9]}`)
	d2, err := NewDoc(small, DefaultLimits)
	require.NoError(t, err)
	v1, err := d2.ParseSpanTransient(0, len(small), 0, 0)
	require.NoError(t, err)
	assert.Equal(t, `{"z": [9, 9, 9]}`, v1.String())
	// A plain parse after a transient one is its own again.
	v2, _, err := d2.ParseAt(0, 0, 0)
	require.NoError(t, err)
	_, err = d2.ParseSpanTransient(0, len(small), 0, 0)
	require.NoError(t, err)
	assert.Equal(t, `{"z": [9, 9, 9]}`, v2.String())
}

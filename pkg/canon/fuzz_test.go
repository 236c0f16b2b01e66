package canon

import (
	"bytes"
	"testing"
	"unicode/utf8"
)

var fuzzSeeds = []string{
	`{"agent": "b", "entry_hash": "e", "params": {"cmd": "ls", "n": 1}, "prev_hash": "GENESIS", "ts": "t", "verdict": "ALLOW"}`,
	`{"a": -0, "b": 01}`,
	`{"entry_hash": "e", "prev_hash": "p"}`,
	`{"ts": "2026-11-29T18:47:20+00:00", "agent": "agént-🚀", "params": {"cmd": "echo tab\there "}, "prev_hash": "GENESIS", "entry_hash": "6c"}`,
	`{"a": [1, -0, 1.5, 1e16, 1e-5, 12345678901234567890123, true, false, null]}`,
	`{"\u2028": "\u0001\u001f\"\\\/", "x": {"y": {"z": []}}}`,
	`[[[[[[[[[[[[]]]]]]]]]]]]`,
	`{"a": 1, "a": 2}`,
	`{"params": {"b": "x", "a": 1}}`,
	`{"params": {"a": 1, "b": "x"}}`,
	`"\ud83d\ude80"`,
	`NaN`,
	"\xef\xbb\xbf{}",
	`{"k": "\xff"}`,
	`-0.0`,
	`1e400`,
}

// FuzzParse: any input gives a value or an *Error, never a panic; what is
// accepted has a canonical form that parses back to itself, and is valid
// UTF-8.
func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := Parse(data, Limits{MaxBytes: 1 << 20, MaxDepth: 32})
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		c := Canonical(v)
		if !utf8.Valid(c) {
			t.Fatalf("canonical form is not UTF-8: %q", c)
		}
		v2, err := Parse(c, Limits{MaxBytes: 4 << 20, MaxDepth: 32})
		if err != nil {
			t.Fatalf("canonical form %q does not parse: %v", c, err)
		}
		if c2 := Canonical(v2); !bytes.Equal(c, c2) {
			t.Fatalf("canonical form not a fixed point:\n%q\n%q", c, c2)
		}
		// The indented, ordered rendering is the same value.
		v3, err := Parse(AppendIndent(nil, v, "  "), Limits{MaxBytes: 4 << 20, MaxDepth: 32})
		if err != nil || !bytes.Equal(Canonical(v3), c) {
			t.Fatalf("indented form differs: %v", err)
		}
	})
}

// FuzzTranscoder: the one-pass transcoder accepts exactly the objects Parse
// accepts and writes exactly the tree encoder's bytes.
func FuzzTranscoder(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	lim := Limits{MaxBytes: 1 << 20, MaxDepth: 32}
	capture := []string{"prev_hash", "verdict", "params"}
	tr := NewTranscoder(lim, []string{"prev_hash", "entry_hash"}, capture)
	fast := NewTranscoder(lim, []string{"prev_hash", "entry_hash"}, capture)
	f.Fuzz(func(t *testing.T, data []byte) {
		pieces, n, ok := fast.Fast(data)
		got, terr := tr.Object(data)
		if ok {
			if terr != nil {
				t.Fatalf("Fast accepted %q, Object refused it: %v", data, terr)
			}
			if joined := bytes.Join(pieces[:n], nil); !bytes.Equal(joined, got) {
				t.Fatalf("Fast gave\n%q\nObject gave\n%q", joined, got)
			}
			for i := range capture {
				a, b := fast.Captured(i), tr.Captured(i)
				if a.Found != b.Found || a.Kind != b.Kind || !bytes.Equal(a.Str, b.Str) || a.Bool != b.Bool || a.FlatStrings != b.FlatStrings {
					t.Fatalf("capture %d: Fast %+v, Object %+v", i, a, b)
				}
			}
		}
		v, perr := Parse(data, lim)
		if perr == nil && v.Kind() != Object {
			if terr == nil {
				t.Fatalf("transcoder accepted a non-object %q", data)
			}
			return
		}
		if (terr == nil) != (perr == nil) {
			t.Fatalf("disagree on %q: transcoder %v, parser %v", data, terr, perr)
		}
		if perr != nil {
			return
		}
		want := AppendCanonicalWithout(nil, v, "prev_hash", "entry_hash")
		if !bytes.Equal(got, want) {
			t.Fatalf("transcoder wrote\n%q\ntree encoder wrote\n%q", got, want)
		}
		if pv, ok := v.Get("prev_hash"); ok {
			c := tr.Captured(0)
			s, isStr := pv.AsString()
			if !c.Found || c.Kind != pv.Kind() || (isStr && s != string(c.Str)) {
				t.Fatalf("captured prev_hash %+v, want %v", c, pv)
			}
		}
		// FlatStrings is the tree's answer, whatever the members' order.
		if pv, ok := v.Get("params"); ok && pv.Kind() == Object {
			flat := true
			for _, m := range pv.Members() {
				flat = flat && m.Value.Kind() == String
			}
			if c := tr.Captured(2); c.FlatStrings != flat {
				t.Fatalf("params %s: FlatStrings %v, want %v", pv, c.FlatStrings, flat)
			}
		}
	})
}

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
	// Small value and member caps, so that the fuzzer reaches them: the
	// three readers must agree on them too.
	lim := Limits{MaxBytes: 1 << 20, MaxDepth: 32, MaxValues: 64, MaxMembers: 12}
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

// FuzzDoc: the in-place reader accepts exactly what Parse accepts (within
// the same caps) and writes exactly the tree encoder's bytes; Skip and
// Object agree with it; a Transcoder reading an object in place inside a
// document agrees with one reading it alone.
func FuzzDoc(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Add([]byte(`{"b": [1, {"y": 1, "\u0079": 2}], "a": "x"}`))
	f.Add([]byte(`{"a": {"b": 1, "c": 2, "d": 3, "e": 4, "f": 5, "g": 6, "h": 7, "i": 8, "j": 9}}`))
	f.Add([]byte(` [ "\u00e9\n" , 1E2 , -0.0e0 ] `))
	lim := Limits{MaxBytes: 1 << 20, MaxDepth: 12, MaxMembers: 8}
	tr := NewTranscoder(Limits{MaxBytes: 1 << 20, MaxDepth: 12, MaxMembers: 8}, []string{"prev_hash", "entry_hash"}, []string{"prev_hash", "params"})
	tr.KeepFull()
	alone := NewTranscoder(Limits{MaxBytes: 1 << 20, MaxDepth: 11, MaxMembers: 8}, []string{"prev_hash", "entry_hash"}, []string{"prev_hash", "params"})
	f.Fuzz(func(t *testing.T, data []byte) {
		v, perr := Parse(data, lim)
		got, werr := writeCanonical(data, lim)
		if (perr == nil) != (werr == nil) {
			t.Fatalf("disagree on %q: WriteCanonical %v, Parse %v", data, werr, perr)
		}
		if werr != nil {
			if _, ok := werr.(*Error); !ok {
				t.Fatalf("error of type %T: %v", werr, werr)
			}
		}
		d, derr := NewDoc(data, lim)
		if derr == nil {
			end, serr := d.Skip(d.Root(), 0)
			if serr == nil {
				serr = d.End(end)
			}
			if (serr == nil) != (perr == nil) {
				t.Fatalf("disagree on %q: Skip %v, Parse %v", data, serr, perr)
			}
		}
		if perr != nil {
			return
		}
		if want := Canonical(v); !bytes.Equal(got, want) {
			t.Fatalf("WriteCanonical wrote\n%q\ntree encoder wrote\n%q", got, want)
		}
		if v.Kind() != Object {
			return
		}
		fs, _, err := d.Object(d.Root(), 0)
		if err != nil {
			t.Fatalf("Object refused what Parse accepted: %v", err)
		}
		for i, m := range fs {
			if i > 0 && fs[i-1].Key >= m.Key {
				t.Fatalf("Object's members not in key order: %q, %q", fs[i-1].Key, m.Key)
			}
			mv, ok := v.Get(m.Key)
			pv, _, err := d.ParseAt(m.At, 1, 0)
			if !ok || err != nil || !Equal(mv, pv) {
				t.Fatalf("member %q: tree %v, in place %v (%v)", m.Key, mv, pv, err)
			}
		}
		// The object in place, one level down, as a receipt's entry is.
		wrapped := append(append([]byte("[ "), data...), " ]"...)
		wd, err := NewDoc(wrapped, lim)
		if err != nil {
			t.Fatal(err)
		}
		out, end, err := tr.ObjectAt(wd, 2+d.Root(), 1)
		want, aerr := alone.Object(data)
		if (err == nil) != (aerr == nil) {
			t.Fatalf("ObjectAt %v, Object %v on %q", err, aerr, data)
		}
		if err != nil {
			return
		}
		if !bytes.Equal(out, want) || !bytes.Equal(tr.Full(), Canonical(v)) {
			t.Fatalf("ObjectAt wrote %q / %q, want %q / %q", out, tr.Full(), want, Canonical(v))
		}
		if rest := bytes.TrimSpace(wrapped[end:]); string(rest) != "]" {
			t.Fatalf("ObjectAt ended at %d in %q", end, wrapped)
		}
	})
}

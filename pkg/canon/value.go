// Package canon is the canonical JSON form that every Deponent hash is
// computed over, and a strict JSON reader to go with it.
//
// # The form
//
// The canonical form C(v) is what the Python reference produces with
// json.dumps(v, sort_keys=True, ensure_ascii=False), encoded as UTF-8:
//
//   - objects: members sorted by key in code-point order, written
//     {"k": v, "k2": v2} with ", " and ": " as separators; {} when empty;
//   - arrays: [a, b] with ", " as separator; [] when empty;
//   - strings: '"' and '\' escaped, \n \r \t \b \f as two-character escapes,
//     every other U+0000..U+001F as \u00XX with lowercase hex, everything else
//     (U+007F, U+2028, U+2029, '<', '>', '&', '/', any non-ASCII) written raw;
//   - integers: decimal digits of any size, no float64 round-trip, -0 is 0;
//   - floats: Python's repr of the IEEE-754 double (1.5, 1e+16, 1e-05,
//     123456789.0, -0.0);
//   - true, false, null.
//
// Go's encoding/json is not this form: it escapes U+2028, U+2029 and the
// HTML characters and writes no spaces. Nothing in Deponent hashes its output.
//
// # The reader
//
// Parse accepts exactly RFC 8259 JSON and rejects, with the byte offset, line
// and column of the fault: invalid UTF-8 (anywhere), a byte-order mark, lone
// UTF-16 surrogates in \u escapes, raw control characters in strings, NaN and
// Infinity (which are not JSON), numbers that overflow a double, integers of
// more than MaxIntDigits digits, duplicate keys in an object (readers disagree
// on which value counts, so a signed body with two values is ambiguous),
// nesting deeper than the depth cap, input larger than the size cap, more
// values than the value cap, an object with more members than the member
// cap, and trailing data. It never panics on any input; the fuzz tests hold
// it to that.
//
// # Bounded memory
//
// A tree costs memory per value, not per byte: "[0,0,0,…]" holds a value
// every two bytes and each costs tens of bytes, so 64 MiB of it would be
// gigabytes as a tree. Limits.MaxValues bounds a tree by what it holds.
// Three readers hold no tree at all and share Parse's rules exactly (the
// fuzz tests compare them with it):
//
//   - Transcoder: one object to its canonical form in one pass (a ledger
//     line, or a receipt's entry in place), its output bounded by its own
//     byte cap.
//   - Doc: a whole document in place. Doc.WriteCanonical streams C(v) to a
//     writer (a hash) holding only the members of the objects it is inside
//     (MaxMembers each, MaxDepth deep); Doc.Object, Doc.Array and
//     Doc.ParseAt let a reader look at the few parts it needs.
//
// The price of holding nothing is time: an object is read once to find its
// members and again to write them in key order, so writing C(v) reads each
// byte once per object around it (at most MaxDepth times).
//
// # What this package does not do
//
// It does not decide what a receipt or ledger entry must contain; that is the
// kernel's schema check. It does not sign anything: a hash over C(v) proves
// that v is unchanged since the hash was taken, not who took it.
package canon

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Kind is the JSON type of a Value.
type Kind uint8

// The JSON kinds.
const (
	Null Kind = iota
	Bool
	Number
	String
	Array
	Object
)

func (k Kind) String() string {
	switch k {
	case Null:
		return "null"
	case Bool:
		return "boolean"
	case Number:
		return "number"
	case String:
		return "string"
	case Array:
		return "array"
	case Object:
		return "object"
	}
	return "invalid"
}

// Value is an immutable JSON value that keeps what the canonical form needs:
// integers as exact decimal text, floats already rendered as Python's repr,
// object members in their original order (the encoder sorts them).
type Value struct {
	kind  Kind
	b     bool
	float bool     // Number: a float (Python float), not an integer
	s     string   // String: the text; Number: the canonical text
	arr   []Value  // Array
	obj   []Member // Object
}

// Member is one key/value pair of an object.
type Member struct {
	Key   string
	Value Value
}

// NullValue returns JSON null.
func NullValue() Value { return Value{kind: Null} }

// BoolValue returns true or false.
func BoolValue(b bool) Value { return Value{kind: Bool, b: b} }

// Str returns a string value. Invalid UTF-8 in s is replaced by U+FFFD so
// that every Value encodes to valid UTF-8 (the reference could not hash it
// otherwise).
func Str(s string) Value {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	return Value{kind: String, s: s}
}

// Int returns an integer value.
func Int(i int64) Value { return Value{kind: Number, s: strconv.FormatInt(i, 10)} }

// BigInt returns an integer value of any size.
func BigInt(i *big.Int) Value { return Value{kind: Number, s: i.String()} }

// Float returns a float value rendered as Python's repr. NaN and the
// infinities are not JSON and are refused.
func Float(f float64) (Value, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return Value{}, fmt.Errorf("canon: %v is not a JSON number", f)
	}
	return Value{kind: Number, float: true, s: pyFloatRepr(f)}, nil
}

// Arr returns an array of the given values.
func Arr(vs ...Value) Value { return Value{kind: Array, arr: vs} }

// Obj returns an object with the given members, in the given order. A
// duplicate key is a programming error and panics: a Value with two members
// of the same name has no canonical form. Values read by Parse never hold one.
func Obj(ms ...Member) Value {
	for i := range ms {
		for j := i + 1; j < len(ms); j++ {
			if ms[i].Key == ms[j].Key {
				panic("canon: duplicate key " + strconv.Quote(ms[i].Key))
			}
		}
	}
	for i := range ms {
		if !utf8.ValidString(ms[i].Key) {
			ms[i].Key = strings.ToValidUTF8(ms[i].Key, "\uFFFD")
		}
	}
	return Value{kind: Object, obj: ms}
}

// M is shorthand for a Member.
func M(key string, v Value) Member { return Member{Key: key, Value: v} }

// Kind reports the JSON type.
func (v Value) Kind() Kind { return v.kind }

// IsFloat reports whether a Number is a float (as opposed to an integer).
func (v Value) IsFloat() bool { return v.kind == Number && v.float }

// AsString returns the text of a String.
func (v Value) AsString() (string, bool) { return v.s, v.kind == String }

// AsBool returns the value of a Bool.
func (v Value) AsBool() (bool, bool) { return v.b, v.kind == Bool }

// NumberText returns the canonical text of a Number.
func (v Value) NumberText() (string, bool) { return v.s, v.kind == Number }

// AsInt64 returns an integer Number that fits in an int64.
func (v Value) AsInt64() (int64, bool) {
	if v.kind != Number || v.float {
		return 0, false
	}
	i, err := strconv.ParseInt(v.s, 10, 64)
	return i, err == nil
}

// Elems returns the elements of an Array (nil for other kinds). The slice is
// shared: do not modify it.
func (v Value) Elems() []Value { return v.arr }

// Members returns the members of an Object in their original order (nil for
// other kinds). The slice is shared: do not modify it.
func (v Value) Members() []Member { return v.obj }

// Get returns the member of an Object named key.
func (v Value) Get(key string) (Value, bool) {
	for i := range v.obj {
		if v.obj[i].Key == key {
			return v.obj[i].Value, true
		}
	}
	return Value{}, false
}

// Without returns a copy of an Object without the members named in keys.
func (v Value) Without(keys ...string) Value {
	out := make([]Member, 0, len(v.obj))
next:
	for _, m := range v.obj {
		for _, k := range keys {
			if m.Key == k {
				continue next
			}
		}
		out = append(out, m)
	}
	return Value{kind: Object, obj: out}
}

// With returns a copy of an Object with key set to val: replaced in place if
// present, appended otherwise.
func (v Value) With(key string, val Value) Value {
	out := make([]Member, 0, len(v.obj)+1)
	found := false
	for _, m := range v.obj {
		if m.Key == key {
			m.Value = val
			found = true
		}
		out = append(out, m)
	}
	if !found {
		out = append(out, Member{Key: key, Value: val})
	}
	return Obj(out...)
}

// Equal reports whether two values have the same canonical form.
func Equal(a, b Value) bool {
	return string(Canonical(a)) == string(Canonical(b))
}

// String returns the canonical form, for messages and debugging.
func (v Value) String() string { return string(Canonical(v)) }

package canon

import (
	"bytes"
	"encoding/binary"
	"slices"
	"unicode/utf8"
)

// Transcoder turns one JSON object into its canonical form in a single pass,
// without building a tree: the ledger verifier's hot path. It applies exactly
// the rules of Parse (it rejects what Parse rejects) and writes exactly what
// AppendCanonical would write for the parsed value.
//
// Named top-level members can be omitted from the output (prev_hash and
// entry_hash are not part of an entry's payload) and named top-level members
// can be captured (their kind, and for strings their decoded text).
//
// A Transcoder reuses its buffers; it is not safe for concurrent use. Slices
// it returns are valid until the next call.
type Transcoder struct {
	s      scanner
	lim0   Limits         // the limits it was made with
	lookup map[string]int // top-level keys to capture or omit (see lookupOmit)
	got    []Captured
	idx    []int // sort order of an object's members

	out  []byte   // canonical texts of members as they are read
	tmp  []byte   // an object's members reassembled in order; the result, for the top level
	keys []byte   // decoded keys of the members on mem
	mem  []member // members of the objects being read, innermost last
	str  []byte   // decoded text of captured strings

	nonString int // values directly inside the current top-level member that are not strings
	values    int // values read in this object, against lim.MaxValues
	base      int // nesting depth of the object being transcoded (0 for a line of its own)

	// full, when kept (KeepFull), is the canonical form with every member,
	// the omitted ones included.
	full     []byte
	keepFull bool

	// The top-level key sequence of the last object transcoded, its
	// lookup flags and its sorted order. Ledger lines from one writer share
	// their key order, so most lines skip the sort and the lookups.
	tplKeys  []byte
	tplEnds  []int
	tplFlags []int
	tplOrder []int
	tplHit   bool  // the current object matches the template so far
	flags    []int // lookup flags of the current top-level members

	// The same, for Fast: keys of the last line it accepted and their flags.
	fastKeys     [][]byte
	fastFlags    []int
	fastCur      [][]byte // keys of the line being read
	fastCurFlags []int    // and their flags
}

// Captured is a top-level member a Transcoder was asked to keep.
type Captured struct {
	Found bool
	Kind  Kind
	Str   []byte // decoded text, for strings
	Bool  bool   // value, for booleans
	// FlatStrings, for objects: every member's value is a string (the
	// shape of an entry's params).
	FlatStrings bool
}

type member struct {
	pfx              uint64 // first 8 bytes of the decoded key, big-endian: most comparisons end here
	keyStart, keyEnd int    // in keys
	start, end       int    // canonical "key": value in out
	off              int    // source offset of the key
	omit             bool   // left out of the output
}

// Flags of a top-level key in Transcoder.lookup: capture index + 1 in the
// low bits, and whether the member is omitted.
const lookupOmit = 1 << 30

// KeepFull makes Object and ObjectAt keep, beside the canonical form
// without the omitted members, the canonical form of the whole object
// (Full): a receipt's content hash covers each entry whole.
func (t *Transcoder) KeepFull() { t.keepFull = true }

// Full returns the canonical form of the whole object of the last Object
// or ObjectAt call, when KeepFull was called.
func (t *Transcoder) Full() []byte { return t.full }

// NewTranscoder returns a Transcoder that omits and captures the named
// top-level members.
func NewTranscoder(lim Limits, omit, capture []string) *Transcoder {
	lookup := map[string]int{}
	for i, k := range capture {
		lookup[k] = i + 1
	}
	for _, k := range omit {
		lookup[k] |= lookupOmit
	}
	return &Transcoder{s: scanner{lim: lim}, lim0: lim, lookup: lookup, got: make([]Captured, len(capture))}
}

// Object transcodes src, which must hold one JSON object, and returns its
// canonical form without the omitted members.
func (t *Transcoder) Object(src []byte) ([]byte, error) {
	t.reset(src, 0, 0)
	if t.s.lim.MaxBytes > 0 && len(src) > t.s.lim.MaxBytes {
		return nil, t.s.errf(0, "input is %d bytes, over the %d-byte cap", len(src), t.s.lim.MaxBytes)
	}
	if err := t.s.checkStart(); err != nil {
		return nil, err
	}
	t.s.skipWS()
	if t.s.pos >= len(src) || src[t.s.pos] != '{' {
		return nil, t.s.errf(t.s.pos, "expected a JSON object, found %s", t.s.describe(t.s.pos))
	}
	if err := t.object(true); err != nil {
		return nil, err
	}
	if err := t.s.end(); err != nil {
		return nil, err
	}
	return t.tmp, nil
}

// ObjectAt transcodes the object at offset off of the document d, which
// sits inside depth arrays and objects (d's depth cap counts them), and
// returns its canonical form without the omitted members and the offset
// just after it. The object may take at most the Transcoder's MaxBytes of
// d; errors are positioned in d. This is how a receipt's entries are read
// in place, as a ledger's lines are.
func (t *Transcoder) ObjectAt(d *Doc, off, depth int) (out []byte, end int, err error) {
	data := d.data
	if lim := t.s.lim.MaxBytes; lim > 0 && len(data)-off > lim {
		data = data[:off+lim]
	}
	t.reset(data, off, depth)
	if max := d.lim.MaxDepth; max > 0 && (t.s.lim.MaxDepth == 0 || max < t.s.lim.MaxDepth) {
		t.s.lim.MaxDepth = max // the document's cap counts from its root
	}
	if off >= len(data) || data[off] != '{' {
		return nil, 0, t.s.errf(off, "expected a JSON object, found %s", t.s.describe(off))
	}
	if err := t.object(true); err != nil {
		if len(data) < len(d.data) {
			// Cut at the cap: was the object simply longer? Read it in
			// full (keeping nothing) to tell that from a fault inside.
			s := d.scanner(off, depth)
			if skip(&s) == nil && s.pos > len(data) {
				return nil, 0, newError(d.data, off, "object is longer than the %d-byte cap", t.s.lim.MaxBytes)
			}
		}
		return nil, 0, err
	}
	return t.tmp, t.s.pos, nil
}

// Release drops every reference to the last input (the captures point
// into it): a Transcoder kept for later does not keep a document alive.
func (t *Transcoder) Release() {
	t.s.data = nil
	for i := range t.got {
		t.got[i] = Captured{}
	}
}

// reset starts reading src at off, inside depth containers.
func (t *Transcoder) reset(src []byte, off, depth int) {
	t.s = scanner{data: src, pos: off, depth: depth, lim: t.lim0, buf: t.s.buf}
	t.base, t.values = depth, 0
	t.out, t.tmp, t.keys, t.mem, t.str, t.full = t.out[:0], t.tmp[:0], t.keys[:0], t.mem[:0], t.str[:0], t.full[:0]
	for i := range t.got {
		t.got[i] = Captured{}
	}
}

// Captured returns the i-th captured member of the last Object call.
func (t *Transcoder) Captured(i int) Captured { return t.got[i] }

func (t *Transcoder) value() error {
	s := &t.s
	s.skipWS()
	if s.pos >= len(s.data) {
		return s.errf(s.pos, "unexpected end of input: expected a JSON value")
	}
	if err := s.count(&t.values); err != nil {
		return err
	}
	if s.depth == t.base+2 && s.data[s.pos] != '"' {
		t.nonString++
	}
	switch c := s.data[s.pos]; {
	case c == '{':
		return t.object(false)
	case c == '[':
		return t.array()
	case c == '"':
		return t.string()
	case c == 't':
		t.out = append(t.out, "true"...)
		return s.literal("true")
	case c == 'f':
		t.out = append(t.out, "false"...)
		return s.literal("false")
	case c == 'n':
		t.out = append(t.out, "null"...)
		return s.literal("null")
	case c == 'N' && bytes.HasPrefix(s.data[s.pos:], []byte("NaN")):
		return s.errf(s.pos, "NaN is not JSON")
	case c == 'I' && bytes.HasPrefix(s.data[s.pos:], []byte("Infinity")):
		return s.errf(s.pos, "Infinity is not JSON")
	case c == '-' || (c >= '0' && c <= '9'):
		start := s.pos
		lit, err := s.number()
		if err != nil {
			return err
		}
		var msg string
		t.out, msg = appendCanonicalNumber(t.out, lit)
		if msg != "" {
			return s.errf(start, "%s", msg)
		}
		return nil
	}
	return s.errf(s.pos, "expected a JSON value, found %s", s.describe(s.pos))
}

func (t *Transcoder) string() error {
	start, end, esc, err := t.s.stringSpan()
	if err != nil {
		return err
	}
	t.out = append(t.out, '"')
	if esc {
		t.s.buf = appendDecoded(t.s.buf[:0], t.s.data[start:end])
		t.out = appendValidString(t.out, t.s.buf)
	} else {
		// Without escapes the raw text is already canonical: stringSpan
		// refused control characters, and '"' and '\' cannot occur.
		t.out = append(t.out, t.s.data[start:end]...)
	}
	t.out = append(t.out, '"')
	return nil
}

func (t *Transcoder) array() error {
	s := &t.s
	if err := s.enter(); err != nil {
		return err
	}
	s.pos++
	t.out = append(t.out, '[')
	s.skipWS()
	if s.pos < len(s.data) && s.data[s.pos] == ']' {
		s.pos++
		s.depth--
		t.out = append(t.out, ']')
		return nil
	}
	for {
		if err := t.value(); err != nil {
			return err
		}
		s.skipWS()
		if s.pos >= len(s.data) {
			return s.errf(s.pos, "unexpected end of input in array: expected ',' or ']'")
		}
		switch s.data[s.pos] {
		case ',':
			s.pos++
			t.out = append(t.out, ',', ' ')
		case ']':
			s.pos++
			s.depth--
			t.out = append(t.out, ']')
			return nil
		default:
			return s.errf(s.pos, "expected ',' or ']' in array, found %s", s.describe(s.pos))
		}
	}
}

// object writes the members' canonical texts one after the other, then, at
// the closing brace, sorts them by decoded key, refuses duplicates and
// rewrites the region as {m1, m2, ...}.
func (t *Transcoder) object(top bool) error {
	s := &t.s
	if top {
		// The object itself is a value (value() counts the rest).
		if err := s.count(&t.values); err != nil {
			return err
		}
	}
	if err := s.enter(); err != nil {
		return err
	}
	s.pos++
	base, keysBase, objStart := len(t.mem), len(t.keys), len(t.out)
	if top {
		t.tplHit = t.tplOrder != nil
		t.flags = t.flags[:0]
	}
	s.skipWS()
	if s.pos < len(s.data) && s.data[s.pos] == '}' {
		s.pos++
		s.depth--
		if top {
			t.tmp = append(t.tmp[:0], '{', '}')
			t.full = append(t.full[:0], '{', '}')
		} else {
			t.out = append(t.out, '{', '}')
		}
		return nil
	}
	for {
		s.skipWS()
		if s.pos >= len(s.data) || s.data[s.pos] != '"' {
			return s.errf(s.pos, "expected a string key in object, found %s", s.describe(s.pos))
		}
		keyOff := s.pos
		if err := s.member(keyOff, len(t.mem)-base); err != nil {
			return err
		}
		ks, ke, esc, err := s.stringSpan()
		if err != nil {
			return err
		}
		keyStart := len(t.keys)
		if esc {
			t.keys = appendDecoded(t.keys, s.data[ks:ke])
		} else {
			t.keys = append(t.keys, s.data[ks:ke]...)
		}
		key := t.keys[keyStart:]
		s.skipWS()
		if s.pos >= len(s.data) || s.data[s.pos] != ':' {
			return s.errf(s.pos, "expected ':' after key %q, found %s", key, s.describe(s.pos))
		}
		s.pos++
		start := len(t.out)
		t.out = append(t.out, '"')
		if esc {
			t.out = appendValidString(t.out, key)
		} else {
			t.out = append(t.out, key...) // raw text without escapes is canonical
		}
		t.out = append(t.out, '"', ':', ' ')
		valStart := len(t.out)
		if top {
			// Counted over the whole of this member's value: a nested
			// object's members must not reset it, or the answer would be
			// the last member's alone (and depend on the members' order).
			t.nonString = 0
		}
		if err := t.value(); err != nil {
			return err
		}
		m := member{pfx: keyPrefix(key), keyStart: keyStart, keyEnd: len(t.keys), start: start, end: len(t.out), off: keyOff}
		if top {
			f := t.topFlags(len(t.mem)-base, key)
			if f&^lookupOmit > 0 {
				t.capture(f&^lookupOmit-1, valStart)
			}
			m.omit = f&lookupOmit != 0
		}
		t.mem = append(t.mem, m)
		s.skipWS()
		if s.pos >= len(s.data) {
			return s.errf(s.pos, "unexpected end of input in object: expected ',' or '}'")
		}
		switch s.data[s.pos] {
		case ',':
			s.pos++
		case '}':
			s.pos++
			s.depth--
			err := t.closeObject(base, keysBase, objStart, top)
			t.mem, t.keys = t.mem[:base], t.keys[:keysBase]
			return err
		default:
			return s.errf(s.pos, "expected ',' or '}' in object, found %s", s.describe(s.pos))
		}
	}
}

// topFlags returns the lookup flags of the top-level member at position p,
// from the template while the key sequence matches it.
func (t *Transcoder) topFlags(p int, key []byte) int {
	var f int
	if t.tplHit && p < len(t.tplEnds) && bytes.Equal(key, t.tplKey(p)) {
		f = t.tplFlags[p]
	} else {
		t.tplHit = false
		f = t.lookup[string(key)]
	}
	t.flags = append(t.flags, f)
	return f
}

func (t *Transcoder) tplKey(p int) []byte {
	start := 0
	if p > 0 {
		start = t.tplEnds[p-1]
	}
	return t.tplKeys[start:t.tplEnds[p]]
}

// capture records captured member i, whose canonical value starts at
// valStart in the output.
func (t *Transcoder) capture(i, valStart int) {
	c := Captured{Found: true}
	v := t.out[valStart:]
	switch v[0] {
	case '"':
		c.Kind = String
		text := v[1 : len(v)-1 : len(v)-1]
		if bytes.IndexByte(text, '\\') < 0 {
			// The canonical text is the decoded text; it stays where it is
			// until the next call (top-level texts are never moved).
			c.Str = text
		} else {
			strStart := len(t.str)
			t.str = appendDecoded(t.str, text)
			c.Str = t.str[strStart:len(t.str):len(t.str)]
		}
	case '{':
		c.Kind = Object
		c.FlatStrings = t.nonString == 0
	case '[':
		c.Kind = Array
	case 't':
		c.Kind, c.Bool = Bool, true
	case 'f':
		c.Kind = Bool
	case 'n':
		c.Kind = Null
	default:
		c.Kind = Number
	}
	t.got[i] = c
}

func keyPrefix(k []byte) uint64 {
	var b [8]byte
	copy(b[:], k)
	return binary.BigEndian.Uint64(b[:])
}

func (t *Transcoder) less(a, b *member) bool {
	if a.pfx != b.pfx {
		return a.pfx < b.pfx
	}
	return bytes.Compare(t.keys[a.keyStart:a.keyEnd], t.keys[b.keyStart:b.keyEnd]) < 0
}

// closeObject puts an object's members in key order, refuses duplicates,
// and writes {m1, m2, ...}: into t.tmp for the top level (the result), back
// over the members' texts in t.out for nested objects.
func (t *Transcoder) closeObject(base, keysBase, objStart int, top bool) error {
	ms := t.mem[base:]
	if top && t.tplHit && len(ms) == len(t.tplEnds) {
		// Same keys in the same order as the template: same sorted order,
		// and no duplicates.
		t.idx = append(t.idx[:0], t.tplOrder...)
	} else if err := t.sortMembers(ms); err != nil {
		return err
	} else if top {
		t.saveTemplate(ms, keysBase)
	}
	if top && t.keepFull {
		t.full = append(t.full[:0], '{')
		for n, i := range t.idx {
			if n > 0 {
				t.full = append(t.full, ',', ' ')
			}
			t.full = append(t.full, t.out[ms[i].start:ms[i].end]...)
		}
		t.full = append(t.full, '}')
	}
	t.tmp = append(t.tmp[:0], '{')
	n := 0
	for _, i := range t.idx {
		m := &ms[i]
		if m.omit {
			continue
		}
		if n > 0 {
			t.tmp = append(t.tmp, ',', ' ')
		}
		t.tmp = append(t.tmp, t.out[m.start:m.end]...)
		n++
	}
	t.tmp = append(t.tmp, '}')
	if !top {
		t.out = append(t.out[:objStart], t.tmp...)
	}
	return nil
}

// sortMembers leaves in t.idx the members' indices in key order.
func (t *Transcoder) sortMembers(ms []member) error {
	t.idx = t.idx[:0]
	sorted := true
	for i := range ms {
		t.idx = append(t.idx, i)
		if i > 0 && !t.less(&ms[i-1], &ms[i]) {
			sorted = false
		}
	}
	if sorted {
		return nil
	}
	idx := t.idx
	if len(idx) <= 32 {
		// Insertion sort of small indices: allocates nothing.
		for i := 1; i < len(idx); i++ {
			for j := i; j > 0 && t.less(&ms[idx[j]], &ms[idx[j-1]]); j-- {
				idx[j], idx[j-1] = idx[j-1], idx[j]
			}
		}
	} else {
		slices.SortFunc(idx, func(a, b int) int {
			return bytes.Compare(t.keys[ms[a].keyStart:ms[a].keyEnd], t.keys[ms[b].keyStart:ms[b].keyEnd])
		})
	}
	for i := 1; i < len(idx); i++ {
		a, b := &ms[idx[i-1]], &ms[idx[i]]
		if a.pfx == b.pfx && bytes.Equal(t.keys[a.keyStart:a.keyEnd], t.keys[b.keyStart:b.keyEnd]) {
			return t.s.errf(max(a.off, b.off), "duplicate key %q in object", t.keys[b.keyStart:b.keyEnd])
		}
	}
	return nil
}

func (t *Transcoder) saveTemplate(ms []member, keysBase int) {
	t.tplKeys = append(t.tplKeys[:0], t.keys[keysBase:]...)
	t.tplEnds = t.tplEnds[:0]
	for _, m := range ms {
		t.tplEnds = append(t.tplEnds, m.keyEnd-keysBase)
	}
	t.tplFlags = append(t.tplFlags[:0], t.flags...)
	t.tplOrder = append(t.tplOrder[:0], t.idx...)
}

// appendValidString escapes valid UTF-8 text canonically (without quotes).
func appendValidString(dst, s []byte) []byte {
	start := 0
	for i, c := range s {
		if c < 0x20 || c == '"' || c == '\\' {
			dst = append(dst, s[start:i]...)
			dst = appendEscape(dst, c)
			start = i + 1
		}
	}
	return append(dst, s[start:]...)
}

// Fast returns the canonical form of src without copying it, when src is
// already written the way this package writes a ledger entry: one object on
// one line in canonical form (members in key order, ", " and ": " as the
// only separators, strings without escapes, integers, and objects of such
// members one level down). The result is src with the omitted members cut
// out, as up to three pieces. Captures are filled as by Object.
//
// ok=false means only "not in that shape": the caller must then use
// Object, which accepts any JSON and says what is wrong with bad input.
// Fast never accepts what Object would refuse, and when it accepts, the
// pieces joined are exactly what Object returns (the fuzz tests hold it to
// both).
func (t *Transcoder) Fast(src []byte) (pieces [3][]byte, n int, ok bool) {
	for i := range t.got {
		t.got[i] = Captured{}
	}
	t.str = t.str[:0]
	if len(src) < 2 || src[0] != '{' || (t.s.lim.MaxBytes > 0 && len(src) > t.s.lim.MaxBytes) {
		return pieces, 0, false
	}
	var cuts [2][2]int // byte ranges of omitted members, with one separator
	nCuts := 0
	vals := 1 // the object itself
	t.fastCur, t.fastCurFlags = t.fastCur[:0], t.fastCurFlags[:0]
	match := true
	var prevKey []byte
	i := 1
	if src[i] == '}' {
		if len(src) != 2 {
			return pieces, 0, false
		}
		pieces[0] = src
		return pieces, 1, true
	}
	for {
		start := i
		key, j, ok := fastString(src, i)
		if !ok || (prevKey != nil && bytes.Compare(prevKey, key) >= 0) {
			return pieces, 0, false
		}
		prevKey = key
		if j+2 > len(src) || src[j] != ':' || src[j+1] != ' ' {
			return pieces, 0, false
		}
		i = j + 2
		valStart := i
		var flat bool
		i, flat, ok = fastValue(src, i, 1, &vals, t.s.lim.MaxMembers)
		if !ok || (t.s.lim.MaxValues > 0 && vals > t.s.lim.MaxValues) || (t.s.lim.MaxMembers > 0 && len(t.fastCur) >= t.s.lim.MaxMembers) {
			return pieces, 0, false
		}
		// Flags depend on the key only: take them from the last line's
		// template while this line's keys match it, position by position.
		p := len(t.fastCur)
		var f int
		if match && p < len(t.fastKeys) && bytes.Equal(key, t.fastKeys[p]) {
			f = t.fastFlags[p]
		} else {
			match = false
			f = t.lookup[string(key)]
		}
		t.fastCur = append(t.fastCur, key)
		t.fastCurFlags = append(t.fastCurFlags, f)
		if f&^lookupOmit > 0 {
			t.fastCapture(f&^lookupOmit-1, src[valStart:i], flat)
		}
		if i >= len(src) {
			return pieces, 0, false
		}
		last := src[i] == '}'
		if f&lookupOmit != 0 {
			if last || nCuts == 2 {
				return pieces, 0, false // keep the cutting simple; Object handles the rest
			}
			cuts[nCuts] = [2]int{start, i + 2}
			nCuts++
		}
		if last {
			if i+1 != len(src) {
				return pieces, 0, false
			}
			break
		}
		if i+2 >= len(src) || src[i] != ',' || src[i+1] != ' ' {
			return pieces, 0, false
		}
		i += 2
	}
	// Remember this line's keys (copied: they point into src) for the next
	// line, which most likely has the same.
	if !match || len(t.fastCur) != len(t.fastKeys) {
		t.fastKeys = t.fastKeys[:0]
		for _, k := range t.fastCur {
			t.fastKeys = append(t.fastKeys, append([]byte(nil), k...))
		}
		t.fastFlags = append(t.fastFlags[:0], t.fastCurFlags...)
	}
	from := 0
	for _, c := range cuts[:nCuts] {
		pieces[n] = src[from:c[0]]
		n++
		from = c[1]
	}
	pieces[n] = src[from:]
	n++
	return pieces, n, true
}

// fastString reads a string without escapes at src[i] == '"' and returns its
// text and the index after it.
func fastString(src []byte, i int) ([]byte, int, bool) {
	if i >= len(src) || src[i] != '"' {
		return nil, 0, false
	}
	i++
	start := i
	for {
		for i+8 <= len(src) && !special8(binary.LittleEndian.Uint64(src[i:])) {
			i += 8
		}
		for i < len(src) && plainASCII[src[i]] {
			i++
		}
		if i >= len(src) {
			return nil, 0, false
		}
		c := src[i]
		switch {
		case c == '"':
			return src[start:i], i + 1, true
		case c >= 0x80:
			r, size := utf8.DecodeRune(src[i:])
			if r == utf8.RuneError && size <= 1 {
				return nil, 0, false
			}
			i += size
		default: // '\\' or a control character
			return nil, 0, false
		}
	}
}

// fastValue reads a value in canonical shape at src[i] and returns the index
// after it; flat reports an object whose values are all strings.
func fastValue(src []byte, i, depth int, vals *int, maxMembers int) (int, bool, bool) {
	if i >= len(src) {
		return 0, false, false
	}
	*vals++
	switch c := src[i]; {
	case c == '"':
		_, j, ok := fastString(src, i)
		return j, false, ok
	case c == '-' || (c >= '0' && c <= '9'):
		j := i
		if c == '-' {
			j++
		}
		if j >= len(src) || src[j] < '0' || src[j] > '9' || (src[j] == '0' && c == '-') {
			return 0, false, false
		}
		if src[j] == '0' {
			j++
		} else {
			for j < len(src) && src[j] >= '0' && src[j] <= '9' {
				j++
			}
		}
		if j-i > 20 || (j < len(src) && (src[j] == '.' || src[j] == 'e' || src[j] == 'E' || (src[j] >= '0' && src[j] <= '9'))) {
			return 0, false, false // floats, long or malformed numbers: not this shape
		}
		return j, false, true
	case c == 't' && bytes.HasPrefix(src[i:], []byte("true")):
		return i + 4, false, true
	case c == 'f' && bytes.HasPrefix(src[i:], []byte("false")):
		return i + 5, false, true
	case c == 'n' && bytes.HasPrefix(src[i:], []byte("null")):
		return i + 4, false, true
	case c == '{' && depth == 1:
		return fastFlatObject(src, i, vals, maxMembers)
	}
	return 0, false, false
}

// fastFlatObject reads a nested object of string-keyed members in key order
// whose values are strings or integers.
func fastFlatObject(src []byte, i int, vals *int, maxMembers int) (int, bool, bool) {
	i++
	members := 0
	if i < len(src) && src[i] == '}' {
		return i + 1, true, true
	}
	flat := true
	var prevKey []byte
	for {
		key, j, ok := fastString(src, i)
		if !ok || (prevKey != nil && bytes.Compare(prevKey, key) >= 0) {
			return 0, false, false
		}
		if members++; maxMembers > 0 && members > maxMembers {
			return 0, false, false
		}
		prevKey = key
		if j+2 > len(src) || src[j] != ':' || src[j+1] != ' ' {
			return 0, false, false
		}
		i = j + 2
		if i < len(src) && src[i] != '"' {
			flat = false
		}
		i, _, ok = fastValue(src, i, 2, vals, maxMembers)
		if !ok || i >= len(src) {
			return 0, false, false
		}
		if src[i] == '}' {
			return i + 1, flat, true
		}
		if i+2 >= len(src) || src[i] != ',' || src[i+1] != ' ' {
			return 0, false, false
		}
		i += 2
	}
}

func (t *Transcoder) fastCapture(i int, v []byte, flat bool) {
	c := Captured{Found: true}
	switch v[0] {
	case '"':
		c.Kind, c.Str = String, v[1:len(v)-1:len(v)-1]
	case '{':
		c.Kind, c.FlatStrings = Object, flat
	case 't':
		c.Kind, c.Bool = Bool, true
	case 'f':
		c.Kind = Bool
	case 'n':
		c.Kind = Null
	default:
		c.Kind = Number
	}
	t.got[i] = c
}

package canon

import (
	"bufio"
	"bytes"
	"fmt"
	"slices"
	"unicode/utf16"
	"unicode/utf8"
)

// Doc reads one JSON document in place, value by value, without building a
// tree of it: a reader that must hash a whole document in canonical form
// (a receipt's content hash) and look closely at only a few of its parts
// holds the bytes, the members of the objects it is inside, and the parts
// it asks for as trees (ParseAt), never a tree of the whole. Memory is
// then bounded by the bytes, MaxDepth and MaxMembers, whatever the values
// of the document: "[0,0,0,…]" costs nothing beyond its bytes.
//
// Every method reads under the rules of Parse (the same scanner) and the
// Doc's Limits, and reports faults as *Error positioned in the whole
// document. Offsets are byte offsets into the document; depth is how many
// arrays and objects surround the value read, against MaxDepth.
type Doc struct {
	data    []byte
	lim     Limits
	root    int
	keys    []keySpan // members of the objects being read, innermost last
	scratch parseScratch
}

// Field is a member of an object, located in place by Doc.Object.
type Field struct {
	Key   string // decoded
	KeyAt int    // offset of the key's opening quote
	At    int    // offset of the value's first byte
	End   int    // offset just after the value
}

// keySpan is a member as the readers keep it while an object is open: its
// key's text between the quotes (escaped or not) and where its value is.
type keySpan struct {
	start, end int // the key's raw text, without quotes
	esc        bool
	val        int // offset of the value
	valEnd     int // offset just after the value
}

// NewDoc checks what can be checked before reading (the size cap, an empty
// input, a byte-order mark) and locates the document's value.
func NewDoc(data []byte, lim Limits) (*Doc, error) {
	if lim.MaxBytes > 0 && len(data) > lim.MaxBytes {
		return nil, &Error{Line: 1, Col: 1, Msg: fmt.Sprintf("input is %d bytes, over the %d-byte cap", len(data), lim.MaxBytes)}
	}
	s := scanner{data: data, lim: lim}
	if err := s.checkStart(); err != nil {
		return nil, err
	}
	s.skipWS()
	if s.pos >= len(data) {
		return nil, s.errf(s.pos, "unexpected end of input: expected a JSON value")
	}
	return &Doc{data: data, lim: lim, root: s.pos}, nil
}

// Reset makes d read data under the same limits, reusing what it
// allocated for the last document: a reader of many documents keeps one
// Doc per goroutine. On an error (Reset(nil) among them) d holds no
// document.
func (d *Doc) Reset(data []byte) error {
	d.data, d.root, d.keys = nil, 0, d.keys[:0]
	nd, err := NewDoc(data, d.lim)
	if err != nil {
		return err
	}
	d.data, d.root = nd.data, nd.root
	return nil
}

// Root is the offset of the document's value.
func (d *Doc) Root() int { return d.root }

// Bytes returns the document's text from off to end.
func (d *Doc) Bytes(off, end int) []byte { return d.data[off:end] }

// Errorf is an *Error at off in the document.
func (d *Doc) Errorf(off int, format string, args ...any) error {
	return newError(d.data, off, format, args...)
}

// End checks that nothing but whitespace follows off.
func (d *Doc) End(off int) error {
	s := scanner{data: d.data, pos: off, lim: d.lim}
	return s.end()
}

// KindAt is the kind of the value at off, by its first byte. It is only as
// good as what located off: Object's and Array's offsets are of values
// already read.
func (d *Doc) KindAt(off int) Kind {
	if off >= len(d.data) {
		return Null
	}
	switch c := d.data[off]; {
	case c == '{':
		return Object
	case c == '[':
		return Array
	case c == '"':
		return String
	case c == 't' || c == 'f':
		return Bool
	case c == '-' || (c >= '0' && c <= '9'):
		return Number
	}
	return Null
}

func (d *Doc) scanner(off, depth int) scanner {
	return scanner{data: d.data, pos: off, depth: depth, lim: d.lim}
}

// Object reads the object at off and returns its members in key order (the
// canonical order) and the offset just after it. It checks the object's
// own syntax (its keys, colons and commas), refuses a duplicate key among
// its members and more than MaxMembers of them, and finds where each
// member's value ends by its structure alone (brackets and strings): the
// values themselves are checked by whoever reads them (Object, ParseAt,
// WriteCanonical, Skip or a Transcoder), which then end where Object said.
// A document is known to be well-formed only once all of it was read so.
func (d *Doc) Object(off, depth int) ([]Field, int, error) {
	s := d.scanner(off, depth)
	if off >= len(d.data) || d.data[off] != '{' {
		return nil, 0, s.errf(off, "expected a JSON object, found %s", s.describe(off))
	}
	base := len(d.keys)
	defer func() { d.keys = d.keys[:base] }()
	end, err := d.members(&s)
	if err != nil {
		return nil, 0, err
	}
	ms := d.keys[base:]
	fs := make([]Field, len(ms))
	for i, m := range ms {
		fs[i] = Field{Key: d.keyText(m), KeyAt: m.start - 1, At: m.val, End: m.valEnd}
	}
	return fs, end, nil
}

// members reads the object at s.pos into d.keys (above what is there),
// sorted, and returns the offset after it. Its own syntax (keys,
// separators, duplicate keys, the member cap) is checked; each value is
// only found (findEnd), to be checked by whoever reads it.
func (d *Doc) members(s *scanner) (int, error) {
	if err := s.enter(); err != nil {
		return 0, err
	}
	s.pos++
	base := len(d.keys)
	s.skipWS()
	if s.pos < len(s.data) && s.data[s.pos] == '}' {
		s.pos++
		s.depth--
		return s.pos, nil
	}
	for {
		s.skipWS()
		if s.pos >= len(s.data) || s.data[s.pos] != '"' {
			return 0, s.errf(s.pos, "expected a string key in object, found %s", s.describe(s.pos))
		}
		if err := s.member(s.pos, len(d.keys)-base); err != nil {
			return 0, err
		}
		ks, ke, esc, err := s.stringSpan()
		if err != nil {
			return 0, err
		}
		s.skipWS()
		if s.pos >= len(s.data) || s.data[s.pos] != ':' {
			return 0, s.errf(s.pos, "expected ':' after key %q, found %s", d.keyText(keySpan{start: ks, end: ke, esc: esc}), s.describe(s.pos))
		}
		s.pos++
		s.skipWS()
		val := s.pos
		end, err := findEnd(s.data, s.pos)
		if err != nil {
			return 0, err
		}
		s.pos = end
		d.keys = append(d.keys, keySpan{start: ks, end: ke, esc: esc, val: val, valEnd: s.pos})
		s.skipWS()
		if s.pos >= len(s.data) {
			return 0, s.errf(s.pos, "unexpected end of input in object: expected ',' or '}'")
		}
		switch s.data[s.pos] {
		case ',':
			s.pos++
		case '}':
			s.pos++
			s.depth--
			return s.pos, d.sortKeys(d.keys[base:])
		default:
			return 0, s.errf(s.pos, "expected ',' or '}' in object, found %s", s.describe(s.pos))
		}
	}
}

// sortKeys puts an object's members in key order and refuses a duplicate.
func (d *Doc) sortKeys(ms []keySpan) error {
	if !slices.IsSortedFunc(ms, d.cmpKeys) {
		slices.SortFunc(ms, d.cmpKeys)
	}
	for i := 1; i < len(ms); i++ {
		if d.cmpKeys(ms[i-1], ms[i]) == 0 {
			later := max(ms[i-1].start, ms[i].start) - 1
			return newError(d.data, later, "duplicate key %q in object", d.keyText(ms[i]))
		}
	}
	return nil
}

// cmpKeys orders keys by their decoded text (UTF-8 byte order, which is
// code-point order), decoding escapes as it goes: nothing is copied.
func (d *Doc) cmpKeys(a, b keySpan) int {
	ra, rb := d.data[a.start:a.end], d.data[b.start:b.end]
	if !a.esc && !b.esc {
		return bytes.Compare(ra, rb)
	}
	ia, ib := keyReader{raw: ra}, keyReader{raw: rb}
	for {
		ca, okA := ia.next()
		cb, okB := ib.next()
		switch {
		case !okA && !okB:
			return 0
		case !okA:
			return -1
		case !okB:
			return 1
		case ca != cb:
			return int(ca) - int(cb)
		}
	}
}

func (d *Doc) keyText(k keySpan) string {
	raw := d.data[k.start:k.end]
	if !k.esc {
		return string(raw)
	}
	return string(appendDecoded(nil, raw))
}

// keyReader yields the decoded bytes of a validated string's raw text.
type keyReader struct {
	raw    []byte
	i      int
	pend   [utf8.UTFMax]byte
	pi, pn int
}

func (k *keyReader) next() (byte, bool) {
	if k.pi < k.pn {
		c := k.pend[k.pi]
		k.pi++
		return c, true
	}
	if k.i >= len(k.raw) {
		return 0, false
	}
	c := k.raw[k.i]
	if c != '\\' {
		k.i++
		return c, true
	}
	r, n := decodeEscape(k.raw, k.i)
	k.i += n
	k.pn = utf8.EncodeRune(k.pend[:], r)
	k.pi = 1
	return k.pend[0], true
}

// decodeEscape decodes the escape at raw[i] == '\\' of validated text and
// returns the character and the escape's length.
func decodeEscape(raw []byte, i int) (rune, int) {
	switch raw[i+1] {
	case 'b':
		return '\b', 2
	case 'f':
		return '\f', 2
	case 'n':
		return '\n', 2
	case 'r':
		return '\r', 2
	case 't':
		return '\t', 2
	case 'u':
		r, _ := hex4(raw, i+2)
		if utf16.IsSurrogate(r) {
			r2, _ := hex4(raw, i+8)
			return utf16.DecodeRune(r, r2), 12
		}
		return r, 6
	}
	return rune(raw[i+1]), 2 // '"', '\\', '/'
}

// findEnd returns the offset just after the value at off by its structure
// alone: the brackets that open and close it, and its strings (so that a
// bracket or quote inside one is not taken for structure). It checks
// nothing else: on a well-formed value it ends where a reader would, and
// on anything else a reader of the value fails. It keeps nothing and does
// not recurse, whatever the nesting.
func findEnd(data []byte, off int) (int, error) {
	if off >= len(data) {
		return 0, newError(data, off, "unexpected end of input: expected a JSON value")
	}
	switch data[off] {
	case '"':
		j, ok := stringEnd(data, off+1)
		if !ok {
			return 0, newError(data, off, "unterminated string")
		}
		return j, nil
	case '{', '[':
	default: // a scalar: up to the next delimiter
		i := off
		for i < len(data) && !scalarEnd[data[i]] {
			i++
		}
		return i, nil
	}
	depth := 0
	for i := off; i < len(data); {
		c := data[i]
		if !structural[c] {
			i++
			continue
		}
		switch c {
		case '"':
			j, ok := stringEnd(data, i+1)
			if !ok {
				return 0, newError(data, i, "unterminated string")
			}
			i = j
			continue
		case '{', '[':
			depth++
		default: // '}', ']'
			if depth--; depth == 0 {
				return i + 1, nil
			}
		}
		i++
	}
	return 0, newError(data, len(data), "unexpected end of input: the value at byte %d does not end", off)
}

// structural marks the bytes findEnd stops at inside a container;
// scalarEnd the bytes that end a scalar.
var structural, scalarEnd = func() (st, se [256]bool) {
	for _, c := range []byte(`"{}[]`) {
		st[c] = true
	}
	for _, c := range []byte(",}] \t\n\r") {
		se[c] = true
	}
	return
}()

// stringEnd returns the offset just after the closing quote of a string
// whose text starts at i: the next quote not escaped by a backslash.
func stringEnd(data []byte, i int) (int, bool) {
	for {
		q := bytes.IndexByte(data[i:], '"')
		if q < 0 {
			return 0, false
		}
		q += i
		n := 0 // backslashes just before the quote
		for k := q - 1; k >= i && data[k] == '\\'; k-- {
			n++
		}
		if n%2 == 0 {
			return q + 1, true
		}
		i = q + 1
	}
}

// skip checks the value at s.pos under the scanner's rules and moves past
// it, keeping nothing: not a value, not a member. Duplicate keys are the
// business of whoever reads the objects (see Doc.Object).
func skip(s *scanner) error {
	s.skipWS()
	if s.pos >= len(s.data) {
		return s.errf(s.pos, "unexpected end of input: expected a JSON value")
	}
	switch c := s.data[s.pos]; {
	case c == '{' || c == '[':
		return skipContainer(s)
	case c == '"':
		_, _, _, err := s.stringSpan()
		return err
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
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
		var buf [32]byte
		if _, msg := appendCanonicalNumber(buf[:0], lit); msg != "" {
			return s.errf(start, "%s", msg)
		}
		return nil
	}
	return s.errf(s.pos, "expected a JSON value, found %s", s.describe(s.pos))
}

// skipContainer skips an array or object without recursion, counting the
// members of each object it is inside.
func skipContainer(s *scanner) error {
	type open struct {
		obj     bool
		members int
	}
	var stackBuf [16]open
	stack := stackBuf[:0]
	for {
		// At the start of a value inside the containers on the stack (or
		// the first one).
		s.skipWS()
		if s.pos >= len(s.data) {
			return s.errf(s.pos, "unexpected end of input: expected a JSON value")
		}
		switch c := s.data[s.pos]; c {
		case '{', '[':
			if err := s.enter(); err != nil {
				return err
			}
			s.pos++
			stack = append(stack, open{obj: c == '{'})
			s.skipWS()
			closer := byte(']')
			if c == '{' {
				closer = '}'
			}
			if s.pos < len(s.data) && s.data[s.pos] == closer {
				s.pos++
				s.depth--
				stack = stack[:len(stack)-1]
				break
			}
			if c == '{' {
				if err := skipKey(s, &stack[len(stack)-1].members); err != nil {
					return err
				}
			}
			continue
		default:
			if err := skip(s); err != nil {
				return err
			}
		}
		// After a value: a separator or the end of containers.
		for {
			if len(stack) == 0 {
				return nil
			}
			top := &stack[len(stack)-1]
			s.skipWS()
			if s.pos >= len(s.data) {
				if top.obj {
					return s.errf(s.pos, "unexpected end of input in object: expected ',' or '}'")
				}
				return s.errf(s.pos, "unexpected end of input in array: expected ',' or ']'")
			}
			c := s.data[s.pos]
			if c == ',' {
				s.pos++
				if top.obj {
					if err := skipKey(s, &top.members); err != nil {
						return err
					}
				}
				break
			}
			if (top.obj && c == '}') || (!top.obj && c == ']') {
				s.pos++
				s.depth--
				stack = stack[:len(stack)-1]
				continue
			}
			if top.obj {
				return s.errf(s.pos, "expected ',' or '}' in object, found %s", s.describe(s.pos))
			}
			return s.errf(s.pos, "expected ',' or ']' in array, found %s", s.describe(s.pos))
		}
	}
}

// skipKey reads `"key":` of the next member of an object that has n.
func skipKey(s *scanner, n *int) error {
	s.skipWS()
	if s.pos >= len(s.data) || s.data[s.pos] != '"' {
		return s.errf(s.pos, "expected a string key in object, found %s", s.describe(s.pos))
	}
	if err := s.member(s.pos, *n); err != nil {
		return err
	}
	*n++
	ks, ke, esc, err := s.stringSpan()
	if err != nil {
		return err
	}
	s.skipWS()
	if s.pos >= len(s.data) || s.data[s.pos] != ':' {
		key := s.data[ks:ke]
		if esc {
			key = appendDecoded(nil, key)
		}
		return s.errf(s.pos, "expected ':' after key %q, found %s", key, s.describe(s.pos))
	}
	s.pos++
	return nil
}

// Skip reads the value at off, which must be well-formed JSON under the
// Doc's rules, duplicate keys at any depth included, and returns the offset
// just after it. Nothing is kept.
func (d *Doc) Skip(off, depth int) (int, error) {
	w := canonWriter{d: d, s: d.scanner(off, depth)}
	if err := w.value(); err != nil {
		return 0, err
	}
	return w.s.pos, nil
}

// Array reads the array at off, calling each for every element in order
// with its index and offset; each must read the element (Skip, Object,
// ParseAt, WriteCanonical, a Transcoder's ObjectAt) and return the offset
// just after it (elements are at depth+1). Array checks what lies between
// the elements and returns the offset after the array.
func (d *Doc) Array(off, depth int, each func(i, at int) (int, error)) (int, error) {
	s := d.scanner(off, depth)
	if off >= len(d.data) || d.data[off] != '[' {
		return 0, s.errf(off, "expected a JSON array, found %s", s.describe(off))
	}
	if err := s.enter(); err != nil {
		return 0, err
	}
	s.pos++
	s.skipWS()
	if s.pos < len(s.data) && s.data[s.pos] == ']' {
		return s.pos + 1, nil
	}
	for i := 0; ; i++ {
		s.skipWS()
		if s.pos >= len(s.data) {
			return 0, s.errf(s.pos, "unexpected end of input: expected a JSON value")
		}
		end, err := each(i, s.pos)
		if err != nil {
			return 0, err
		}
		s.pos = end
		s.skipWS()
		if s.pos >= len(s.data) {
			return 0, s.errf(s.pos, "unexpected end of input in array: expected ',' or ']'")
		}
		switch s.data[s.pos] {
		case ',':
			s.pos++
		case ']':
			return s.pos + 1, nil
		default:
			return 0, s.errf(s.pos, "expected ',' or ']' in array, found %s", s.describe(s.pos))
		}
	}
}

// maxSourceString bounds the text ParseAt makes one string of: a bigger
// value's strings are copied one by one, so that a tree keeps no more of
// the document than it holds.
const maxSourceString = 64 << 10

// ParseAt parses the value at off into a tree of at most maxValues values
// (0: the Doc's MaxValues) and returns it with the offset just after it.
func (d *Doc) ParseAt(off, depth, maxValues int) (Value, int, error) {
	end, err := findEnd(d.data, off)
	if err != nil {
		end = -1 // the parser says what is wrong
	}
	return d.parse(off, end, depth, maxValues)
}

// ParseSpan is ParseAt of a value known to end at end (as a Transcoder's
// ObjectAt or Object said): it fails if the value does not end there.
func (d *Doc) ParseSpan(off, end, depth, maxValues int) (Value, error) {
	v, got, err := d.parse(off, end, depth, maxValues)
	if err == nil && got != end {
		err = d.Errorf(got, "the value does not end at byte %d", end)
	}
	return v, err
}

// ParseSpanTransient is ParseSpan of a tree used and dropped before the
// next ParseSpanTransient on d: its objects and arrays are cut from memory
// that call reuses (its strings are its own). A reader of thousands of
// small values, each judged and forgotten, allocates no containers for
// them.
func (d *Doc) ParseSpanTransient(off, end, depth, maxValues int) (Value, error) {
	d.scratch.transient = true
	d.scratch.slabVals, d.scratch.slabMembers = d.scratch.slabVals[:0], d.scratch.slabMembers[:0]
	defer func() { d.scratch.transient = false }()
	return d.ParseSpan(off, end, depth, maxValues)
}

func (d *Doc) parse(off, end, depth, maxValues int) (Value, int, error) {
	p := parser{scanner: d.scanner(off, depth), scratch: &d.scratch}
	if maxValues > 0 {
		p.lim.MaxValues = maxValues
	}
	if end > off && end-off <= maxSourceString && end <= len(d.data) {
		// One string of the value's text, its strings cut from it.
		p.src, p.srcOff = string(d.data[off:end]), off
	}
	v, err := p.value()
	if err != nil {
		return Value{}, 0, err
	}
	return v, p.pos, nil
}

// WriteCanonical writes the canonical form C(v) of the value at off to w
// and returns the offset just after it. It reads as Parse does, refusing
// what Parse refuses (within the Doc's Limits, MaxValues aside: nothing is
// kept), and holds no more than the members of the objects it is inside:
// strings, arrays and numbers stream through. An object is read twice, to
// find its members and then to write them in key order, so the time is
// the bytes times the depth of objects, at most MaxDepth.
func (d *Doc) WriteCanonical(w *bufio.Writer, off, depth int) (int, error) {
	cw := canonWriter{d: d, s: d.scanner(off, depth), w: w}
	if err := cw.value(); err != nil {
		return 0, err
	}
	return cw.s.pos, nil
}

// canonWriter writes C(v) of values read in place; with no writer it only
// reads (Skip).
type canonWriter struct {
	d   *Doc
	s   scanner
	w   *bufio.Writer
	num []byte
}

func (c *canonWriter) value() error {
	s := &c.s
	s.skipWS()
	if s.pos >= len(s.data) {
		return s.errf(s.pos, "unexpected end of input: expected a JSON value")
	}
	switch ch := s.data[s.pos]; {
	case ch == '{':
		return c.object()
	case ch == '[':
		return c.array()
	case ch == '"':
		start, end, esc, err := s.stringSpan()
		if err != nil {
			return err
		}
		c.string(s.data[start:end], esc)
		return nil
	case ch == '-' || (ch >= '0' && ch <= '9'):
		start := s.pos
		lit, err := s.number()
		if err != nil {
			return err
		}
		var msg string
		c.num, msg = appendCanonicalNumber(c.num[:0], lit)
		if msg != "" {
			return s.errf(start, "%s", msg)
		}
		c.write(c.num)
		return nil
	}
	start := s.pos
	if err := skip(s); err != nil { // literals and what is not JSON
		return err
	}
	c.write(s.data[start:s.pos])
	return nil
}

func (c *canonWriter) write(b []byte) {
	if c.w != nil {
		c.w.Write(b)
	}
}

func (c *canonWriter) writeByte(b byte) {
	if c.w != nil {
		c.w.WriteByte(b)
	}
}

// string writes a string whose raw text (validated, between the quotes)
// is raw, in canonical form, without decoding it into a buffer.
func (c *canonWriter) string(raw []byte, esc bool) {
	if c.w == nil {
		return
	}
	c.w.WriteByte('"')
	if !esc {
		// Raw text without escapes holds no control character, quote or
		// backslash (stringSpan refused them): it is canonical.
		c.w.Write(raw)
		c.w.WriteByte('"')
		return
	}
	var tmp [utf8.UTFMax + 2]byte
	from := 0
	for i := 0; i < len(raw); {
		if raw[i] != '\\' {
			i++
			continue
		}
		c.w.Write(raw[from:i])
		r, n := decodeEscape(raw, i)
		i += n
		from = i
		if r < 0x20 || r == '"' || r == '\\' {
			c.w.Write(appendEscape(tmp[:0], byte(r)))
		} else {
			c.w.Write(utf8.AppendRune(tmp[:0], r))
		}
	}
	c.w.Write(raw[from:])
	c.w.WriteByte('"')
}

func (c *canonWriter) array() error {
	s := &c.s
	if err := s.enter(); err != nil {
		return err
	}
	s.pos++
	c.writeByte('[')
	s.skipWS()
	if s.pos < len(s.data) && s.data[s.pos] == ']' {
		s.pos++
		s.depth--
		c.writeByte(']')
		return nil
	}
	for {
		if err := c.value(); err != nil {
			return err
		}
		s.skipWS()
		if s.pos >= len(s.data) {
			return s.errf(s.pos, "unexpected end of input in array: expected ',' or ']'")
		}
		switch s.data[s.pos] {
		case ',':
			s.pos++
			if c.w != nil {
				c.w.WriteString(", ")
			}
		case ']':
			s.pos++
			s.depth--
			c.writeByte(']')
			return nil
		default:
			return s.errf(s.pos, "expected ',' or ']' in array, found %s", s.describe(s.pos))
		}
	}
}

// object finds the members (checking their values), sorts them, refuses a
// duplicate, then writes each member's value where it lies.
func (c *canonWriter) object() error {
	d, s := c.d, &c.s
	base := len(d.keys)
	defer func() { d.keys = d.keys[:base] }()
	depth := s.depth
	end, err := d.members(s)
	if err != nil {
		return err
	}
	c.writeByte('{')
	n := len(d.keys) // nested objects push and pop their members above
	for i := base; i < n; i++ {
		k := d.keys[i]
		if i > base && c.w != nil {
			c.w.WriteString(", ")
		}
		c.string(d.data[k.start:k.end], k.esc)
		if c.w != nil {
			c.w.WriteString(": ")
		}
		s.pos, s.depth = k.val, depth+1
		if err := c.value(); err != nil {
			return err
		}
		if s.pos != k.valEnd { // cannot be: a value that reads well ends where its structure does
			return s.errf(s.pos, "expected ',' or '}' in object, found %s", s.describe(s.pos))
		}
	}
	c.writeByte('}')
	s.pos, s.depth = end, depth
	return nil
}

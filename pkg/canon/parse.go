package canon

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"unicode/utf16"
	"unicode/utf8"
)

// Limits bound what the reader accepts, so that hostile input costs bounded
// memory, time and stack. Memory follows what is parsed, not the bytes it
// was parsed from: "[0,0,0,…]" holds a value every two bytes, and each
// value of a tree costs tens of bytes. A zero field is no cap.
type Limits struct {
	MaxBytes int // input size cap in bytes
	MaxDepth int // nesting cap: arrays and objects inside each other
	// MaxValues caps the values one tree (Parse, Doc.ParseAt) or one
	// transcoded object (Transcoder) holds: every scalar, array and
	// object, the outermost included, counted once; keys are not values.
	MaxValues int
	// MaxMembers caps the members of any one object. Readers that keep an
	// object's members in key order (every reader here does) hold them
	// all at once, for each object still open.
	MaxMembers int
}

// DefaultLimits suit receipts: 64 MiB, 64 levels, 2^21 values in a tree
// and 2^14 members to an object. A receipt written by the reference nests
// 5 levels deep (receipt, chain, entries, entry, params).
var DefaultLimits = Limits{MaxBytes: 64 << 20, MaxDepth: 64, MaxValues: 1 << 21, MaxMembers: 1 << 14}

// Error is a fault in JSON input, with where it is.
type Error struct {
	Offset int // byte offset, 0-based
	Line   int // 1-based
	Col    int // 1-based, in bytes
	Msg    string
}

func (e *Error) Error() string {
	return fmt.Sprintf("line %d, column %d (byte %d): %s", e.Line, e.Col, e.Offset, e.Msg)
}

func newError(data []byte, off int, format string, args ...any) *Error {
	if off > len(data) {
		off = len(data)
	}
	line := 1 + bytes.Count(data[:off], []byte{'\n'})
	col := off + 1
	if nl := bytes.LastIndexByte(data[:off], '\n'); nl >= 0 {
		col = off - nl
	}
	return &Error{Offset: off, Line: line, Col: col, Msg: fmt.Sprintf(format, args...)}
}

// Parse reads one JSON value, strictly (see the package doc), under lim.
func Parse(data []byte, lim Limits) (Value, error) {
	if lim.MaxBytes > 0 && len(data) > lim.MaxBytes {
		return Value{}, &Error{Line: 1, Col: 1, Msg: fmt.Sprintf("input is %d bytes, over the %d-byte cap", len(data), lim.MaxBytes)}
	}
	p := parser{scanner: scanner{data: data, lim: lim}}
	if err := p.checkStart(); err != nil {
		return Value{}, err
	}
	v, err := p.value()
	if err != nil {
		return Value{}, err
	}
	if err := p.end(); err != nil {
		return Value{}, err
	}
	return v, nil
}

// scanner holds the lexical rules shared by the tree parser and the
// transcoder.
type scanner struct {
	data  []byte
	pos   int
	depth int
	lim   Limits
	buf   []byte // scratch for decoded strings
}

func (s *scanner) errf(off int, format string, args ...any) error {
	return newError(s.data, off, format, args...)
}

func (s *scanner) checkStart() error {
	if len(s.data) == 0 {
		return s.errf(0, "empty input: expected a JSON value")
	}
	if bytes.HasPrefix(s.data, []byte("\xef\xbb\xbf")) {
		return s.errf(0, "byte-order mark before the JSON value")
	}
	return nil
}

func (s *scanner) end() error {
	s.skipWS()
	if s.pos != len(s.data) {
		return s.errf(s.pos, "unexpected data after the JSON value: %s", s.describe(s.pos))
	}
	return nil
}

func (s *scanner) skipWS() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// describe names the byte at off for an error message.
func (s *scanner) describe(off int) string {
	if off >= len(s.data) {
		return "end of input"
	}
	c := s.data[off]
	if c >= 0x20 && c < 0x7f {
		return fmt.Sprintf("%q", rune(c))
	}
	return fmt.Sprintf("byte 0x%02x", c)
}

// count counts one more value against lim.MaxValues (*n is the caller's
// count: one tree, one transcoded object).
func (s *scanner) count(n *int) error {
	*n++
	if s.lim.MaxValues > 0 && *n > s.lim.MaxValues {
		return s.errf(s.pos, "more than %d values: over the cap on what one document may hold in memory", s.lim.MaxValues)
	}
	return nil
}

// member checks that an object holding have members may take one more.
func (s *scanner) member(off, have int) error {
	if s.lim.MaxMembers > 0 && have >= s.lim.MaxMembers {
		return s.errf(off, "object has more than %d members", s.lim.MaxMembers)
	}
	return nil
}

func (s *scanner) enter() error {
	s.depth++
	if s.lim.MaxDepth > 0 && s.depth > s.lim.MaxDepth {
		return s.errf(s.pos, "nesting deeper than %d levels", s.lim.MaxDepth)
	}
	return nil
}

// literal consumes true, false or null.
func (s *scanner) literal(word string) error {
	if !bytes.HasPrefix(s.data[s.pos:], []byte(word)) {
		return s.errf(s.pos, "invalid literal: expected a JSON value, found %s", s.describe(s.pos))
	}
	s.pos += len(word)
	return nil
}

// number consumes a number literal and returns it.
func (s *scanner) number() ([]byte, error) {
	d := s.data
	start := s.pos
	i := s.pos
	if i < len(d) && d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && d[i] >= '1' && d[i] <= '9':
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	default:
		if bytes.HasPrefix(d[i:], []byte("Infinity")) {
			return nil, s.errf(start, "Infinity is not JSON")
		}
		return nil, s.errf(i, "invalid number: expected a digit, found %s", s.describe(i))
	}
	if i < len(d) && d[i] == '.' {
		i++
		if i >= len(d) || d[i] < '0' || d[i] > '9' {
			return nil, s.errf(i, "invalid number: expected a digit after '.', found %s", s.describe(i))
		}
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if i >= len(d) || d[i] < '0' || d[i] > '9' {
			return nil, s.errf(i, "invalid number: expected an exponent digit, found %s", s.describe(i))
		}
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	}
	s.pos = i
	return d[start:i], nil
}

// stringSpan consumes a string whose opening quote is at s.pos. It validates
// UTF-8, control characters and escapes, and returns the raw content span
// (between the quotes) and whether it holds escapes. Without escapes the raw
// span is the decoded text.
func (s *scanner) stringSpan() (start, end int, escaped bool, err error) {
	d := s.data
	i := s.pos + 1
	start = i
	for {
		// Fast scan over plain ASCII: eight bytes at a time while none of
		// them needs a look, then byte by byte.
		for i+8 <= len(d) && !special8(binary.LittleEndian.Uint64(d[i:])) {
			i += 8
		}
		for i < len(d) && plainASCII[d[i]] {
			i++
		}
		if i >= len(d) {
			return 0, 0, false, s.errf(s.pos, "unterminated string")
		}
		c := d[i]
		switch {
		case c == '"':
			s.pos = i + 1
			return start, i, escaped, nil
		case c == '\\':
			n, err := s.checkEscape(i)
			if err != nil {
				return 0, 0, false, err
			}
			escaped = true
			i += n
		case c < 0x20:
			return 0, 0, false, s.errf(i, "raw control character 0x%02x in string (must be escaped)", c)
		default: // c >= 0x80
			r, size := utf8.DecodeRune(d[i:])
			if r == utf8.RuneError && size <= 1 {
				return 0, 0, false, s.errf(i, "invalid UTF-8 in string")
			}
			i += size
		}
	}
}

// special8 reports whether any of the eight bytes in x is '"', '\', a
// control character or not ASCII (SWAR: exact, no false negatives).
func special8(x uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	ctrl := (x - 0x20*ones) & ^x & highs
	q := x ^ ('"' * ones)
	quote := (q - ones) & ^q & highs
	b := x ^ ('\\' * ones)
	bslash := (b - ones) & ^b & highs
	return ctrl|quote|bslash|(x&highs) != 0
}

// plainASCII marks bytes that stand for themselves inside a string.
var plainASCII = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// checkEscape validates the escape at d[i] == '\\' and returns its length.
// \u escapes must form valid code points: a high surrogate must be followed
// by a low one.
func (s *scanner) checkEscape(i int) (int, error) {
	d := s.data
	if i+1 >= len(d) {
		return 0, s.errf(i, "unterminated escape")
	}
	switch d[i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2, nil
	case 'u':
		r, ok := hex4(d, i+2)
		if !ok {
			return 0, s.errf(i, "invalid \\u escape")
		}
		if utf16.IsSurrogate(r) {
			if r >= 0xdc00 {
				return 0, s.errf(i, "lone low surrogate \\u%04x", r)
			}
			if i+11 < len(d) && d[i+6] == '\\' && d[i+7] == 'u' {
				if r2, ok := hex4(d, i+8); ok && r2 >= 0xdc00 && r2 <= 0xdfff {
					return 12, nil
				}
			}
			return 0, s.errf(i, "lone high surrogate \\u%04x", r)
		}
		return 6, nil
	}
	return 0, s.errf(i, "invalid escape \\%c", d[i+1])
}

func hex4(d []byte, i int) (rune, bool) {
	if i+4 > len(d) {
		return 0, false
	}
	var r rune
	for _, c := range d[i : i+4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		default:
			return 0, false
		}
	}
	return r, true
}

// appendDecoded appends the decoded text of an escaped string span that
// stringSpan already validated.
func appendDecoded(dst, span []byte) []byte {
	for i := 0; i < len(span); {
		c := span[i]
		if c != '\\' {
			j := i + 1
			for j < len(span) && span[j] != '\\' {
				j++
			}
			dst = append(dst, span[i:j]...)
			i = j
			continue
		}
		switch span[i+1] {
		case '"', '\\', '/':
			dst = append(dst, span[i+1])
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r, _ := hex4(span, i+2)
			if utf16.IsSurrogate(r) {
				r2, _ := hex4(span, i+8)
				r = utf16.DecodeRune(r, r2)
				i += 6
			}
			dst = utf8.AppendRune(dst, r)
			i += 6
			continue
		}
		i += 2
	}
	return dst
}

// parser builds a Value tree.
type parser struct {
	scanner
	values  int // values read so far, against lim.MaxValues
	scratch *parseScratch
	// src, when set, is data[srcOff:srcOff+len(src)] made a string once:
	// the strings of the tree are then cut from it, not each copied. The
	// tree keeps all of src alive, so only a reader of a small part of a
	// document (Doc.ParseAt) sets it.
	src    string
	srcOff int
}

func (p *parser) value() (Value, error) {
	p.skipWS()
	if p.pos >= len(p.data) {
		return Value{}, p.errf(p.pos, "unexpected end of input: expected a JSON value")
	}
	if err := p.count(&p.values); err != nil {
		return Value{}, err
	}
	switch c := p.data[p.pos]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		str, err := p.str()
		return Value{kind: String, s: str}, err
	case c == 't':
		return Value{kind: Bool, b: true}, p.literal("true")
	case c == 'f':
		return Value{kind: Bool}, p.literal("false")
	case c == 'n':
		return Value{kind: Null}, p.literal("null")
	case c == 'N' && bytes.HasPrefix(p.data[p.pos:], []byte("NaN")):
		return Value{}, p.errf(p.pos, "NaN is not JSON")
	case c == 'I' && bytes.HasPrefix(p.data[p.pos:], []byte("Infinity")):
		return Value{}, p.errf(p.pos, "Infinity is not JSON")
	case c == '-' || (c >= '0' && c <= '9'):
		start := p.pos
		lit, err := p.number()
		if err != nil {
			return Value{}, err
		}
		var msg string
		p.buf, msg = appendCanonicalNumber(p.buf[:0], lit)
		if msg != "" {
			return Value{}, p.errf(start, "%s", msg)
		}
		return Value{kind: Number, float: isFloatLiteral(lit), s: p.text(p.buf)}, nil
	}
	return Value{}, p.errf(p.pos, "expected a JSON value, found %s", p.describe(p.pos))
}

func (p *parser) str() (string, error) {
	start, end, esc, err := p.stringSpan()
	if err != nil {
		return "", err
	}
	if !esc {
		if p.src != "" && start >= p.srcOff && end-p.srcOff <= len(p.src) {
			return p.src[start-p.srcOff : end-p.srcOff], nil // no copy: see srcOff
		}
		return p.text(p.data[start:end]), nil
	}
	p.buf = appendDecoded(p.buf[:0], p.data[start:end])
	return p.text(p.buf), nil
}

// text makes a string of b, reusing the string of an equal short text
// already made by this parser's scratch: keys and words (ALLOW, run_cmd)
// recur in every entry, and a tree of many entries need not allocate each.
func (p *parser) text(b []byte) string {
	sc := p.scratch
	if sc == nil || len(b) > maxInterned {
		return string(b)
	}
	if s, ok := sc.interned[string(b)]; ok { // no allocation for the lookup
		return s
	}
	s := string(b)
	if len(sc.interned) < maxInternedStrings {
		if sc.interned == nil {
			sc.interned = map[string]string{}
		}
		sc.interned[s] = s
	}
	return s
}

// Bounds of a parse scratch's string cache.
const (
	maxInterned        = 24
	maxInternedStrings = 512
)

// parseScratch is what a parser may reuse from one parse to the next: the
// elements and members of the containers being read (each container
// gets a slice of its exact length when it closes) and short strings.
type parseScratch struct {
	vals     []Value
	members  []Member
	interned map[string]string
	// transient: the containers of the tree are cut from slabs that the
	// next transient parse reuses (see Doc.ParseSpanTransient), instead of
	// each getting memory of its own.
	transient   bool
	slabVals    []Value
	slabMembers []Member
}

// keepMembers gives a closing object its members: a copy of its own, or a
// cut of the slab. A slab that grows moves; what was cut from it before
// stays where it was, valid.
func (sc *parseScratch) keepMembers(ms []Member) []Member {
	return keepIn(sc.transient, &sc.slabMembers, ms)
}

// keepVals gives a closing array its elements, as keepMembers does.
func (sc *parseScratch) keepVals(vs []Value) []Value {
	return keepIn(sc.transient, &sc.slabVals, vs)
}

func keepIn[T any](transient bool, slab *[]T, xs []T) []T {
	if !transient {
		return slices.Clone(xs)
	}
	start := len(*slab)
	*slab = append(*slab, xs...)
	return (*slab)[start:len(*slab):len(*slab)]
}

func (p *parser) array() (Value, error) {
	if err := p.enter(); err != nil {
		return Value{}, err
	}
	p.pos++ // '['
	sc := p.scratchOrNew()
	base := len(sc.vals)
	defer func() { sc.vals = sc.vals[:base] }()
	p.skipWS()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		p.depth--
		return Value{kind: Array, arr: []Value{}}, nil
	}
	for {
		v, err := p.value()
		if err != nil {
			return Value{}, err
		}
		sc.vals = append(sc.vals, v)
		p.skipWS()
		if p.pos >= len(p.data) {
			return Value{}, p.errf(p.pos, "unexpected end of input in array: expected ',' or ']'")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case ']':
			p.pos++
			p.depth--
			return Value{kind: Array, arr: sc.keepVals(sc.vals[base:])}, nil
		default:
			return Value{}, p.errf(p.pos, "expected ',' or ']' in array, found %s", p.describe(p.pos))
		}
	}
}

func (p *parser) scratchOrNew() *parseScratch {
	if p.scratch == nil {
		p.scratch = &parseScratch{}
	}
	return p.scratch
}

func (p *parser) object() (Value, error) {
	if err := p.enter(); err != nil {
		return Value{}, err
	}
	p.pos++ // '{'
	sc := p.scratchOrNew()
	base := len(sc.members)
	defer func() { sc.members = sc.members[:base] }()
	var seen map[string]struct{} // built once an object is too big for a linear scan
	p.skipWS()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		p.depth--
		return Value{kind: Object, obj: []Member{}}, nil
	}
	for {
		p.skipWS()
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			return Value{}, p.errf(p.pos, "expected a string key in object, found %s", p.describe(p.pos))
		}
		keyOff := p.pos
		key, err := p.str()
		if err != nil {
			return Value{}, err
		}
		if isDuplicate(sc.members[base:], &seen, key) {
			return Value{}, p.errf(keyOff, "duplicate key %q in object", key)
		}
		if err := p.member(keyOff, len(sc.members)-base); err != nil {
			return Value{}, err
		}
		p.skipWS()
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return Value{}, p.errf(p.pos, "expected ':' after key %q, found %s", key, p.describe(p.pos))
		}
		p.pos++
		v, err := p.value()
		if err != nil {
			return Value{}, err
		}
		sc.members = append(sc.members, Member{Key: key, Value: v})
		p.skipWS()
		if p.pos >= len(p.data) {
			return Value{}, p.errf(p.pos, "unexpected end of input in object: expected ',' or '}'")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case '}':
			p.pos++
			p.depth--
			return Value{kind: Object, obj: sc.keepMembers(sc.members[base:])}, nil
		default:
			return Value{}, p.errf(p.pos, "expected ',' or '}' in object, found %s", p.describe(p.pos))
		}
	}
}

// isDuplicate reports whether key is already among members (about to be
// appended). Small objects are scanned; big ones get a set, so a hostile
// object with a million keys costs linear, not quadratic, time.
func isDuplicate(members []Member, seen *map[string]struct{}, key string) bool {
	const linear = 16
	if len(members) < linear {
		for i := range members {
			if members[i].Key == key {
				return true
			}
		}
		return false
	}
	if *seen == nil {
		*seen = make(map[string]struct{}, 2*len(members))
		for _, m := range members {
			(*seen)[m.Key] = struct{}{}
		}
	}
	if _, dup := (*seen)[key]; dup {
		return true
	}
	(*seen)[key] = struct{}{}
	return false
}

package canon

import (
	"slices"
	"strings"
	"unicode/utf8"
)

const hexDigits = "0123456789abcdef"

// Canonical returns C(v).
func Canonical(v Value) []byte { return AppendCanonical(nil, v) }

// AppendCanonical appends C(v) to dst.
func AppendCanonical(dst []byte, v Value) []byte {
	return appendValue(dst, v, true, "", 0)
}

// AppendCanonicalWithout appends C(v minus the named top-level members) to
// dst. It is how entry hashes (without prev_hash and entry_hash) and receipt
// signatures (without signature) are computed, without copying v.
func AppendCanonicalWithout(dst []byte, v Value, omit ...string) []byte {
	if v.kind != Object {
		return AppendCanonical(dst, v)
	}
	return appendObject(dst, v.obj, true, "", 0, omit)
}

// AppendOrdered appends v on one line in the canonical style but with object
// members in their original order. It is valid JSON and hashes the same as
// v (hashes are always taken over C), and it is easier for a person to read.
func AppendOrdered(dst []byte, v Value) []byte {
	return appendValue(dst, v, false, "", 0)
}

// AppendIndent appends v with members in their original order, one member
// or element a line, indented by indent per level (like Python's
// json.dumps(indent=2)). Used for receipts people read.
func AppendIndent(dst []byte, v Value, indent string) []byte {
	return appendValue(dst, v, false, indent, 0)
}

func appendValue(dst []byte, v Value, sorted bool, indent string, level int) []byte {
	switch v.kind {
	case Null:
		return append(dst, "null"...)
	case Bool:
		if v.b {
			return append(dst, "true"...)
		}
		return append(dst, "false"...)
	case Number:
		return append(dst, v.s...)
	case String:
		return AppendString(dst, v.s)
	case Array:
		if len(v.arr) == 0 {
			return append(dst, "[]"...)
		}
		dst = append(dst, '[')
		for i, e := range v.arr {
			dst = appendSep(dst, i, indent, level+1)
			dst = appendValue(dst, e, sorted, indent, level+1)
		}
		dst = appendClose(dst, indent, level)
		return append(dst, ']')
	case Object:
		return appendObject(dst, v.obj, sorted, indent, level, nil)
	}
	return append(dst, "null"...)
}

func appendObject(dst []byte, ms []Member, sorted bool, indent string, level int, omit []string) []byte {
	// Sort indices, not members: a Member is large, and an index array of a
	// typical object fits on the stack.
	var buf [32]int
	idx := buf[:0]
	for i := range ms {
		idx = append(idx, i)
	}
	if sorted && !slices.IsSortedFunc(ms, cmpMember) {
		if len(idx) <= len(buf) {
			for i := 1; i < len(idx); i++ {
				for j := i; j > 0 && ms[idx[j]].Key < ms[idx[j-1]].Key; j-- {
					idx[j], idx[j-1] = idx[j-1], idx[j]
				}
			}
		} else {
			slices.SortFunc(idx, func(a, b int) int { return strings.Compare(ms[a].Key, ms[b].Key) })
		}
	}
	dst = append(dst, '{')
	n := 0
	for _, i := range idx {
		m := &ms[i]
		if len(omit) > 0 && slices.Contains(omit, m.Key) {
			continue
		}
		dst = appendSep(dst, n, indent, level+1)
		dst = AppendString(dst, m.Key)
		dst = append(dst, ':', ' ')
		dst = appendValue(dst, m.Value, sorted, indent, level+1)
		n++
	}
	if n == 0 {
		return append(dst, '}')
	}
	dst = appendClose(dst, indent, level)
	return append(dst, '}')
}

func cmpMember(a, b Member) int { return strings.Compare(a.Key, b.Key) }

func appendSep(dst []byte, i int, indent string, level int) []byte {
	if indent == "" {
		if i > 0 {
			dst = append(dst, ',', ' ')
		}
		return dst
	}
	if i > 0 {
		dst = append(dst, ',')
	}
	dst = append(dst, '\n')
	for j := 0; j < level; j++ {
		dst = append(dst, indent...)
	}
	return dst
}

func appendClose(dst []byte, indent string, level int) []byte {
	if indent == "" {
		return dst
	}
	dst = append(dst, '\n')
	for j := 0; j < level; j++ {
		dst = append(dst, indent...)
	}
	return dst
}

// AppendString appends s as a canonical JSON string. s must be valid UTF-8
// (every Value's strings are); invalid bytes are written as U+FFFD.
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			if c < utf8.RuneSelf {
				i++
				continue
			}
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				dst = append(dst, s[start:i]...)
				dst = append(dst, "\uFFFD"...)
				i++
				start = i
				continue
			}
			i += size
			continue
		}
		dst = append(dst, s[start:i]...)
		dst = appendEscape(dst, c)
		i++
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// appendEscape writes the canonical escape of '"', '\' or a control byte.
func appendEscape(dst []byte, c byte) []byte {
	switch c {
	case '"':
		return append(dst, '\\', '"')
	case '\\':
		return append(dst, '\\', '\\')
	case '\n':
		return append(dst, '\\', 'n')
	case '\r':
		return append(dst, '\\', 'r')
	case '\t':
		return append(dst, '\\', 't')
	case '\b':
		return append(dst, '\\', 'b')
	case '\f':
		return append(dst, '\\', 'f')
	}
	return append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
}

package canon

import (
	"math"
	"strconv"
)

// MaxIntDigits caps the digits of an integer literal. Python refuses to
// convert integers longer than 4300 digits (sys.int_info.default_max_str_digits),
// so the reference cannot have written one; a longer literal is hostile.
const MaxIntDigits = 4300

// pyFloatRepr renders f as Python's repr(float) does: the shortest digits
// that round-trip, in fixed notation when the decimal exponent is in
// (-4, 16] and in scientific notation (at least two exponent digits, explicit
// sign) otherwise; a fixed value without a fractional part gets ".0".
func pyFloatRepr(f float64) string {
	var buf [32]byte
	return string(appendPyFloat(buf[:0], f))
}

func appendPyFloat(dst []byte, f float64) []byte {
	// 'e' with precision -1 gives the shortest round-tripping digits:
	// [-]d[.ddd]e±XX.
	var tmp [32]byte
	e := strconv.AppendFloat(tmp[:0], f, 'e', -1, 64)
	neg := false
	if e[0] == '-' {
		neg = true
		e = e[1:]
	}
	// Split mantissa digits and exponent.
	var digits [24]byte
	nd := 0
	i := 0
	for ; i < len(e) && e[i] != 'e'; i++ {
		if e[i] != '.' {
			digits[nd] = e[i]
			nd++
		}
	}
	exp, _ := strconv.Atoi(string(e[i+1:]))
	// Drop trailing zeros of the mantissa (only "0" itself keeps one).
	for nd > 1 && digits[nd-1] == '0' {
		nd--
	}
	decpt := exp + 1 // value = 0.d1d2... * 10^decpt
	if neg {
		dst = append(dst, '-')
	}
	if f == 0 {
		return append(dst, "0.0"...)
	}
	if decpt <= -4 || decpt > 16 {
		dst = append(dst, digits[0])
		if nd > 1 {
			dst = append(dst, '.')
			dst = append(dst, digits[1:nd]...)
		}
		dst = append(dst, 'e')
		x := decpt - 1
		if x < 0 {
			dst = append(dst, '-')
			x = -x
		} else {
			dst = append(dst, '+')
		}
		if x < 10 {
			dst = append(dst, '0')
		}
		return strconv.AppendInt(dst, int64(x), 10)
	}
	switch {
	case decpt <= 0:
		dst = append(dst, '0', '.')
		for j := 0; j < -decpt; j++ {
			dst = append(dst, '0')
		}
		dst = append(dst, digits[:nd]...)
	case decpt >= nd:
		dst = append(dst, digits[:nd]...)
		for j := nd; j < decpt; j++ {
			dst = append(dst, '0')
		}
		dst = append(dst, '.', '0')
	default:
		dst = append(dst, digits[:decpt]...)
		dst = append(dst, '.')
		dst = append(dst, digits[decpt:nd]...)
	}
	return dst
}

// numberKind classifies a syntactically valid JSON number literal.
func isFloatLiteral(lit []byte) bool {
	for _, c := range lit {
		if c == '.' || c == 'e' || c == 'E' {
			return true
		}
	}
	return false
}

// appendCanonicalNumber appends the canonical text of a valid JSON number
// literal. Integers keep their digits (-0 becomes 0, as Python's int does);
// floats are parsed as a double and rendered as Python's repr. A float that
// overflows to infinity has no JSON form and is refused (ok=false).
func appendCanonicalNumber(dst, lit []byte) (out []byte, msg string) {
	if !isFloatLiteral(lit) {
		digits := len(lit)
		if lit[0] == '-' {
			digits--
		}
		if digits > MaxIntDigits {
			return dst, "integer has more than 4300 digits"
		}
		if len(lit) == 2 && lit[0] == '-' && lit[1] == '0' {
			return append(dst, '0'), ""
		}
		return append(dst, lit...), ""
	}
	if len(lit) > 1024 {
		return dst, "number literal longer than 1024 characters"
	}
	f, err := strconv.ParseFloat(string(lit), 64)
	if err != nil && (math.IsInf(f, 0) || math.IsNaN(f)) {
		return dst, "number overflows a double"
	}
	return appendPyFloat(dst, f), ""
}

package jail

import (
	"sort"
	"strings"
	"unicode"
)

// Seatbelt matches paths as strings, and APFS (the default macOS file
// system) compares names case-insensitively: ".GIT" opens ".git", and a
// directory created as ".Github" is the ".github" GitHub reads. A rule on a
// name that may not exist yet, or a deny on top of an allowed tree, must
// therefore match every spelling of it. These helpers build the POSIX
// extended regular expressions the profile uses for that; they use only
// constructs Seatbelt's own profiles use (anchors, bracket sets,
// alternation groups, backslash escapes), and Go's regexp reads them the
// same way, which is how the unit tests check them.

// regexMeta are the characters that are special in an extended regular
// expression outside a bracket expression. ']' and '}' are literal there.
const regexMeta = `\.+*?()|[{^$`

// quoteRegex escapes s so that it matches itself exactly.
func quoteRegex(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(regexMeta, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// foldPattern matches s under simple Unicode case folding, the folding the
// gate's name comparison uses: every letter becomes the set of its case
// variants. That includes the non-ASCII ones that fold to ASCII letters —
// KELVIN SIGN for k and LONG S for s — which are written as alternations
// rather than bracket sets because they are several bytes long.
func foldPattern(s string) string {
	var b strings.Builder
	for _, r := range s {
		orbit := foldOrbit(r)
		switch {
		case len(orbit) > 1 && orbit[len(orbit)-1] < 0x80:
			b.WriteByte('[')
			b.WriteString(string(orbit))
			b.WriteByte(']')
		case len(orbit) > 1:
			parts := make([]string, len(orbit))
			for i, o := range orbit {
				parts[i] = string(o)
			}
			b.WriteString("(" + strings.Join(parts, "|") + ")")
		default:
			b.WriteString(quoteRegex(string(r)))
		}
	}
	return b.String()
}

// foldOrbit is r with every rune that simple case folding makes equal to
// it, sorted.
func foldOrbit(r rune) []rune {
	orbit := []rune{r}
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		orbit = append(orbit, f)
	}
	sort.Slice(orbit, func(i, j int) bool { return orbit[i] < orbit[j] })
	return orbit
}

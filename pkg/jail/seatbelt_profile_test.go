package jail

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sexp is a parsed SBPL form: a list, a string literal, or a symbol.
type sexp struct {
	list   []sexp
	isList bool
	str    string // decoded string literal (or regex source)
	isStr  bool
	sym    string
}

func (s sexp) String() string {
	switch {
	case s.isList:
		parts := make([]string, len(s.list))
		for i, e := range s.list {
			parts[i] = e.String()
		}
		return "(" + strings.Join(parts, " ") + ")"
	case s.isStr:
		return fmt.Sprintf("%q", s.str)
	}
	return s.sym
}

// parseSBPL is a small reader for the SBPL subset the generator emits:
// lists, symbols, "strings" with backslash escapes, #"regex" literals and
// ; comments. It is deliberately independent of the generator so that an
// escaping bug shows up as a different parse, not as the same bug twice.
func parseSBPL(t *testing.T, text string) []sexp {
	t.Helper()
	pos := 0
	var parse func() (sexp, bool)
	skip := func() {
		for pos < len(text) {
			switch {
			case text[pos] == ';':
				for pos < len(text) && text[pos] != '\n' {
					pos++
				}
			case strings.ContainsRune(" \t\r\n", rune(text[pos])):
				pos++
			default:
				return
			}
		}
	}
	readString := func() string {
		pos++ // opening quote
		var b strings.Builder
		for {
			require.Less(t, pos, len(text), "unterminated string")
			c := text[pos]
			switch c {
			case '\\':
				require.Less(t, pos+1, len(text))
				b.WriteByte(text[pos+1])
				pos += 2
			case '"':
				pos++
				return b.String()
			default:
				b.WriteByte(c)
				pos++
			}
		}
	}
	parse = func() (sexp, bool) {
		skip()
		if pos >= len(text) {
			return sexp{}, false
		}
		switch c := text[pos]; {
		case c == '(':
			pos++
			var l []sexp
			for {
				skip()
				require.Less(t, pos, len(text), "unbalanced (")
				if text[pos] == ')' {
					pos++
					return sexp{list: l, isList: true}, true
				}
				e, ok := parse()
				require.True(t, ok)
				l = append(l, e)
			}
		case c == ')':
			t.Fatalf("unbalanced ) at %d", pos)
		case c == '"':
			return sexp{str: readString(), isStr: true}, true
		case c == '#' && pos+1 < len(text) && text[pos+1] == '"':
			pos++
			return sexp{str: readString(), isStr: true}, true
		}
		start := pos
		for pos < len(text) && !strings.ContainsRune(" \t\r\n()\";", rune(text[pos])) {
			pos++
		}
		return sexp{sym: text[start:pos]}, true
	}
	var forms []sexp
	for {
		e, ok := parse()
		if !ok {
			return forms
		}
		forms = append(forms, e)
	}
}

func head(s sexp) string {
	var parts []string
	for _, e := range s.list {
		if e.isList || e.isStr {
			break
		}
		parts = append(parts, e.sym)
	}
	return strings.Join(parts, " ")
}

func testParams() profileParams {
	return profileParams{
		sandbox:   "/Users/runner/work/repo",
		writable:  []string{"/private/var/folders/x/T/deponent-jail-1/tmp", "/private/var/folders/x/T/deponent-jail-1/home"},
		output:    []string{"/private/var/folders/x/T/deponent-jail-1/output", "/private/var/folders/x/T/deponent-jail-1/started"},
		protected: []string{"/Users/runner/work/repo/.git", "/Users/runner/work/repo/.deponent"},
		home:      "/Users/runner",
	}
}

func TestSeatbeltProfileShape(t *testing.T) {
	text, err := seatbeltProfile(testParams())
	require.NoError(t, err)
	forms := parseSBPL(t, text)
	var heads []string
	for _, f := range forms {
		heads = append(heads, head(f))
	}
	assert.Equal(t, []string{
		"version 1", "allow default", "deny network*", "deny file-write*", "allow file-write*",
		"deny file-write*", "deny file-link file-clone", "deny file-read*",
		"deny process-info*", "allow process-info*", "deny sysctl-read", "deny signal", "allow signal",
	}, heads)

	filters := func(f sexp) []string {
		var out []string
		for _, e := range f.list {
			if e.isList {
				out = append(out, e.String())
			}
		}
		return out
	}
	assert.Equal(t, []string{
		`(subpath "/Users/runner/work/repo")`,
		`(subpath "/private/var/folders/x/T/deponent-jail-1/tmp")`,
		`(subpath "/private/var/folders/x/T/deponent-jail-1/home")`,
		`(literal "/private/var/folders/x/T/deponent-jail-1/output")`,
		`(literal "/private/var/folders/x/T/deponent-jail-1/started")`,
		`(literal "/dev/null")`, `(literal "/dev/zero")`, `(literal "/dev/tty")`, `(literal "/dev/dtracehelper")`,
		`(literal "/dev/stdout")`, `(literal "/dev/stderr")`, `(regex "^/dev/fd/[0-9]+$")`,
	}, filters(forms[4]), "writes: only the sandbox, the private temp trees, the output and the /dev nodes")
	// Protected paths are denied AFTER the sandbox allow (later rules win),
	// and as subpaths, which also denies creating them when absent.
	assert.Equal(t, []string{`(subpath "/Users/runner/work/repo/.git")`, `(subpath "/Users/runner/work/repo/.deponent")`}, filters(forms[5]))
	creds := filters(forms[7])
	for _, c := range []string{".ssh", ".aws", ".config/gh", ".docker", ".netrc", ".git-credentials", ".gnupg", ".kube", "Library/Keychains"} {
		assert.Contains(t, creds, `(subpath "/Users/runner/`+c+`")`)
	}
	assert.Equal(t, `(allow process-info* (target same-sandbox))`, forms[9].String())
	assert.Equal(t, `(allow signal (target same-sandbox))`, forms[12].String())
}

func TestSeatbeltProfileNoInjectionThroughPaths(t *testing.T) {
	base, err := seatbeltProfile(testParams())
	require.NoError(t, err)
	want := len(parseSBPL(t, base))
	evil := []string{
		`/Users/runner/a") (allow network*) (allow file-write* (subpath "/`,
		`/Users/runner/a\") (allow network*) ;`,
		`/Users/runner/back\slash\\`,
		`/Users/runner/semi;colon (paren) "quote"`,
		`/Users/runner/#"regex"`,
	}
	for _, sb := range evil {
		pp := testParams()
		pp.sandbox = sb
		pp.protected = []string{sb + "/.git"}
		text, err := seatbeltProfile(pp)
		require.NoError(t, err, sb)
		forms := parseSBPL(t, text)
		require.Len(t, forms, want, "a path changed the profile's structure:\n%s", text)
		assert.NotContains(t, text, "\n(allow network")
		sub := forms[4].list[2]
		require.True(t, sub.isList)
		assert.Equal(t, sb, sub.list[1].str, "the sandbox path must round-trip as one string")
		assert.Equal(t, sb+"/.git", forms[5].list[2].list[1].str)
	}
}

func TestSeatbeltProfileRefusesControlCharacters(t *testing.T) {
	for _, bad := range []string{"/Users/a\nb", "/Users/a\rb", "/Users/a\x00b", "/Users/a\x1bb", "/Users/a\x7fb", "/Users/\xff"} {
		pp := testParams()
		pp.sandbox = bad
		_, err := seatbeltProfile(pp)
		assert.Error(t, err, "%q", bad)
		pp = testParams()
		pp.protected = []string{bad}
		_, err = seatbeltProfile(pp)
		assert.Error(t, err, "%q", bad)
	}
}

func TestSbplString(t *testing.T) {
	s, err := sbplString(`a"b\c`)
	require.NoError(t, err)
	assert.Equal(t, `"a\"b\\c"`, s)
}

package textsafe

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

// hostile are inputs that try to break out of a line, a cell or a command.
var hostile = []string{
	"a | b",
	"`code` *b* _i_",
	"<script>alert(1)</script>",
	"[x](http://e) ![img](x)",
	"line1\r\nline2\nline3\rx",
	"bidi \u202e txt \u2066iso\u2069",
	"line\u2028sep\u2029par",
	"bad \xff\xfe utf8",
	"\n::error::injected",
	"::add-mask::secret",
	"\x1b[31mred\x7f\u0085",
	"literal \ufffd",
	"tab\there",
	"100% done",
	"a\\|b",
	"<!-- x -->",
	"user@example.com www.example.com",
}

func TestOneLine(t *testing.T) {
	cases := []struct{ in, want string }{
		{"plain text", "plain text"},
		{"", ""},
		{"ok ünïcode 🚀 …", "ok ünïcode 🚀 …"},
		{"a\nb\rc\td", `a\nb\rc\td`},
		{"a\r\nb", `a\r\nb`},
		{"x\ay", `x\u0007y`},
		{"\x1b[31mred", `\u001b[31mred`},
		{"del\x7f c1\u0085", `del\u007f c1\u0085`},
		{"line\u2028sep\u2029par", `line\u2028sep\u2029par`},
		{"bidi \u202e txt", `bidi \u202e txt`},
		{"\u202a\u202b\u202c\u202d \u2066\u2067\u2068\u2069", `\u202a\u202b\u202c\u202d \u2066\u2067\u2068\u2069`},
		{"bad \xff utf8", `bad \xff utf8`},
		{"cut \xe2\x82", `cut \xe2\x82`},
		{"literal \ufffd", `literal \ufffd`},
		{"\n::error::injected", `\n::error::injected`},
		{"a | b `c` <script> [x](http://e)", "a | b `c` <script> [x](http://e)"},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, OneLine(c.in), "%q", c.in)
	}
}

// TestOneLineContract: whatever the input, the rendering holds none of the
// characters the contract names, is valid UTF-8, and is stable.
func TestOneLineContract(t *testing.T) {
	for _, in := range append(hostile, string([]byte{0, 1, 2, 0xc0, 0x80, 0xed, 0xa0, 0x80})) {
		out := OneLine(in)
		assert.True(t, utf8.ValidString(out), "%q -> %q", in, out)
		for _, r := range out {
			assert.False(t, needsEscape(r) || unicode.IsControl(r), "%q -> %q holds %U", in, out, r)
		}
		assert.Equal(t, out, OneLine(out), "idempotent")
	}
}

func TestMultiline(t *testing.T) {
	cases := []struct{ in, want string }{
		{"plain", "plain"},
		{"a\r\nb\nc\rd", "a\r\nb\nc\rd"},
		{"a\tb\x1b[0m", `a\tb\u001b[0m`},
		{"x\u2028y\u202ez\xff", `x\u2028y\u202ez\xff`},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, Multiline(c.in), "%q", c.in)
	}
}

func TestCommandData(t *testing.T) {
	cases := []struct{ in, want string }{
		{"plain", "plain"},
		{"100% done\r\nnext", "100%25 done%0D%0Anext"},
		{"%25", "%2525"},
		{"x\n::error::forged", "x%0A::error::forged"},
		{"a\rb", "a%0Db"},
	}
	for _, c := range cases {
		out := CommandData(c.in)
		assert.Equal(t, c.want, out, "%q", c.in)
		assert.NotContains(t, out, "\n")
		assert.NotContains(t, out, "\r")
	}
	// Multiline then CommandData: one command line, every hostile byte inert.
	for _, in := range hostile {
		out := CommandData(Multiline(in))
		assert.NotContains(t, out, "\n")
		assert.NotContains(t, out, "\r")
		assert.Equal(t, OneLine(out), out, "%q -> %q", in, out)
	}
}

// bounded is a case of a function of a string and a bound.
type bounded struct {
	in   string
	n    int
	want string
}

func checkBounded(t *testing.T, f func(string, int) string, cases []bounded) {
	t.Helper()
	for _, c := range cases {
		assert.Equal(t, c.want, f(c.in, c.n), "%q, %d", c.in, c.n)
	}
}

func TestClip(t *testing.T) {
	checkBounded(t, Clip, []bounded{
		{"abc", 3, "abc"},
		{"abcd", 3, "ab…"},
		{"abcd", 1, "…"},
		{"abcd", 0, "abcd"},
		{"abcd", -1, "abcd"},
		{"", 2, ""},
		{"éèêë", 3, "éè…"},
		{"🚀🚀🚀", 2, "🚀…"},
		{"\xff\xfe\xfd", 2, "\xff…"},
	})
}

// TestLongIsCut: a cut text is exactly the bound long, marker included.
func TestLongIsCut(t *testing.T) {
	long := strings.Repeat("é", 300)
	for _, f := range []func(string, int) string{Clip, MarkdownCell} {
		out := f(long, 120)
		assert.Equal(t, 120, utf8.RuneCountInString(out))
		assert.True(t, strings.HasSuffix(out, "…"))
	}
}

func TestMarkdownCell(t *testing.T) {
	checkBounded(t, MarkdownCell, []bounded{
		{"ls -la", 200, `ls \-la`},
		{"a | b", 200, `a \| b`},
		{"line1\nline2\r\nline3\rx", 200, `line1\\nline2\\r\\nline3\\rx`},
		{"<script>alert(1)</script>", 200, `&lt;script&gt;alert\(1\)&lt;/script&gt;`},
		{"`code` *b* _i_ [l](http://x)", 200, "\\`code\\` \\*b\\* \\_i\\_ \\[l\\]\\(http\\://x\\)"},
		{"[x](http://e)", 0, `\[x\]\(http\://e\)`},
		{"![img](x)", 0, `\!\[img\]\(x\)`},
		{"a\\|b", 200, `a\\\|b`},
		{"tab\there\x1b[31m", 200, `tab\\there\\u001b\[31m`},
		{"bidi \u202e x", 0, `bidi \\u202e x`},
		{"sep\u2028x", 0, `sep\\u2028x`},
		{"bad \xff", 0, `bad \\xff`},
		{"&amp;", 200, `&amp;amp;`},
		{"user@example.com", 200, `user\@example\.com`},
		{"www.example.com", 200, `www\.example\.com`},
		{"<!-- x -->", 200, `&lt;\!\-\- x \-\-&gt;`},
		{"\n::error::x", 0, `\\n\:\:error\:\:x`},
		{"100% $x ^y =z ~w #h +p \"q\" 'r' {s}", 0, `100\% \$x \^y \=z \~w \#h \+p \"q\" \'r\' \{s\}`},
		{"", 10, ""},
		{"abcdef", 4, `abc…`},
	})
	// No cell holds a line break, an unescaped pipe or punctuation that
	// could format or link, or raw HTML, whatever the input.
	for _, in := range hostile {
		out := MarkdownCell(in, 0)
		assert.NotContains(t, out, "\n", "%q", in)
		assert.NotContains(t, out, "\r", "%q", in)
		assert.Equal(t, OneLine(out), out, "%q -> %q", in, out)
		unescaped := strings.ReplaceAll(out, `\\`, "")
		for _, c := range []string{"|", "[", "]", "(", ")", "*", "_", "`", "!", "<", ">", "~", ":", "@"} {
			unescaped = strings.ReplaceAll(unescaped, `\`+c, "")
			assert.NotContains(t, unescaped, c, "unescaped %q in %q", c, out)
		}
	}
}

func TestMarkdownCode(t *testing.T) {
	checkBounded(t, MarkdownCode, []bounded{
		{"bwrap", 200, "`bwrap`"},
		{"sha256-abc_def.1", 200, "`sha256-abc_def.1`"},
		{"", 200, ""},
		{"a | b", 200, `a \| b`},
		{"x`y", 200, "x\\`y"},
		{"a\\b", 200, `a\\b`},
		{"<script>", 200, `&lt;script&gt;`},
		{"a&b", 200, `a&amp;b`},
		{"a\nb", 200, `a\\nb`},
		{"a\r\nb", 200, `a\\r\\nb`},
		{"a\tb", 200, `a\\tb`},
		{"x\u202ey", 200, `x\\u202ey`},
		{"x\u2028y", 200, `x\\u2028y`},
		{"x\xffy", 200, `x\\xffy`},
		{"abcdef", 5, `abcd…`},
		{"abcde", 5, "`abcde`"},
		{"éé", 3, "éé"}, // 4 bytes, over the bound: a cell, not a code span
	})
}

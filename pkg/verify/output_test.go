package verify

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/deponent-dev/deponent-action/internal/textsafe"
)

func TestOneLine(t *testing.T) {
	cases := map[string]string{
		"plain text":          "plain text",
		"a\nb\rc\td":          `a\nb\rc\td`,
		"\x1b[31mred":         `\u001b[31mred`,
		"line\u2028sep":       `line\u2028sep`,
		"bidi \u202e txt":     `bidi \u202e txt`,
		"bad \xff utf8":       `bad \xff utf8`,
		"ok ünïcode 🚀":        "ok ünïcode 🚀",
		"\n::error::injected": `\n::error::injected`,
	}
	for in, want := range cases {
		assert.Equal(t, want, textsafe.OneLine(in), "%q", in)
		assert.NotContains(t, textsafe.OneLine(in), "\n")
	}
}

func TestEscapeData(t *testing.T) {
	assert.Equal(t, "100%25 done%0D%0Anext", textsafe.CommandData("100% done\r\nnext"))
	assert.Equal(t, "%2525", textsafe.CommandData("%25"))
}

func TestMarkdownCellIsInert(t *testing.T) {
	in := "x | y\n[link](http://evil) ![img](x) <script> *em* `code` \\"
	out := textsafe.MarkdownCell(in, 0)
	assert.NotContains(t, out, "\n")
	for _, c := range []string{"|", "[", "]", "(", ")", "*", "`", "!"} {
		assert.NotContains(t, strings.ReplaceAll(out, `\`+c, ""), c, "unescaped %q in %q", c, out)
	}
	assert.Contains(t, out, "&lt;script&gt;")
}

func TestQuotePath(t *testing.T) {
	assert.Equal(t, "a/b.json", quotePath("a/b.json"))
	assert.Equal(t, `"a b.json"`, quotePath("a b.json"))
	assert.Equal(t, `"a\nb.json"`, quotePath("a\nb.json"))
	assert.Equal(t, `""`, quotePath(""))
}

func sampleReport() *Report {
	items := []Item{
		{Path: "dir", Kind: KindDirectory, Receipts: 2},
		{Path: "dir/ok.json", Kind: KindReceipt, Verified: true, ReceiptID: "id1", Outcome: "GOVERNED_PASS", Recomputed: "GOVERNED_PASS", Entries: 5, Allowed: 4, Blocked: 1},
		{Path: "dir/ref.json", Kind: KindReceipt, Verified: true, ReceiptID: "id2", Outcome: "GOVERNED_PASS", Entries: 2, Allowed: 1, Blocked: 1},
		{Path: "dir/bad.json", Kind: KindReceipt},
		{Path: "l.jsonl", Kind: KindLedger, Verified: true, Entries: 3, Allowed: 3, Head: "abc"},
	}
	items[3].fail("chain.entries[2]", "%s", "hash-mismatch: 100%\nforged")
	o := DefaultOptions()
	return newReport(&o, items)
}

func TestWriteText(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, sampleReport().WriteText(&b))
	lines := strings.Split(b.String(), "\n")
	assert.Equal(t, "OK    dir  directory receipts=2 ledgers=0 ignored=0", lines[0])
	assert.Equal(t, "OK    dir/ok.json  receipt=id1 outcome=GOVERNED_PASS(recomputed) entries=5 allowed=4 blocked=1", lines[1])
	assert.Equal(t, "OK    dir/ref.json  receipt=id2 outcome=GOVERNED_PASS(stored) entries=2 allowed=1 blocked=1", lines[2])
	assert.Equal(t, `FAIL  dir/bad.json  receipt=- outcome=- entries=0 allowed=0 blocked=0  -- chain.entries[2]: hash-mismatch: 100%\nforged`, lines[3])
	assert.Equal(t, "OK    l.jsonl  ledger entries=3 allowed=3 blocked=0 head=abc", lines[4])
	assert.Equal(t, "3 verified, 1 failed (3 receipts, 1 ledger)", lines[5], "the directory is not evidence: it is not counted")
	assert.True(t, strings.HasPrefix(lines[6], "note: tamper-evident, not signed"))
	assert.Contains(t, lines[7], "1 bare ledger verified without --expect-len")

	// Relaxations are printed, each with what it relaxed; a receipt read
	// twice is counted once.
	r := sampleReport()
	r.Items = append(r.Items, Item{Path: "copy.json", Kind: KindReceipt, Verified: true, ReceiptID: "id1", OK: true})
	o := Options{AllowUnjailed: true, AllowFail: true}
	r = newReport(&o, r.Items)
	b.Reset()
	require.NoError(t, r.WriteText(&b))
	assert.Contains(t, b.String(), "\nrelaxed: --allow-fail: any recomputed outcome passes")
	assert.Contains(t, b.String(), "\nrelaxed: --allow-unjailed: commands may have run outside a real jail")
	assert.Contains(t, b.String(), "4 verified, 1 failed (4 receipts, 2 distinct, 1 ledger)")
	assert.Less(t, strings.Index(b.String(), "relaxed:"), strings.Index(b.String(), "4 verified"))
}

func TestWriteAnnotationsCapped(t *testing.T) {
	var items []Item
	for i := range maxAnnotations + 10 {
		items = append(items, Item{Path: fmt.Sprintf("r%d.json", i), Kind: KindReceipt})
		items[i].fail("", "bad")
	}
	o := DefaultOptions()
	var b bytes.Buffer
	require.NoError(t, newReport(&o, items).WriteAnnotations(&b))
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	require.Len(t, lines, maxAnnotations+1)
	assert.Equal(t, "::error title=deponent-verify::r0.json: bad", lines[0])
	assert.Equal(t, "::error title=deponent-verify::10 more failures: see the log", lines[maxAnnotations])
}

func TestWriteMarkdown(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, sampleReport().WriteMarkdown(&b))
	s := b.String()
	fail := strings.Index(s, "❌ FAIL")
	ok := strings.Index(s, "✅ OK")
	require.Positive(t, fail)
	assert.Less(t, fail, ok, "failures first")
	assert.Contains(t, s, `hash\-mismatch\: 100\%\\nforged`)
	assert.Contains(t, s, `Policies: outcome GOVERNED\_PASS \(recomputed\), canaries held, jailed, \-\-min\-receipts 1`)
}

func TestEmptyReportIsNotAPass(t *testing.T) {
	o := DefaultOptions()
	r := newReport(&o, nil)
	assert.False(t, r.OK)
	assert.Equal(t, 1, r.ExitCode())
}

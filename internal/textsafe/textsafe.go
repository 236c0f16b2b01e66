// Package textsafe renders untrusted text — an agent's commands and their
// output, file names, reasons read from a receipt — so that it stays inert
// wherever Deponent prints it: a terminal, a CI log, a GitHub workflow
// command or a Markdown job summary. Both the action (pkg/action) and the
// verifier (pkg/verify) render through it, so they share one contract:
//
//   - OneLine(s) is one line that no control character (C0, DEL, C1), line
//     or paragraph separator (U+2028, U+2029), bidirectional embedding,
//     override or isolate (U+202A–U+202E, U+2066–U+2069), replacement
//     character (U+FFFD) or invalid UTF-8 reaches raw. Each is written as
//     an ASCII escape: \n, \r and \t; \xNN for a byte that is not UTF-8;
//     \uNNNN for the rest. Text with none of them is returned unchanged.
//     A backslash in the input is not escaped, so the rendering is for
//     reading, not for decoding.
//   - Multiline(s) is OneLine(s) except that CR and LF stay as they are,
//     for a destination that encodes line breaks itself (a workflow
//     command's message after CommandData, or go-githubactions).
//   - CommandData(s) escapes '%', CR and LF as %25, %0D and %0A, the
//     workflow-command rules for a message, so s can neither end the
//     command nor start another one.
//   - Clip(s, n) is at most n runes: a longer s is cut to n-1 runes and
//     marked with "…" (n <= 0: no limit).
//   - MarkdownCell(s, max) is OneLine(s), clipped to max runes, with &, <
//     and > as entities and Markdown punctuation backslash-escaped, "|"
//     included: in a GitHub-flavoured Markdown table cell it cannot end the
//     cell or the row, and cannot format, link (autolinks included), embed
//     an image or carry HTML.
//   - MarkdownCode(s, max) is s as an inline code span when that is as
//     safe, else MarkdownCell(s, max).
package textsafe

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// OneLine renders s on one line with every character that must not reach
// a terminal or a log raw escaped (see the package doc).
func OneLine(s string) string {
	return escape(s, false)
}

// Multiline is OneLine but keeps CR and LF, for a destination that escapes
// line breaks itself.
func Multiline(s string) string {
	return escape(s, true)
}

func escape(s string, keepLineBreaks bool) string {
	clean := true
	for _, r := range s {
		if needsEscape(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case keepLineBreaks && (r == '\n' || r == '\r'):
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case needsEscape(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// needsEscape: control characters, U+FFFD (also what ranging over invalid
// UTF-8 yields), the line and paragraph separators, and the bidirectional
// embeddings, overrides and isolates.
func needsEscape(r rune) bool {
	return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == utf8.RuneError ||
		r == 0x2028 || r == 0x2029 || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
}

var commandData = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A")

// CommandData escapes a workflow command's message: '%', '\r' and '\n'.
func CommandData(s string) string {
	return commandData.Replace(s)
}

// Clip cuts s to at most n characters (runes; a byte that is not UTF-8
// counts as one), ending a cut string in "…". n <= 0 means no limit.
func Clip(s string, n int) string {
	if n <= 0 || utf8.RuneCountInString(s) <= n {
		return s
	}
	i := 0
	for j := range s {
		if i == n-1 {
			return s[:j] + "…"
		}
		i++
	}
	return s
}

// MarkdownCell renders untrusted text as inert Markdown for a table cell:
// OneLine, cut to max characters (max <= 0: not cut); &, < and > as
// entities (no HTML); every Markdown punctuation character backslash-
// escaped, "|" included, so the text can neither end the cell nor format,
// link or embed anything. ':', '.' and '@' are escaped too, which keeps
// GitHub from autolinking a URL, a www. name or an e-mail address.
func MarkdownCell(s string, max int) string {
	s = Clip(OneLine(s), max)
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '&':
			b.WriteString("&amp;")
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '\\', '`', '*', '_', '{', '}', '[', ']', '(', ')', '#', '+', '-', '.', '!', '|', '~', '"', '\'', ':', '@', '$', '%', '^', '=':
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// MarkdownCode renders a value expected to be tame (a backend name, a hash,
// an id) as an inline code span: s between backquotes when it is non-empty,
// at most max bytes (max <= 0: no limit), already one line (OneLine(s) ==
// s) and free of the characters that could end the span or the table cell
// or read as HTML (` | \ < > &). Anything else is MarkdownCell(s, max).
func MarkdownCode(s string, max int) string {
	if s == "" || (max > 0 && len(s) > max) || OneLine(s) != s || strings.ContainsAny(s, "`|\\<>&") {
		return MarkdownCell(s, max)
	}
	return "`" + s + "`"
}

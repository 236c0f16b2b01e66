package gate

// The denylist: defence in depth behind the allowlist and the program
// models. It is matched against a command's program, options and operands
// (and `NAME=value` prefixes), never against a search pattern of a
// read-only program (`grep -rn sudo .` searches for the word; it does not
// run it).

import (
	"bytes"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/deponent-dev/deponent-action/pkg/evidence"
)

type denyPattern struct {
	phrase    []byte
	category  string
	needLeft  bool // a word boundary is required before the match
	needRight bool // a word boundary is required after the match
}

// compileDeny prepares denylist phrases. A boundary is required before
// every match and, when the phrase ends in a word character, after it:
// "curl" matches "curl x" and "os.system('curl')" but not "curling.txt";
// "/etc/" matches "/etc/passwd" but not "src/etc/x". A phrase ending in a
// flag ("rm -r") also matches longer clusters ("rm -rf").
func compileDeny(phrases []string) []denyPattern {
	cat := map[string]string{}
	for _, r := range defaultDenyRules {
		cat[r.phrase] = r.category
	}
	out := make([]denyPattern, 0, len(phrases))
	for _, p := range phrases {
		c := cat[p]
		if c == "" {
			c = "policy"
		}
		lastTok := p[strings.LastIndexByte(p, ' ')+1:]
		out = append(out, denyPattern{
			phrase:    []byte(p),
			category:  c,
			needLeft:  true,
			needRight: isDenyWordByte(p[len(p)-1]) && !strings.HasPrefix(lastTok, "-"),
		})
	}
	return out
}

// isDenyWordByte: letters, digits, '_', '-', '.' and non-ASCII bytes are
// inside words; anything else (space, '/', quotes, '=', '(' …) separates.
func isDenyWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '_' || c == '-' || c == '.' || c >= utf8.RuneSelf
}

// denyText accumulates the words a denylist is matched against: lower-cased
// (ASCII), joined by single spaces, whitespace inside words collapsed, so
// that quoting and spacing cannot split a phrase. norm holds, for words
// that name paths differently once cleaned, their cleaned spelling
// ("../etc/passwd" is matched as "/etc/passwd": a climb out of the sandbox
// reaches the system directories the denylist names).
type denyText struct {
	text, norm []byte
}

func (d *denyText) reset() {
	d.text, d.norm = d.text[:0], d.norm[:0]
}

func (d *denyText) add(w string) {
	d.text = appendDenyWord(d.text, w)
	if strings.IndexByte(w, '/') >= 0 {
		if n, changed := normalizeDenyPaths(w); changed {
			d.norm = appendDenyWord(d.norm, n)
		}
	}
}

func appendDenyWord(text []byte, w string) []byte {
	if len(text) > 0 {
		text = append(text, ' ')
	}
	for j := 0; j < len(w); j++ {
		c := w[j]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f':
			if len(text) > 0 && text[len(text)-1] == ' ' {
				continue
			}
			c = ' '
		case c >= 'A' && c <= 'Z':
			c += 'a' - 'A'
		}
		text = append(text, c)
	}
	return text
}

// normalizeDenyPaths cleans every path-like run inside w (a run of
// characters between separators that holds a '/'): "//" and "/./" fold,
// "a/../" cancels, and a relative path that climbs above its start
// ("../etc/", "src/../../usr/bin") is read as absolute, since enough ".."
// reach the filesystem root. A trailing slash is kept.
func normalizeDenyPaths(w string) (string, bool) {
	var b strings.Builder
	changed := false
	start := 0
	flush := func(end int) {
		run := w[start:end]
		if strings.IndexByte(run, '/') >= 0 {
			if c := cleanDenyPath(run); c != run {
				b.WriteString(c)
				changed = true
				return
			}
		}
		b.WriteString(run)
	}
	for i := 0; i < len(w); i++ {
		if strings.IndexByte(" \t\n'\"`=,;:()[]{}<>|&", w[i]) >= 0 {
			flush(i)
			b.WriteByte(w[i])
			start = i + 1
		}
	}
	flush(len(w))
	return b.String(), changed
}

func cleanDenyPath(run string) string {
	trailing := strings.HasSuffix(run, "/")
	c := path.Clean(run)
	if !strings.HasPrefix(run, "/") && (c == ".." || strings.HasPrefix(c, "../")) {
		for c == ".." || strings.HasPrefix(c, "../") {
			c = strings.TrimPrefix(strings.TrimPrefix(c, ".."), "/")
		}
		c = "/" + c
	}
	if trailing && c != "/" {
		c += "/"
	}
	return c
}

// denyIndex buckets the phrases by their first byte. Every phrase needs a
// word boundary before it, so a match can only start at the beginning of
// the text or after a byte that is not a word byte: the matcher tries only
// those places, and only the phrases starting with the byte found there,
// which keeps it linear in the text.
type denyIndex [256][]int

func buildDenyIndex(deny []denyPattern) *denyIndex {
	var ix denyIndex
	for i, p := range deny {
		ix[p.phrase[0]] = append(ix[p.phrase[0]], i)
	}
	return &ix
}

// denyHit matches the denylist against one command's text.
func (g *Gate) denyHit(d *denyText) *violation {
	for _, text := range [2][]byte{d.text, d.norm} {
		for start := 0; start < len(text); start++ {
			if start > 0 && isDenyWordByte(text[start-1]) {
				continue
			}
			for _, i := range g.denyIx[text[start]] {
				p := &g.deny[i]
				end := start + len(p.phrase)
				if end > len(text) || !bytes.Equal(text[start:end], p.phrase) {
					continue
				}
				if !p.needRight || end == len(text) || !isDenyWordByte(text[end]) {
					return &violation{evidence.ClassDestructive, "command matches denylist entry '" + string(p.phrase) + "' (" + p.category + ")" + denyAdvice(p.category)}
				}
			}
		}
	}
	return nil
}

// denyAdvice says what to do instead, per category.
func denyAdvice(category string) string {
	switch category {
	case "network":
		return "; the jail has no network: work with what is in the sandbox"
	case "package install":
		return "; dependencies come from the environment the operator set up, not from the agent"
	case "system path":
		return "; only paths inside the sandbox can be used (name files relative to it)"
	case "home reference":
		return "; home directories are outside the sandbox: name files relative to the sandbox"
	case "privilege", "system":
		return "; commands run unprivileged in a jail and cannot change the system"
	case "destructive", "destructive (fork bomb)":
		return "; it is refused in any form"
	}
	return ""
}

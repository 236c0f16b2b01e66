package gate

import "strings"

// fastParse reads the commonest shape of run_cmd without the full parser:
// words made of plain characters (letters, digits and - _ . / , : + @ % =)
// and quoted runs ('...' of anything but a quote; "..." of anything but
// $, `, \ and a quote), separated by spaces or tabs; the operators &&, ||,
// | and ; and the redirects [1|2]>/dev/null, [1|2]>>/dev/null and 2>&1,
// each written as a token of its own. Such text has one reading in every
// POSIX shell. Anything else — an unquoted glob character, $, a backslash,
// #, ~, another redirect, a newline, an unterminated quote, `=` in a word
// where a command begins (an assignment), a reserved word where a command
// begins, an operator or redirect out of place — returns ok=false, and the
// full parse reads the command. Where the gate accepts a redirect is still
// decided after the parse, as for the full parse. It exists because the
// full parse is most of a typical decision's allocations; FuzzFastParse and
// TestFastParseAgrees hold it to the full parse on the same input.
func fastParse(cmd string) (s *shScript, ok bool) {
	// One backing array for every command's words and one for the
	// commands, sized from the spaces: a word or operator per space-run at
	// most. Each command's words are a capped slice of it, so appending to
	// one never writes into the next.
	tokens := strings.Count(cmd, " ") + strings.Count(cmd, "\t") + 1
	if tokens > maxWords+1 {
		tokens = maxWords + 1
	}
	words := make([]shWord, 0, tokens)
	s = &shScript{cmds: make([]shCommand, 0, 1+tokens/4)}
	var cur shCommand
	first := 0 // where cur's words begin in words
	wordsSeen := 0
	atCommand := true // the next word begins a command
	endCommand := func() bool {
		if len(words) == first || len(s.cmds) >= maxSimpleCommands {
			return false
		}
		cur.words = words[first:len(words):len(words)]
		s.cmds = append(s.cmds, cur)
		cur = shCommand{}
		first = len(words)
		return true
	}
	var val []byte
	for i := 0; i < len(cmd); {
		c := cmd[i]
		if c == ' ' || c == '\t' {
			i++
			continue
		}
		j := i
		for j < len(cmd) && cmd[j] != ' ' && cmd[j] != '\t' && cmd[j] != '\'' && cmd[j] != '"' {
			j++
		}
		if j == len(cmd) || cmd[j] == ' ' || cmd[j] == '\t' {
			// An unquoted token: an operator, an accepted redirect, or a
			// word.
			w := cmd[i:j]
			switch w {
			case "&&", "||", "|", ";":
				if atCommand || !endCommand() {
					return nil, false
				}
				s.ops = append(s.ops, w)
				atCommand = true
				i = j
				continue
			}
			if r, isRedir := fastRedirect(w); isRedir {
				if atCommand {
					return nil, false
				}
				cur.redirs = append(cur.redirs, r)
				i = j
				continue
			}
			if atCommand && shellReserved[w] {
				return nil, false
			}
		}
		// A word: plain characters and quoted runs, up to a space or tab.
		val = val[:0]
		quoted := false
		start := i
		for i < len(cmd) && cmd[i] != ' ' && cmd[i] != '\t' {
			c := cmd[i]
			switch {
			case c == '\'':
				k := strings.IndexByte(cmd[i+1:], '\'')
				if k < 0 {
					return nil, false
				}
				val = append(val, cmd[i+1:i+1+k]...)
				i += k + 2
				quoted = true
			case c == '"':
				k := i + 1
				for k < len(cmd) && cmd[k] != '"' {
					switch cmd[k] {
					case '$', '`', '\\':
						return nil, false
					}
					k++
				}
				if k == len(cmd) {
					return nil, false
				}
				val = append(val, cmd[i+1:k]...)
				i = k + 1
				quoted = true
			case plainWordByte(c) && !(atCommand && c == '='):
				val = append(val, c)
				i++
			default:
				return nil, false
			}
		}
		wordsSeen++
		if wordsSeen > maxWords {
			return nil, false
		}
		w := cmd[start:i]
		if quoted {
			w = string(val)
		}
		words = append(words, shWord{val: w})
		atCommand = false
	}
	if atCommand || !endCommand() {
		return nil, false
	}
	return s, true
}

// fastRedirect reads the redirects the gate accepts, each written as one
// token: [1|2]>/dev/null, [1|2]>>/dev/null and 2>&1.
func fastRedirect(w string) (shRedir, bool) {
	if w == "2>&1" {
		return shRedir{text: "2>&1", fd: '2', toStdout: true}, true
	}
	fd := byte('1')
	rest := w
	if rest != "" && (rest[0] == '1' || rest[0] == '2') {
		fd = rest[0]
		rest = rest[1:]
	}
	switch rest {
	case ">/dev/null", ">>/dev/null":
		return shRedir{text: w, fd: fd, toDevNull: true}, true
	}
	return shRedir{}, false
}

// plainWordByte: characters that mean themselves wherever they stand in a
// POSIX shell word.
func plainWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '-' || c == '_' || c == '.' || c == '/' || c == ',' || c == ':' || c == '+' || c == '@' || c == '%' || c == '='
}

// shellReserved are the words a shell reads as syntax where a command
// begins (POSIX's, and bash's that a POSIX parser may also know).
var shellReserved = wordSet(`case do done elif else esac fi for if in then until while function select time coproc`)

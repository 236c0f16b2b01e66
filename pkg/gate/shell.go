package gate

// Shell parsing and canonical rendering for run_cmd.
//
// The gate never hands the agent's raw string to a shell. It parses the
// string with a real POSIX parser, refuses every construct it does not
// model, and keeps only a list of simple commands (literal words) joined by
// &&, ||, | and ;. What runs is a rendering of that list in which every word
// is single-quoted, so no difference between this parser and /bin/sh can
// change what is executed: single-quoted text has exactly one meaning in
// every POSIX shell.

import (
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"

	"github.com/deponent-dev/deponent-action/pkg/evidence"
)

// Structural caps. The size cap is checked before anything else; the others
// bound the work of one decision and keep recursion shallow.
const (
	maxCommandBytes   = 64 << 10 // run_cmd strings larger than this are refused unparsed
	maxNestingOpeners = 16       // "(", "$(", "${" and "`" outside single quotes, counted before parsing
	maxSimpleCommands = 256      // simple commands in one run_cmd
	maxWords          = 8192     // words in one run_cmd, before glob expansion
	maxWordParts      = 4096     // quotes opened, backslash escapes and `$` signs in one run_cmd: each is a node the parser builds
)

// shWord is one shell word after quote removal.
type shWord struct {
	val string // the argument sh would pass to the program
	// glob is a filepath.Match pattern for the word when it contains an
	// unquoted *, ? or [ (quoted metacharacters are backslash-escaped in it);
	// empty when the word is a plain literal.
	glob string
}

// shCommand is one simple command: a program name and its arguments,
// with the `NAME=value` prefixes and the redirects the gate accepts.
type shCommand struct {
	assigns []shAssign
	words   []shWord
	redirs  []shRedir
}

// shAssign is a `NAME=value` prefix of a command.
type shAssign struct {
	name string
	val  string
}

// shRedir is one of the few redirects the gate accepts: standard output or
// error to /dev/null, or standard error into standard output.
type shRedir struct {
	text      string // its canonical rendering: ">/dev/null", "2>>/dev/null", "2>&1"
	fd        byte   // '1' or '2': the descriptor it redirects
	toStdout  bool   // 2>&1
	toDevNull bool
}

// shScript is a parsed command line of the only shape the gate accepts:
// simple commands, with ops[i] ("&&", "||", "|" or ";") joining cmds[i] and
// cmds[i+1]. Re-rendering cmds and ops in order reproduces the same parse,
// because without parentheses the shell grammar's precedence (| over && and
// || over ;) is fixed by the order alone.
type shScript struct {
	cmds []shCommand
	ops  []string
}

// violation is a refusal: the blast class and a human reason.
type violation struct {
	class  evidence.Class
	reason string
}

// posixParsers reuses parsers: syntax.Parser keeps buffers between calls but
// is not safe for concurrent use.
var posixParsers = sync.Pool{New: func() any {
	return syntax.NewParser(syntax.Variant(syntax.LangPOSIX), syntax.KeepComments(true))
}}

// parseCommand checks cmd (already known to be non-blank and within the
// size cap) and returns its simple commands, or the first reason to refuse.
func parseCommand(cmd string) (*shScript, *violation) {
	if v := prescanCommand(cmd); v != nil {
		return nil, v
	}
	if s, ok := fastParse(cmd); ok {
		return s, nil
	}
	return fullParse(cmd)
}

// fullParse reads cmd with the POSIX parser and keeps the shapes the gate
// accepts.
func fullParse(cmd string) (*shScript, *violation) {
	f, err := parsePOSIX(cmd)
	if err != nil {
		v := classifyUnparsable(cmd, err)
		return nil, &v
	}
	w := shWalker{s: &shScript{}}
	w.stmts(f.Stmts)
	if w.v != nil {
		return nil, w.v
	}
	return w.s, nil
}

// parsePOSIX runs a pooled parser. A panic inside the parser becomes a
// parse error — the command is refused, the agent loop goes on — and the
// parser that panicked is not reused.
func parsePOSIX(cmd string) (f *syntax.File, err error) {
	p := posixParsers.Get().(*syntax.Parser)
	defer func() {
		if r := recover(); r != nil {
			f, err = nil, fmt.Errorf("parser failure: %v", r)
			return
		}
		posixParsers.Put(p)
	}()
	return p.Parse(strings.NewReader(cmd), "")
}

// prescanCommand refuses, before parsing, what no parse can make safe or
// what would make parsing expensive: NUL and invalid UTF-8 (sh cannot carry
// them faithfully), characters that hide text from a human reviewer, and
// deep nesting. The parser recurses on "(" and "$(" and is quadratic on some
// pathological inputs (64 KiB of "(" takes seconds); every such opener is a
// refusal anyway, so a handful is enough to classify the command.
func prescanCommand(cmd string) *violation {
	if strings.IndexByte(cmd, 0) >= 0 {
		return &violation{evidence.ClassUnparsable, "command contains a NUL byte, which a shell cannot pass to a program"}
	}
	if !utf8.ValidString(cmd) {
		return &violation{evidence.ClassUnparsable, "command is not valid UTF-8"}
	}
	if r, ok := firstDeceptiveRune(cmd); ok {
		return &violation{evidence.ClassDeceptiveChar, "command contains " + describeRune(r) +
			", a control, invisible, bidirectional or look-alike character: what a reviewer reads would not be what runs"}
	}
	openers, commands, words, parts := prescanCounts(cmd)
	switch {
	case parts > maxWordParts:
		return &violation{evidence.ClassTooComplex, "more than 4096 quotes, backslash escapes and `$` signs in one run_cmd; refused before parsing (put long text in a file with write_file)"}
	case openers > maxNestingOpeners:
		return &violation{evidence.ClassTooComplex, "command nests more than 16 subshells, substitutions or compound commands; refused before parsing"}
	case commands > maxSimpleCommands:
		return &violation{evidence.ClassTooComplex, "more than 256 commands in one run_cmd; refused before parsing"}
	case words > maxWords:
		return &violation{evidence.ClassTooComplex, "more than 8192 words in one run_cmd; refused before parsing"}
	}
	return nil
}

// countNestingOpeners counts what makes the parser nest: "(", "$(", "${"
// and "`", and the reserved words that open compound commands ("{", if,
// while, until, for, case, "!", …) where a command begins, outside single
// quotes, backslash escapes and comments. Every one of them is refused
// anyway; the count only decides whether to refuse before parsing.
func countNestingOpeners(s string) int {
	n, _, _, _ := prescanCounts(s)
	return n
}

// shellBreak marks the bytes that end an unquoted word.
var shellBreak = func() (t [256]bool) {
	for _, c := range []byte(" \t\n;&|()<>") {
		t[c] = true
	}
	return t
}()

// compoundOpeners are the reserved words that open a nested command when
// they start one.
var compoundOpeners = wordSet(`{ if while until for case select function ! [[ coproc then do else elif`)

// prescanCounts reads s once, following sh quoting closely enough never to
// count a legitimate command's quoted text, and returns the nesting
// openers, the commands (one more than the separators ; & | && || and
// newlines), the words, and the word parts (quotes opened, backslash
// escapes, `$` signs). Where it is imprecise (inside substitutions and
// here-documents, which are refused anyway) it can only over-count.
func prescanCounts(s string) (openers, commands, words, parts int) {
	const (
		plain = iota
		single
		double
	)
	state := plain
	wordStart := true // the next character starts a word
	cmdPos := true    // that word is where a command begins
	commands = 1
	inWord := false
	wordBegin := 0
	endWord := func(i int) {
		if !inWord {
			return
		}
		inWord = false
		w := s[wordBegin:i]
		if cmdPos && compoundOpeners[w] {
			openers++
			return // the word after a reserved word begins a command too
		}
		cmdPos = false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch state {
		case single:
			if c == '\'' {
				state = plain
			}
			continue
		case double:
			switch c {
			case '\\':
				i++
				parts++
			case '"':
				state = plain
			case '`':
				openers++
			case '$':
				parts++
				if i+1 < len(s) && (s[i+1] == '(' || s[i+1] == '{') {
					openers++
				}
			}
			continue
		}
		if shellBreak[c] {
			endWord(i)
			switch c {
			case ';', '&', '|', '\n', '(', ')':
				if c != '(' && c != ')' && (i == 0 || s[i-1] != c) {
					commands++
				}
				if c == '(' {
					openers++
				}
				cmdPos = true
			}
			wordStart = true
			continue
		}
		if !inWord {
			inWord, wordBegin = true, i
			words++
		}
		switch c {
		case '\\':
			i++
			parts++
			wordStart = false
			continue
		case '\'':
			state = single
			parts++
		case '"':
			state = double
			parts++
		case '#':
			if wordStart {
				inWord = false
				words--
				for i < len(s) && s[i] != '\n' {
					i++
				}
				i--
				wordStart = true
				continue
			}
		case '`':
			openers++
		case '$':
			parts++
			if i+1 < len(s) && s[i+1] == '{' {
				openers++
			}
		}
		wordStart = false
	}
	endWord(len(s))
	return openers, commands, words, parts
}

// firstDeceptiveRune finds the first character that makes text read
// differently from what runs: C0/C1 controls other than tab and newline,
// DEL, zero-width and bidirectional formatting characters, the code points
// HFS+ ignores in file names (which made ".git" spoofable), and look-alikes
// of the path characters "/" and "." (fullwidth solidus, division slash,
// two-dot leader, …).
func firstDeceptiveRune(s string) (rune, bool) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < utf8.RuneSelf {
			if (c < 0x20 && c != '\t' && c != '\n') || c == 0x7f {
				return rune(c), true
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if isHiddenRune(r) || isPathLookalike(r) {
			return r, true
		}
		i += size - 1
	}
	return 0, false
}

func isHiddenRune(r rune) bool {
	switch {
	case r >= 0x80 && r <= 0x9f: // C1 controls
	case r == 0xad, r == 0x34f, r == 0x61c, r == 0x115f, r == 0x1160, r == 0x17b4, r == 0x17b5, r == 0x180e:
	case r >= 0x200b && r <= 0x200f: // zero-width space/joiners, LRM, RLM
	case r >= 0x202a && r <= 0x202e: // bidi embeddings and overrides
	case r >= 0x2060 && r <= 0x206f: // word joiner, invisible operators, bidi isolates, deprecated formats
	case r == 0x3164, r == 0xfeff, r == 0xffa0:
	case r >= 0xfff9 && r <= 0xfffb: // interlinear annotations
	case r >= 0xe0000 && r <= 0xe007f: // tag characters
	default:
		return false
	}
	return true
}

// isPathLookalike: characters drawn like "/", "\\", "." or ".." that a
// reviewer would read as path syntax.
func isPathLookalike(r rune) bool {
	switch r {
	case 0x2044, 0x2215, 0x29f8, 0x29f9, 0xff0f, 0xff3c, 0xfe68, // slashes
		0x2024, 0x2025, 0xfe52, 0xff0e: // dots and leaders
		return true
	}
	return false
}

// shWalker flattens a parsed file into an shScript, stopping at the first
// construct outside the accepted shape.
type shWalker struct {
	s     *shScript
	v     *violation
	words int
}

func (w *shWalker) fail(class evidence.Class, reason string) bool {
	if w.v == nil {
		w.v = &violation{class, reason}
	}
	return false
}

func (w *shWalker) stmts(list []*syntax.Stmt) bool {
	for i, st := range list {
		if i > 0 {
			w.s.ops = append(w.s.ops, ";")
		}
		if !w.stmt(st) {
			return false
		}
	}
	return true
}

func (w *shWalker) stmt(st *syntax.Stmt) bool {
	switch {
	case st.Negated:
		return w.fail(evidence.ClassShellConstruct, "`!` negation is a shell construct; only simple commands joined by &&, ||, ;, | and newlines are allowed")
	case st.Background, st.Disown:
		return w.fail(evidence.ClassBackground, "`&` would run the command in the background, outliving the decision and the jail's limits; remove the `&`")
	case st.Coprocess:
		return w.fail(evidence.ClassShellConstruct, "coprocesses are a shell construct; only simple commands are allowed")
	}
	var redirs []shRedir
	for _, r := range st.Redirs {
		rd, ok := w.redirect(r)
		if !ok {
			return false
		}
		redirs = append(redirs, rd)
	}
	switch c := st.Cmd.(type) {
	case *syntax.CallExpr:
		return w.call(c, redirs)
	case *syntax.BinaryCmd:
		switch c.Op {
		case syntax.AndStmt, syntax.OrStmt, syntax.Pipe:
			if !w.stmt(c.X) {
				return false
			}
			w.s.ops = append(w.s.ops, c.Op.String())
			return w.stmt(c.Y)
		case syntax.PipeAll:
			return w.fail(evidence.ClassRedirect, "`|&` redirects standard error into the pipe; use `|`")
		}
		return w.fail(evidence.ClassShellConstruct, "operator `"+c.Op.String()+"` is not allowed")
	case nil:
		if len(redirs) > 0 {
			return w.fail(evidence.ClassRedirect, "a redirect without a command is not allowed")
		}
		return w.fail(evidence.ClassUnparsable, "empty statement")
	default:
		return w.fail(evidence.ClassShellConstruct, constructName(c)+
			" is a shell construct; only simple commands joined by &&, ||, ;, | and newlines are allowed")
	}
}

func (w *shWalker) call(c *syntax.CallExpr, redirs []shRedir) bool {
	if len(c.Args) == 0 {
		name := "variable"
		if len(c.Assigns) > 0 && c.Assigns[0].Name != nil {
			name = c.Assigns[0].Name.Value
		}
		return w.fail(evidence.ClassEnvAssignment, "assignment to "+name+
			" is not allowed: shell variables would change how later words are read")
	}
	var assigns []shAssign
	for _, a := range c.Assigns {
		sa, ok := w.assign(a)
		if !ok {
			return false
		}
		assigns = append(assigns, sa)
	}
	if len(w.s.cmds) >= maxSimpleCommands {
		return w.fail(evidence.ClassTooComplex, "more than 256 commands in one run_cmd")
	}
	w.words += len(c.Args)
	if w.words > maxWords {
		return w.fail(evidence.ClassTooComplex, "more than 8192 words in one run_cmd")
	}
	words := make([]shWord, 0, len(c.Args))
	for _, arg := range c.Args {
		sw, ok := w.word(arg)
		if !ok {
			return false
		}
		words = append(words, sw)
	}
	w.s.cmds = append(w.s.cmds, shCommand{assigns: assigns, words: words, redirs: redirs})
	return true
}

// assign reads one `NAME=value` prefix. Only variables on the gate's list
// may be set this way (see assignableVars); their values are checked with
// the command, once the working directory is known.
func (w *shWalker) assign(a *syntax.Assign) (shAssign, bool) {
	if a.Name == nil || a.Append || a.Naked || a.Index != nil || a.Array != nil {
		return shAssign{}, w.fail(evidence.ClassEnvAssignment, "only plain `NAME=value` prefixes are allowed")
	}
	name := a.Name.Value
	if _, ok := assignableVars[name]; !ok {
		return shAssign{}, w.fail(evidence.ClassEnvAssignment, "environment assignment "+name+"=… before a command is not allowed: "+
			"only "+assignableNames()+" may be set this way; the rest of the jail's environment is fixed by policy (keys env and env_pass)")
	}
	sa := shAssign{name: name}
	if a.Value != nil {
		v, ok := w.word(a.Value)
		if !ok {
			return shAssign{}, false
		}
		sa.val = v.val // sh does not expand globs in assignments
	}
	return sa, true
}

// redirect accepts `>/dev/null`, `2>/dev/null` (and the `>>` forms) and
// `2>&1`; where `2>&1` may stand is decided with the command's neighbours.
func (w *shWalker) redirect(r *syntax.Redirect) (shRedir, bool) {
	refuse := func() (shRedir, bool) {
		return shRedir{}, w.fail(evidence.ClassRedirect, describeRedirect(r)+
			" is not allowed: the only redirects are `>/dev/null`, `2>/dev/null` and `2>&1` before a pipe; commands cannot open files through the shell (use write_file to create files)")
	}
	fd := byte('1')
	if r.N != nil {
		switch r.N.Value {
		case "1", "2":
			fd = r.N.Value[0]
		default:
			return refuse()
		}
	}
	if r.Word == nil {
		return refuse()
	}
	target := r.Word.Lit()
	switch r.Op {
	case syntax.RdrOut, syntax.AppOut:
		if target != "/dev/null" || len(r.Word.Parts) != 1 {
			return refuse()
		}
		text := ">/dev/null"
		if r.Op == syntax.AppOut {
			text = ">>/dev/null"
		}
		if r.N != nil {
			text = r.N.Value + text
		}
		return shRedir{text: text, fd: fd, toDevNull: true}, true
	case syntax.DplOut:
		if r.N == nil || fd != '2' || target != "1" || len(r.Word.Parts) != 1 {
			return refuse()
		}
		return shRedir{text: "2>&1", fd: '2', toStdout: true}, true
	}
	return refuse()
}

// word performs quote removal on a word made only of literal parts and
// records which glob metacharacters were left unquoted.
func (w *shWalker) word(wd *syntax.Word) (shWord, bool) {
	// Fast path: one unquoted literal with nothing to remove or expand.
	if len(wd.Parts) == 1 {
		if lit, ok := wd.Parts[0].(*syntax.Lit); ok && !strings.ContainsAny(lit.Value, "\\$`*?[~") {
			return shWord{val: lit.Value}, true
		}
	}
	var val, pat strings.Builder
	hasGlob := false
	for i, part := range wd.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			if i == 0 && strings.HasPrefix(p.Value, "~") {
				return shWord{}, w.fail(evidence.ClassSubstitution, "`~` at the start of a word is tilde expansion (the home directory); use a path inside the sandbox")
			}
			if !w.unquotedLit(p.Value, &val, &pat, &hasGlob) {
				return shWord{}, false
			}
		case *syntax.SglQuoted:
			if p.Dollar {
				return shWord{}, w.fail(evidence.ClassSubstitution, "`$'…'` quoting expands escape sequences; use plain single quotes")
			}
			val.WriteString(p.Value)
			writeGlobLiteral(&pat, p.Value)
		case *syntax.DblQuoted:
			if p.Dollar {
				return shWord{}, w.fail(evidence.ClassSubstitution, "`$\"…\"` is locale translation, an expansion; use plain quotes")
			}
			for k, dp := range p.Parts {
				lit, ok := dp.(*syntax.Lit)
				if !ok {
					return shWord{}, w.fail(partClass(dp), partName(dp)+" inside double quotes is not allowed: the gate approves literal words only")
				}
				if lit.Value == "$" && literalDollar(p.Parts[k+1:]) {
					// "strip()$", "a$|b": a `$` that sh leaves as it is.
					val.WriteByte('$')
					pat.WriteByte('$')
					continue
				}
				if !w.doubleQuotedLit(lit.Value, &val, &pat) {
					return shWord{}, false
				}
			}
		default:
			return shWord{}, w.fail(partClass(part), partName(part)+" is not allowed: the gate approves literal words only; run the inner command on its own")
		}
	}
	sw := shWord{val: val.String()}
	if hasGlob {
		sw.glob = pat.String()
	}
	return sw, true
}

// unquotedLit removes backslash escapes from unquoted text. A `$` or
// backquote is refused even when escaped: an escaped `$` is harmless to sh,
// but refusing every `$` outside single quotes makes the rule simple to
// state and to test ("no `$` or backquote outside single quotes").
func (w *shWalker) unquotedLit(s string, val, pat *strings.Builder, hasGlob *bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '$', '`':
			return w.fail(evidence.ClassSubstitution, dollarReason(s[i:]))
		case '\\':
			if i+1 < len(s) {
				i++
				c = s[i]
				if c == '$' || c == '`' {
					return w.fail(evidence.ClassSubstitution, "an escaped `"+string(c)+"` is refused too; put literal dollar signs and backquotes in single quotes")
				}
				val.WriteByte(c)
				writeGlobLiteralByte(pat, c)
				continue
			}
			// A trailing backslash at the end of the input stays literal.
			val.WriteByte(c)
			writeGlobLiteralByte(pat, c)
		case '*', '?':
			*hasGlob = true
			val.WriteByte(c)
			pat.WriteByte(c)
		case '[':
			// sh negates a bracket expression with "!", filepath.Match with "^".
			*hasGlob = true
			val.WriteByte(c)
			pat.WriteByte(c)
			if i+1 < len(s) && s[i+1] == '!' {
				i++
				val.WriteByte('!')
				pat.WriteByte('^')
			}
		default:
			val.WriteByte(c)
			pat.WriteByte(c)
		}
	}
	return true
}

// literalDollar reports whether a `$` the parser left as a literal inside
// double quotes (followed by the parts in rest) is one that every POSIX
// shell leaves alone: at the end of the quotes, or before a character that
// cannot start an expansion in any shell (so not "[", which bash reads as
// old arithmetic, nor a quote).
func literalDollar(rest []syntax.WordPart) bool {
	if len(rest) == 0 {
		return true
	}
	next, ok := rest[0].(*syntax.Lit)
	if !ok || next.Value == "" {
		return false
	}
	return strings.IndexByte(")|/.,:;]}=+%^&<>\\ \t\n", next.Value[0]) >= 0
}

// doubleQuotedLit applies the double-quote rules: a backslash escapes only
// $ ` " \ and newline, and no glob character is special.
func (w *shWalker) doubleQuotedLit(s string, val, pat *strings.Builder) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '$', '`':
			return w.fail(evidence.ClassSubstitution, dollarReason(s[i:])+" (double quotes do not stop expansion)")
		case '\\':
			if i+1 < len(s) {
				switch n := s[i+1]; n {
				case '$', '`':
					return w.fail(evidence.ClassSubstitution, "an escaped `"+string(n)+"` is refused too; put literal dollar signs and backquotes in single quotes")
				case '"', '\\':
					i++
					c = n
				case '\n':
					i++
					continue
				}
			}
		}
		val.WriteByte(c)
		writeGlobLiteralByte(pat, c)
	}
	return true
}

func dollarReason(rest string) string {
	switch {
	case rest[0] == '`':
		return "backquote command substitution is not allowed: run the inner command on its own"
	case strings.HasPrefix(rest, "$(("):
		return "`$((…))` arithmetic expansion is not allowed"
	case strings.HasPrefix(rest, "$("):
		return "`$(…)` command substitution is not allowed: run the inner command on its own"
	case strings.HasPrefix(rest, "$'"):
		return "`$'…'` quoting expands escape sequences; use plain single quotes"
	case strings.HasPrefix(rest, "$\""):
		return "`$\"…\"` is locale translation, an expansion; use plain quotes"
	}
	return "`$` outside single quotes is parameter expansion; the gate approves literal words only (quote a literal `$` with single quotes)"
}

func writeGlobLiteral(pat *strings.Builder, s string) {
	for i := 0; i < len(s); i++ {
		writeGlobLiteralByte(pat, s[i])
	}
}

// writeGlobLiteralByte writes c so that filepath.Match treats it literally.
func writeGlobLiteralByte(pat *strings.Builder, c byte) {
	switch c {
	case '*', '?', '[', '\\', ']', '-', '^':
		pat.WriteByte('\\')
	}
	pat.WriteByte(c)
}

func partClass(p syntax.WordPart) evidence.Class {
	switch p.(type) {
	case *syntax.ProcSubst, *syntax.ExtGlob, *syntax.BraceExp:
		return evidence.ClassShellConstruct
	}
	return evidence.ClassSubstitution
}

func partName(p syntax.WordPart) string {
	switch x := p.(type) {
	case *syntax.ParamExp:
		if x.Short {
			return "parameter expansion `$" + paramName(x) + "`"
		}
		return "parameter expansion `${" + paramName(x) + "…}`"
	case *syntax.CmdSubst:
		if x.Backquotes {
			return "backquote command substitution"
		}
		return "`$(…)` command substitution"
	case *syntax.ArithmExp:
		return "`$((…))` arithmetic expansion"
	case *syntax.ProcSubst:
		return "process substitution"
	case *syntax.ExtGlob:
		return "extended glob"
	case *syntax.BraceExp:
		return "brace expansion"
	}
	return "an expansion"
}

func paramName(x *syntax.ParamExp) string {
	if x.Param != nil {
		return x.Param.Value
	}
	return ""
}

func constructName(c syntax.Command) string {
	switch c.(type) {
	case *syntax.Subshell:
		return "a subshell `( … )`"
	case *syntax.Block:
		return "a group `{ …; }`"
	case *syntax.FuncDecl:
		return "a function definition"
	case *syntax.IfClause:
		return "`if`"
	case *syntax.WhileClause:
		return "a `while`/`until` loop"
	case *syntax.ForClause:
		return "a `for` loop"
	case *syntax.CaseClause:
		return "`case`"
	case *syntax.ArithmCmd:
		return "an arithmetic command `((…))`"
	case *syntax.TestClause:
		return "a test clause `[[ … ]]`"
	case *syntax.DeclClause:
		return "a declaration"
	case *syntax.LetClause:
		return "`let`"
	case *syntax.TimeClause:
		return "`time`"
	case *syntax.CoprocClause:
		return "`coproc`"
	}
	return "this construct"
}

func describeRedirect(r *syntax.Redirect) string {
	switch r.Op {
	case syntax.Hdoc, syntax.DashHdoc:
		return "a here-document"
	case syntax.WordHdoc:
		return "a here-string"
	}
	op := r.Op.String()
	if r.N != nil {
		op = r.N.Value + op
	}
	if r.Word != nil {
		if lit := r.Word.Lit(); lit != "" && len(lit) < 64 {
			op += lit
		}
	}
	return "redirection `" + op + "`"
}

// classifyUnparsable names what a command that is not valid POSIX sh was
// trying to do, so that `cat <(make)` reads as process substitution rather
// than a syntax error. It re-parses as bash only to pick the class: the
// walk can only refuse, never approve.
func classifyUnparsable(cmd string, perr error) (v violation) {
	v = violation{evidence.ClassUnparsable, "not valid POSIX sh: " + perr.Error()}
	defer func() { _ = recover() }() // classification only: on a parser panic v stays unparsable
	p := syntax.NewParser(syntax.Variant(syntax.LangBash), syntax.KeepComments(true))
	if f, err := p.Parse(strings.NewReader(cmd), ""); err == nil {
		w := shWalker{s: &shScript{}}
		w.stmts(f.Stmts)
		if w.v != nil && w.v.class != evidence.ClassUnparsable {
			v = violation{w.v.class, w.v.reason + " (and the command is not valid POSIX sh)"}
		}
	}
	return v
}

// appendShellQuoted appends s as one single-quoted shell word. Inside single
// quotes nothing is special, so the only character to handle is the quote
// itself, written as '\” (close, escaped quote, reopen).
func appendShellQuoted(b []byte, s string) []byte {
	b = append(b, '\'')
	for i := 0; i < len(s); i++ {
		if s[i] == '\'' {
			b = append(b, `'\''`...)
			continue
		}
		b = append(b, s[i])
	}
	return append(b, '\'')
}

// appendOperator joins two rendered commands.
func appendOperator(b []byte, op string) []byte {
	if op == ";" {
		return append(b, "; "...)
	}
	b = append(b, ' ')
	b = append(b, op...)
	return append(b, ' ')
}

func describeRune(r rune) string {
	const hex = "0123456789ABCDEF"
	b := []byte("U+")
	digits := 4
	if r > 0xffff {
		digits = 6
	}
	for i := digits - 1; i >= 0; i-- {
		b = append(b, hex[(r>>(4*uint(i)))&0xf])
	}
	return string(b)
}

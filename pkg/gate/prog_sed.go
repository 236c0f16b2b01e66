package gate

// sed: GNU sed's options, and its scripts read command by command. The
// script may print, substitute and edit files in place (-i) inside the
// sandbox; it may not run programs (the e command, the s///e flag), and
// the files its r, R, w and W commands (and the s///w flag) name are paths
// checked like any other. BSD sed (macOS) reads `-i SUFFIX` with the
// suffix in the next word and has no long options; both readings are
// checked.

import (
	"strings"

	"github.com/deponent-dev/deponent-action/pkg/evidence"
)

var sedSpec = (&optSpec{Name: "sed", Permute: true, Prefix: true, Alt: true, Opts: []Opt{
	flag("n", "quiet", "silent"), flag("", "debug"), val(roleText, "e", "expression"),
	refused(val(roleRead, "f", "file"), "reads its script from a file, which the gate does not read", "put the script inline with -e"),
	flag("", "follow-symlinks"), altArg(Opt{Short: "i", Long: []string{"in-place"}, Arg: optArg, Role: roleText, Key: "in-place"}, reqArg),
	val(roleText, "l", "line-length"), flag("", "posix"), flag("Er", "regexp-extended"),
	flag("s", "separate"), flag("", "sandbox"), flag("u", "unbuffered"), flag("z", "null-data"),
	flag("b", "binary"), flag("", "help"), flag("", "version"),
}}).build()

var progSed = &Program{
	Family: "sed", Names: []string{"sed"}, Spec: sedSpec,
	Summary: "Edits text. Its operands are files it reads, or writes with -i/--in-place (inside the sandbox, off protected paths; " +
		"a backup suffix must stay in the same directory). The script is read command by command: the files named by r, R, w, W " +
		"and s///w are paths checked like operands (/dev/stdin, /dev/stdout, /dev/stderr allowed). A script with no file commands, " +
		"run without -i, is a pattern (the denylist does not read it).",
	Refuses: []string{"the e command and the s///e flag (they run the pattern space as a shell command)",
		"a script it cannot read (sed would refuse it too; the gate does not approve what it cannot read)",
		"a [...] bracket holding the s or y delimiter (GNU and BSD sed split it differently)"},
	Operands: sedOperands,
}

func sedOperands(inv *invocation, sub *argList, r *scanResult) *violation {
	words := sub.words()
	inPlace := r.get("in-place")
	// The script: every -e value, joined by newlines as sed joins them,
	// or else the first operand.
	type part struct{ arg, off int }
	var parts []part
	for i := range r.opts {
		if o := &r.opts[i]; o.opt.key() == "expression" {
			parts = append(parts, part{sub.at(o.val), o.off})
		}
	}
	files := r.operands
	if len(parts) == 0 {
		if len(files) == 0 {
			return nil // sed reports the missing script
		}
		parts = append(parts, part{sub.at(files[0]), 0})
		files = files[1:]
	}
	var joined strings.Builder
	starts := make([]int, len(parts))
	for k, p := range parts {
		if k > 0 {
			joined.WriteByte('\n')
		}
		starts[k] = joined.Len()
		joined.WriteString(inv.args[p.arg][p.off:])
	}
	script := joined.String()
	res := readSedScript(script, inv.alt)
	if res.err != "" && inv.alt {
		return nil // BSD sed would refuse this script: that reading does nothing
	}
	switch {
	case res.danger != "":
		return refuse(evidence.ClassUnsafeOption, "sed script "+res.danger+" would run a shell command; it is refused (edit files with s///, or with edit_file)")
	case res.err != "":
		return refuse(evidence.ClassUnsafeOption, "sed script '"+shown(script)+"': "+res.err+"; the gate approves only scripts it can read")
	case res.ambiguous != "":
		return refuse(evidence.ClassUnsafeOption, "sed script: "+res.ambiguous)
	}
	// Map each file reference back to the word that holds it.
	for _, f := range res.files {
		k := len(starts) - 1
		for k > 0 && starts[k] > f.start {
			k--
		}
		p := parts[k]
		what := "the file of sed's " + f.cmd + " command"
		inv.add(p.arg, f.name, f.role, what)
	}
	scriptRole := roleText
	if inPlace == nil && len(res.files) == 0 {
		scriptRole = rolePattern
	}
	for _, p := range parts {
		inv.add(p.arg, inv.args[p.arg][p.off:], scriptRole, "")
	}
	role := roleRead
	if inPlace != nil {
		role = roleWrite
	}
	var suffix string
	if inPlace != nil {
		suffix, _ = inPlace.value(words)
		if strings.ContainsRune(suffix, '/') {
			return refuse(evidence.ClassUnsafeOption, "sed "+inPlace.name+" backup suffix '"+shown(suffix)+"' names another directory; use a plain suffix such as .bak, or none")
		}
	}
	for _, i := range files {
		w := words[i]
		inv.addWord(sub.at(i), role)
		if suffix != "" && w != "-" {
			inv.add(sub.at(i), sedBackupName(w, suffix), roleWrite, "the backup of '"+shown(w)+"'")
		}
	}
	return nil
}

// sedBackupName is the backup sed -i SUFFIX writes for file: the suffix
// appended, or, when it holds '*', the suffix with '*' replaced by the
// file's name, in the file's directory.
func sedBackupName(file, suffix string) string {
	if !strings.ContainsRune(suffix, '*') {
		return file + suffix
	}
	dir, base := "", file
	if i := strings.LastIndexByte(file, '/'); i >= 0 {
		dir, base = file[:i+1], file[i+1:]
	}
	return dir + strings.ReplaceAll(suffix, "*", base)
}

// sedFile is a file a script's command names.
type sedFile struct {
	cmd   string // "w", "r", "s///w", …
	name  string
	role  Role
	start int // offset in the script
}

type sedResult struct {
	files     []sedFile
	danger    string // a command that runs programs
	err       string // the script does not parse
	ambiguous string // GNU and BSD would split it differently
}

// readSedScript reads a sed script the way GNU sed does (bsd: the way BSD
// sed does: labels run to the end of the line, and a bracket expression
// hides the s delimiter). It knows every command of both, so a script it
// cannot read is one sed rejects as well.
func readSedScript(s string, bsd bool) (res sedResult) {
	p := sedParser{s: s, bsd: bsd, res: &res}
	p.run()
	return res
}

type sedParser struct {
	s     string
	i     int
	bsd   bool
	depth int
	res   *sedResult
}

func (p *sedParser) fail(msg string) bool {
	if p.res.err == "" {
		p.res.err = msg
	}
	return false
}

func (p *sedParser) eof() bool { return p.i >= len(p.s) }

func (p *sedParser) peek() byte {
	if p.eof() {
		return 0
	}
	return p.s[p.i]
}

func (p *sedParser) skipBlanks() {
	for !p.eof() && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

func (p *sedParser) run() {
	for {
		for !p.eof() && strings.IndexByte(" \t\n;", p.s[p.i]) >= 0 {
			p.i++
		}
		if p.eof() {
			if p.depth > 0 {
				p.fail("unmatched `{`")
			}
			return
		}
		if !p.command() {
			return
		}
	}
}

func (p *sedParser) command() bool {
	if p.peek() == '#' {
		p.toEOL()
		return true
	}
	if !p.address() {
		return false
	}
	p.skipBlanks()
	if p.peek() == ',' {
		p.i++
		p.skipBlanks()
		if !p.address() {
			return false
		}
		p.skipBlanks()
	}
	for p.peek() == '!' {
		p.i++
		p.skipBlanks()
	}
	if p.eof() {
		return p.fail("missing command")
	}
	c := p.s[p.i]
	p.i++
	switch c {
	case '{':
		p.depth++
		return true
	case '}':
		if p.depth == 0 {
			return p.fail("unexpected `}`")
		}
		p.depth--
		return p.end()
	case '=', 'd', 'D', 'g', 'G', 'h', 'H', 'n', 'N', 'p', 'P', 'x', 'z', 'F':
		return p.end()
	case 'l', 'L', 'q', 'Q':
		p.skipBlanks()
		for !p.eof() && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
			p.i++
		}
		return p.end()
	case 'a', 'i', 'c':
		p.text()
		return true
	case ':':
		p.skipBlanks()
		if p.label() == "" {
			return p.fail("`:` needs a label")
		}
		return true
	case 'b', 't', 'T':
		p.skipBlanks()
		p.label()
		return true
	case 'r', 'R', 'w', 'W':
		return p.file(string(c))
	case 'e':
		p.res.danger = "command `e`"
		return false
	case 'v':
		p.skipBlanks()
		p.label()
		return true
	case 's':
		return p.substitute()
	case 'y':
		d, ok := p.delim()
		if !ok {
			return false
		}
		if !p.delimited(d) || !p.delimited(d) {
			return false
		}
		return p.end()
	}
	return p.fail("unknown command `" + string(c) + "`")
}

// address reads an optional address.
func (p *sedParser) address() bool {
	switch c := p.peek(); {
	case c >= '0' && c <= '9':
		p.digits()
		if p.peek() == '~' {
			p.i++
			p.digits()
		}
	case c == '$':
		p.i++
	case c == '+' || c == '~':
		p.i++
		if !p.digits() {
			return p.fail("`" + string(c) + "` needs a number")
		}
	case c == '/' || c == '\\':
		d := byte('/')
		p.i++
		if c == '\\' {
			if p.eof() || p.s[p.i] == '\n' || p.s[p.i] == '\\' {
				return p.fail("bad regex delimiter")
			}
			d = p.s[p.i]
			p.i++
		}
		if !p.delimited(d) {
			return false
		}
		for p.peek() == 'I' || p.peek() == 'M' {
			p.i++
		}
	}
	return true
}

func (p *sedParser) digits() bool {
	start := p.i
	for !p.eof() && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
		p.i++
	}
	return p.i > start
}

// end reads what may follow a command: blanks, then `;`, a newline, `}`,
// `#` or the end.
func (p *sedParser) end() bool {
	p.skipBlanks()
	switch p.peek() {
	case 0:
		return true
	case ';', '\n':
		p.i++
		return true
	case '}', '#':
		return true
	}
	return p.fail("extra characters after a command")
}

func (p *sedParser) toEOL() string {
	start := p.i
	for !p.eof() && p.s[p.i] != '\n' {
		p.i++
	}
	return p.s[start:p.i]
}

// text reads the text of a, i or c: to the end of the line, a backslash
// before the newline continuing it.
func (p *sedParser) text() {
	for !p.eof() {
		switch p.s[p.i] {
		case '\\':
			p.i += 2
			continue
		case '\n':
			p.i++
			return
		}
		p.i++
	}
}

// label reads a label: GNU ends it at `;` or a newline, BSD only at a
// newline.
func (p *sedParser) label() string {
	start := p.i
	for !p.eof() && p.s[p.i] != '\n' && (p.bsd || p.s[p.i] != ';') {
		p.i++
	}
	l := strings.TrimRight(p.s[start:p.i], " \t")
	if !p.eof() {
		p.i++
	}
	return l
}

// file reads the file name of r, R, w or W: the rest of the line.
func (p *sedParser) file(cmd string) bool {
	p.skipBlanks()
	start := p.i
	name := p.toEOL()
	if name == "" {
		return p.fail("`" + cmd + "` needs a file name")
	}
	role := roleRead
	special := name == "/dev/stdin"
	if cmd == "w" || cmd == "W" || cmd == "s///w" {
		role = roleWrite
		special = name == "/dev/stdout" || name == "/dev/stderr"
	}
	if !special {
		p.res.files = append(p.res.files, sedFile{cmd: cmd, name: name, role: role, start: start})
	}
	return true
}

func (p *sedParser) delim() (byte, bool) {
	if p.eof() || p.s[p.i] == '\n' || p.s[p.i] == '\\' {
		return 0, p.fail("bad delimiter")
	}
	d := p.s[p.i]
	p.i++
	return d, true
}

// delimited reads up to and past the next unescaped delimiter d. A
// bracket expression holding d is where GNU (which ends at d) and BSD
// (which skips the bracket) disagree: refused as ambiguous.
func (p *sedParser) delimited(d byte) bool {
	inBracket := false
	bracketStart := 0
	for !p.eof() {
		c := p.s[p.i]
		switch {
		case c == '\\':
			p.i += 2
			continue
		case c == '\n' && d != '\n':
			if !inBracket {
				return p.fail("unterminated `" + string(d) + "` expression")
			}
		case inBracket && c == ']' && p.i > bracketStart:
			inBracket = false
		case inBracket && c == '[' && p.i+1 < len(p.s) && strings.IndexByte(":.=", p.s[p.i+1]) >= 0:
			// [:alpha:] and friends: skip to the closing ":]".
			close := strings.Index(p.s[p.i+2:], string(p.s[p.i+1])+"]")
			if close >= 0 {
				p.i += close + 4
				continue
			}
		case !inBracket && c == '[' && d != '[':
			inBracket = true
			bracketStart = p.i + 1
			if p.i+1 < len(p.s) && p.s[p.i+1] == '^' {
				bracketStart++
			}
		case c == d:
			if inBracket {
				p.res.ambiguous = "the delimiter `" + string(d) + "` appears inside a [...] bracket, which GNU and BSD sed read differently; escape it or use another delimiter"
				if !p.bsd {
					p.i++
					return true
				}
			} else {
				p.i++
				return true
			}
		}
		p.i++
	}
	return p.fail("unterminated `" + string(d) + "` expression")
}

func (p *sedParser) substitute() bool {
	d, ok := p.delim()
	if !ok {
		return false
	}
	if !p.delimited(d) {
		return false
	}
	// The replacement: no brackets there.
	for {
		if p.eof() {
			return p.fail("unterminated `s` command")
		}
		c := p.s[p.i]
		if c == '\\' {
			p.i += 2
			continue
		}
		p.i++
		if c == d {
			break
		}
		if c == '\n' {
			return p.fail("unterminated `s` command")
		}
	}
	for !p.eof() {
		switch c := p.s[p.i]; {
		case c == 'g' || c == 'p' || c == 'i' || c == 'I' || c == 'm' || c == 'M' || c >= '0' && c <= '9':
			p.i++
		case c == 'e':
			p.res.danger = "flag `s///e`"
			return false
		case c == 'w':
			p.i++
			return p.file("s///w")
		default:
			return p.end()
		}
	}
	return true
}

package gate

// awk (gawk, mawk, BSD awk): the options these share, and the program
// read token by token. A program may compute and print; it may not run
// commands (system(), pipes to or from commands), read files it names
// (getline < file, or by changing ARGV, the list of files awk opens),
// write files (print > file) or load code (@load, @include, gawk's @f()
// indirect calls). Operands are files it reads, or
// `var=value` assignments.

import (
	"strings"

	"github.com/deponent-dev/deponent-action/pkg/evidence"
)

var awkSpec = (&optSpec{Name: "awk", Permute: false, Opts: []Opt{
	val(roleText, "F", "field-separator"), val(roleText, "v", "assign"),
	Opt{Short: "e", Long: []string{"source"}, Arg: reqArg, Role: roleText, Key: "source"},
	flag("b", "characters-as-bytes"), flag("c", "traditional"), flag("C", "copyright"), flag("g", "gen-pot"),
	flag("h", "help"), flag("k", "csv"), optval(roleText, "L", "lint"), flag("M", "bignum"), flag("N", "use-lc-numeric"),
	flag("n", "non-decimal-data"), flag("O", "optimize"), flag("P", "posix"), flag("r", "re-interval"),
	flag("s", "no-optimize"), flag("S", "sandbox"), flag("t", "lint-old"), flag("V", "version"),
	optval(roleWrite, "d", "dump-variables"), optval(roleWrite, "o", "pretty-print"), optval(roleWrite, "p", "profile"),
	refused(val(roleRead, "f", "file"), "reads its program from a file, which the gate does not read", "give the program inline"),
	refused(val(roleText, "E", "exec"), "reads its program from a file, which the gate does not read", "give the program inline"),
	refused(val(roleText, "i", "include"), "loads awk source from a file", "give the program inline"),
	refused(val(roleText, "l", "load"), "loads a compiled extension", "leave it out"),
	refused(optval(roleText, "D", "debug"), "starts the interactive debugger", "leave it out"),
	refused(val(roleText, "W"), "sets implementation options (mawk's -W exec reads a program file)", "leave it out"),
}}).build()

var progAwk = &Program{
	Family: "awk", Names: []string{"awk", "gawk", "mawk", "nawk"}, Spec: awkSpec, Operands: awkOperands,
	Summary: "Runs an awk program given inline. Operands are files it reads, or var=value assignments. The program may compute and print.",
	Refuses: []string{"system(), | pipes and |& coprocesses, getline from a file or command, ARGV and SYMTAB (changing ARGV makes awk read other files), print/printf redirected to a file, " +
		"@load, @include and @-indirect calls", "a program it cannot read (unterminated string or regular expression)"},
}

func awkOperands(inv *invocation, sub *argList, r *scanResult) *violation {
	words := sub.words()
	ops := r.operands
	var progs []int
	for i := range r.opts {
		if o := &r.opts[i]; o.opt.key() == "source" {
			v, _ := o.value(words)
			if why := checkAwkProgram(v); why != "" {
				return refuse(evidence.ClassUnsafeOption, "awk program: "+why)
			}
			progs = append(progs, o.val)
		}
	}
	if len(progs) == 0 {
		if len(ops) == 0 {
			return nil
		}
		p := words[ops[0]]
		if why := checkAwkProgram(p); why != "" {
			return refuse(evidence.ClassUnsafeOption, "awk program: "+why)
		}
		inv.addWord(sub.at(ops[0]), roleText)
		ops = ops[1:]
	}
	for _, i := range ops {
		a := words[i]
		if name, _, ok := strings.Cut(a, "="); ok && isAwkName(name) {
			inv.addWord(sub.at(i), roleText)
			continue
		}
		inv.addWord(sub.at(i), roleRead)
	}
	return nil
}

func isAwkName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !(isASCIIAlnum(s[i]) || s[i] == '_') {
			return false
		}
	}
	return true
}

// checkAwkProgram returns why a program is refused, or "". It lexes the
// program twice — with "/" inside a bracket expression ending a regular
// expression and without — because awks disagree, and refuses what either
// reading finds.
func checkAwkProgram(p string) string {
	for _, bracketAware := range []bool{false, true} {
		if why := lexAwk(p, bracketAware); why != "" {
			return why
		}
	}
	return ""
}

func lexAwk(p string, bracketAware bool) string {
	const (
		opStart = iota // the next "/" begins a regular expression
		afterOperand
	)
	state := opStart
	depth := 0        // parentheses
	inPrint := false  // inside a print or printf statement
	printDepth := 0   // parenthesis depth where that statement began
	afterGetline := 0 // tokens since getline (1: the next may be its variable)
	for i := 0; i < len(p); {
		c := p[i]
		switch {
		case c == ' ' || c == '\t' || c == '\\' && i+1 < len(p) && p[i+1] == '\n':
			if c == '\\' {
				i++
			}
			i++
			continue
		case c == '#':
			for i < len(p) && p[i] != '\n' {
				i++
			}
			continue
		case c == '\n' || c == ';' || c == '{' || c == '}':
			if depth == printDepth {
				inPrint = false
			}
			afterGetline = 0
			state = opStart
			i++
			continue
		case c == '"':
			j := i + 1
			for ; j < len(p) && p[j] != '"'; j++ {
				if p[j] == '\\' {
					j++
				}
				if j < len(p) && p[j] == '\n' {
					return "a string is not terminated on its line"
				}
			}
			if j >= len(p) {
				return "a string is not terminated"
			}
			i = j + 1
			state = afterOperand
			afterGetline = 0
			continue
		case c == '/' && state == opStart:
			j := i + 1
			inBracket := false
			for ; j < len(p); j++ {
				switch {
				case p[j] == '\\':
					j++
				case p[j] == '\n':
					return "a regular expression is not terminated on its line"
				case bracketAware && p[j] == '[' && !inBracket:
					inBracket = true
					if j+1 < len(p) && p[j+1] == ']' {
						j++
					}
				case bracketAware && p[j] == ']' && inBracket:
					inBracket = false
				case p[j] == '/' && !inBracket:
					goto done
				}
			}
			return "a regular expression is not terminated"
		done:
			i = j + 1
			state = afterOperand
			continue
		case isASCIIAlnum(c) || c == '_':
			j := i
			for j < len(p) && (isASCIIAlnum(p[j]) || p[j] == '_') {
				j++
			}
			word := p[i:j]
			i = j
			switch word {
			case "system":
				return "system() runs a shell command; compute in awk, or run the command yourself"
			case "ARGV", "SYMTAB":
				// awk opens the files ARGV names when the main rules run, so a
				// program that changes ARGV (assigned, split into, sub()'d,
				// passed to a function, or reached through gawk's SYMTAB)
				// reads files the gate never saw.
				return word + " lets the program change which files awk reads, which the gate cannot check; pass the files as operands (FILENAME names the current one)"
			case "getline":
				afterGetline = 1
				state = opStart
				continue
			case "print", "printf":
				inPrint, printDepth = true, depth
				state = opStart
				continue
			case "in", "return", "case", "do", "else", "delete", "exit":
				state = opStart
				continue
			}
			if afterGetline == 1 {
				afterGetline = 2 // getline var
			}
			state = afterOperand
			continue
		case c == '@':
			return "@load, @include and @-indirect calls load or call code by name"
		case c == '|':
			if i+1 < len(p) && p[i+1] == '|' {
				i += 2
				state = opStart
				continue
			}
			return "a | pipe runs a shell command; compute in awk, or pipe the output in the command line instead"
		case c == '<':
			if afterGetline > 0 {
				return "getline < FILE reads a file the gate cannot check; pass the file as an operand"
			}
		case c == '>':
			if inPrint && depth == printDepth {
				return "print > FILE writes a file the gate cannot check; print to standard output"
			}
		case c == '(':
			depth++
			state = opStart
			i++
			continue
		case c == ')':
			depth--
			state = afterOperand
			i++
			continue
		case c == ']':
			state = afterOperand
			i++
			continue
		case c == '$':
			state = opStart
			i++
			continue
		}
		// An operator.
		if (c == '+' || c == '-') && i+1 < len(p) && p[i+1] == c {
			i += 2 // ++ and -- leave the state as it was
			continue
		}
		afterGetline = 0
		state = opStart
		i++
	}
	return ""
}

package gate

// Coreutils and the small readers: cat, head, tail, wc, sort, uniq, diff,
// ls, echo, printf, pwd, true/false, which. Options are GNU coreutils'
// (getopt_long: clusters, glued values, unambiguous prefixes, options
// after operands); the BSD variants on macOS stop reading options at the
// first operand, and every word is also checked under that reading.

import (
	"strings"

	"github.com/deponent-dev/deponent-action/pkg/evidence"
)

const followRefusal = "waits for more data forever; the command would only end at the wall-clock limit"

var progCat = &Program{
	Family: "cat", Names: []string{"cat"}, Operand: roleRead,
	Summary: "Prints files. Every operand is a file it reads: inside the sandbox (protected paths may be read).",
	Spec: (&optSpec{Name: "cat", Permute: true, Prefix: true, Alt: true, Opts: []Opt{
		flag("A", "show-all"), flag("b", "number-nonblank"), flag("e"), flag("E", "show-ends"),
		flag("n", "number"), flag("s", "squeeze-blank"), flag("t"), flag("T", "show-tabs"),
		flag("u"), flag("v", "show-nonprinting"), flag("l"), flag("", "help"), flag("", "version"),
	}}).build(),
}

var progHead = &Program{
	Family: "head", Names: []string{"head"}, Operand: roleRead,
	Summary: "Prints the first lines of files, which it reads (inside the sandbox).",
	Spec: (&optSpec{Name: "head", Permute: true, Prefix: true, Alt: true, DigitOpts: true, Opts: []Opt{
		val(roleText, "c", "bytes"), val(roleText, "n", "lines"), flag("q", "quiet", "silent"),
		flag("v", "verbose"), flag("z", "zero-terminated"), flag("", "help"), flag("", "version"),
	}}).build(),
}

var tailSpec = (&optSpec{Name: "tail", Permute: true, Prefix: true, Alt: true, DigitOpts: true, Opts: []Opt{
	val(roleText, "c", "bytes"), val(roleText, "n", "lines"), flag("q", "quiet", "silent"),
	flag("v", "verbose"), flag("z", "zero-terminated"), flag("", "help"), flag("", "version"),
	refused(optval(roleText, "f", "follow"), followRefusal, "read the file once with tail -n N"),
	refused(flag("F"), followRefusal, "read the file once with tail -n N"),
	flag("", "retry"), val(roleText, "s", "sleep-interval"), val(roleText, "", "max-unchanged-stats"),
	val(roleText, "", "pid"),
}}).build()

var progTail = &Program{
	Family: "tail", Names: []string{"tail"}, Operand: roleRead,
	Summary: "Prints the last lines of files, which it reads (inside the sandbox).",
	Spec:    tailSpec,
	Refuses: []string{"the obsolete first-argument forms that follow (`+1f`, `-cf`, `+5lf`): GNU tail reads them before getopt, so `-cf` is \"follow\", not -c with the value f"},
	Run: func(inv *invocation, args *argList) *violation {
		if w := args.words(); len(w) > 0 && tailObsoleteFollow(w[0]) {
			return refuse(evidence.ClassUnsafeOption, "tail reads '"+shown(w[0])+"' as its obsolete count option, which ends in f: it "+
				followRefusal+"; read the file once with tail -n N (write ./"+shown(w[0])+" for a file so named)")
		}
		return inv.runSpec(tailSpec, args, func(inv *invocation, sub *argList, r *scanResult) *violation {
			for _, i := range r.operands {
				inv.addWord(sub.at(i), roleRead)
			}
			return nil
		})
	},
}

// tailObsoleteFollow reports whether a first argument is tail's obsolete
// option "+N[bcl]f" or "-[N][bcl]f" (GNU parse_obsolete_option, BSD
// obsolete()), which the programs read before getopt when the argument
// list is short. Whether the list is short enough is not checked: a first
// word of this shape follows under some reading, and "./+1f" names a file.
// A plain "-f" is left to the option table, which refuses it too.
func tailObsoleteFollow(w string) bool {
	if len(w) < 2 || w == "-f" || (w[0] != '+' && w[0] != '-') || w[len(w)-1] != 'f' {
		return false
	}
	body := strings.TrimLeft(w[1:len(w)-1], "0123456789")
	return body == "" || body == "b" || body == "c" || body == "l"
}

const namesFromFile = "reads the names of the files to open from a file, which the gate never sees"

var progWc = &Program{
	Family: "wc", Names: []string{"wc"}, Operand: roleRead,
	Summary: "Counts lines, words and bytes of files it reads (inside the sandbox).",
	Spec: (&optSpec{Name: "wc", Permute: true, Prefix: true, Alt: true, Opts: []Opt{
		flag("c", "bytes"), flag("m", "chars"), flag("l", "lines"), flag("L", "max-line-length"),
		flag("w", "words"), val(roleText, "", "total"), flag("", "help"), flag("", "version"),
		refused(val(roleRead, "", "files0-from"), namesFromFile, "name the files as operands"),
	}}).build(),
}

var progSort = &Program{
	Family: "sort", Names: []string{"sort"}, Operand: roleRead,
	Summary: "Sorts lines of the files it reads; -o writes its output file and -T its temporary files, both inside the sandbox and off protected paths.",
	Spec: (&optSpec{Name: "sort", Permute: true, Prefix: true, Alt: true, Opts: []Opt{
		flag("b", "ignore-leading-blanks"), flag("d", "dictionary-order"), flag("f", "ignore-case"),
		flag("g", "general-numeric-sort"), flag("i", "ignore-nonprinting"), flag("M", "month-sort"),
		flag("h", "human-numeric-sort"), flag("n", "numeric-sort"), flag("R", "random-sort"),
		val(roleRead, "", "random-source"), flag("r", "reverse"), val(roleText, "", "sort"),
		flag("V", "version-sort"), val(roleText, "", "batch-size"), flag("c"), optval(roleText, "", "check"),
		flag("C"), flag("", "debug"), val(roleText, "k", "key"), flag("m", "merge"),
		val(roleWrite, "o", "output"), flag("s", "stable"), val(roleText, "S", "buffer-size"),
		val(roleText, "t", "field-separator"), val(roleWrite, "T", "temporary-directory"),
		val(roleText, "", "parallel"), flag("u", "unique"), flag("z", "zero-terminated"),
		flag("", "help"), flag("", "version"),
		refused(val(roleText, "", "compress-program"), "runs the program it names to compress temporary files", "leave it out"),
		refused(val(roleRead, "", "files0-from"), namesFromFile, "name the files as operands"),
	}}).build(),
}

var progUniq = &Program{
	Family: "uniq", Names: []string{"uniq"},
	Summary: "Filters repeated lines. Its first operand is read; its second operand is the file it writes (inside the sandbox, off protected paths).",
	Spec: (&optSpec{Name: "uniq", Permute: true, Prefix: true, Alt: true, Opts: []Opt{
		flag("c", "count"), flag("d", "repeated"), flag("D"), optval(roleText, "", "all-repeated"),
		val(roleText, "f", "skip-fields"), optval(roleText, "", "group"), flag("i", "ignore-case"),
		val(roleText, "s", "skip-chars"), flag("u", "unique"), flag("z", "zero-terminated"),
		val(roleText, "w", "check-chars"), flag("", "help"), flag("", "version"),
	}}).build(),
	Refuses: []string{"an operand starting with + (uniq reads `+N` as its obsolete skip-chars option wherever it stands, and the next operand becomes the file it writes)"},
	Operands: func(inv *invocation, sub *argList, r *scanResult) *violation {
		words := sub.words()
		for _, i := range r.operands {
			if strings.HasPrefix(words[i], "+") {
				return refuse(evidence.ClassUnsafeOption, "uniq reads '"+shown(words[i])+
					"' as its obsolete skip-chars option, not as a file, so the operand after it would be the file it writes; write -s N (or ./"+
					shown(words[i])+" for a file so named)")
			}
		}
		for k, i := range r.operands {
			role := roleRead
			if k == 1 {
				role = roleWrite
			}
			inv.addWord(sub.at(i), role)
		}
		return nil
	},
}

var progDiff = &Program{
	Family: "diff", Names: []string{"diff"}, Operand: roleRead,
	Summary: "Compares files it reads (inside the sandbox). Its regular expressions and file-name patterns are patterns. " +
		"Recursive comparison (-r) follows symbolic links inside the trees it walks: the jail's read policy, not the gate, bounds those reads.",
	Spec: (&optSpec{Name: "diff", Permute: true, Prefix: true, Opts: opts(one(
		flag("", "normal"), flag("q", "brief"), flag("s", "report-identical-files"), flag("c"),
		val(roleText, "C"), optval(roleText, "", "context"), flag("u"), val(roleText, "U"),
		optval(roleText, "", "unified"), flag("e", "ed"), flag("n", "rcs"), flag("y", "side-by-side"),
		val(roleText, "W", "width"), flag("", "left-column"), flag("", "suppress-common-lines"),
		flag("p", "show-c-function"), val(rolePattern, "F", "show-function-line"), val(roleText, "", "label"),
		flag("t", "expand-tabs"), flag("T", "initial-tab"), val(roleText, "", "tabsize"),
		flag("", "suppress-blank-empty"), flag("r", "recursive"), flag("", "no-dereference"),
		flag("N", "new-file"), flag("", "unidirectional-new-file"), flag("", "ignore-file-name-case"),
		flag("", "no-ignore-file-name-case"), val(rolePattern, "x", "exclude"), val(roleRead, "X", "exclude-from"),
		val(roleText, "S", "starting-file"), val(roleRead, "", "from-file"), val(roleRead, "", "to-file"),
		flag("i", "ignore-case"), flag("E", "ignore-tab-expansion"), flag("Z", "ignore-trailing-space"),
		flag("b", "ignore-space-change"), flag("w", "ignore-all-space"), flag("B", "ignore-blank-lines"),
		val(rolePattern, "I", "ignore-matching-lines"), flag("a", "text"), flag("", "strip-trailing-cr"),
		val(roleText, "D", "ifdef"), val(roleText, "", "line-format"), flag("d", "minimal"),
		val(roleText, "", "horizon-lines"), flag("", "speed-large-files"), optval(roleText, "", "color"),
		val(roleText, "", "palette"), flag("", "help"), flag("v", "version"),
		refused(flag("l", "paginate"), "runs the pr program on the output", "leave it out"),
	), diffFormatOpts())}).build(),
}

// diffFormatOpts: --old-group-format, --new-line-format, ….
func diffFormatOpts() []Opt {
	var out []Opt
	for _, t := range []string{"old", "new", "unchanged", "changed"} {
		out = append(out, val(roleText, "", t+"-group-format"))
		if t != "changed" {
			out = append(out, val(roleText, "", t+"-line-format"))
		}
	}
	return out
}

var progLs = &Program{
	Family: "ls", Names: []string{"ls"}, Operand: roleRead,
	Summary: "Lists directories it reads (inside the sandbox); its ignore patterns are patterns.",
	Spec: (&optSpec{Name: "ls", Permute: true, Prefix: true, Alt: true, Opts: []Opt{
		flag("a", "all"), flag("A", "almost-all"), flag("", "author"), flag("b", "escape"),
		val(roleText, "", "block-size"), flag("B", "ignore-backups"), flag("c"), flag("C"),
		optval(roleText, "", "color"), flag("d", "directory"), flag("D", "dired"), flag("f"),
		optval(roleText, "F", "classify"), flag("", "file-type"), val(roleText, "", "format"),
		flag("", "full-time"), flag("g"), flag("", "group-directories-first"), flag("G", "no-group"),
		flag("h", "human-readable"), flag("", "si"), flag("H", "dereference-command-line"),
		flag("", "dereference-command-line-symlink-to-dir"), val(rolePattern, "", "hide"),
		optval(roleText, "", "hyperlink"), val(roleText, "", "indicator-style"), flag("i", "inode"),
		val(rolePattern, "I", "ignore"), flag("k", "kibibytes"), flag("l"), flag("m"),
		flag("n", "numeric-uid-gid"), flag("N", "literal"), flag("o"), flag("p"),
		flag("q", "hide-control-chars"), flag("", "show-control-chars"), flag("Q", "quote-name"),
		val(roleText, "", "quoting-style"), flag("r", "reverse"), flag("R", "recursive"),
		flag("s", "size"), flag("S"), val(roleText, "", "sort"), val(roleText, "", "time"),
		val(roleText, "", "time-style"), flag("t"), val(roleText, "T", "tabsize"), flag("u"), flag("U"),
		flag("v"), val(roleText, "w", "width"), flag("x"), flag("X"), flag("Z", "context"),
		flag("", "zero"), flag("1"), flag("", "help"), flag("", "version"),
		refused(flag("L", "dereference"), "follows symbolic links, which may lead out of the sandbox (with -R it walks through them)",
			"use -H to follow only the links you name"),
	}}).build(),
}

var progEcho = &Program{
	Family: "echo", Names: []string{"echo"},
	Summary: "Prints its arguments: every argument is text (never a path; the denylist still reads it).",
	Run: func(inv *invocation, args *argList) *violation {
		for i := range args.words() {
			inv.addWord(args.at(i), roleText)
		}
		return nil
	},
}

var progPrintf = &Program{
	Family: "printf", Names: []string{"printf"},
	Summary: "Prints a format and its arguments, all text.",
	Refuses: []string{"an option before the format (bash's builtin printf -v assigns a shell variable, which would change how later commands run)"},
	Run: func(inv *invocation, args *argList) *violation {
		w := args.words()
		if len(w) > 0 && len(w[0]) > 1 && w[0][0] == '-' && w[0] != "--" {
			return refuse(evidence.ClassUnsafeOption, "printf "+shown(w[0])+": options are refused (bash's printf -v assigns a shell variable); start the format with something other than '-', or put '--' first")
		}
		for i := range w {
			inv.addWord(args.at(i), roleText)
		}
		return nil
	},
}

var progPwd = &Program{
	Family: "pwd", Names: []string{"pwd"}, Operand: roleText,
	Summary: "Prints the working directory.",
	Spec:    (&optSpec{Name: "pwd", Opts: []Opt{flag("L"), flag("P"), flag("", "help"), flag("", "version")}}).build(),
}

var progTrue = &Program{
	Family: "true", Names: []string{"true", "false"},
	Summary: "Does nothing; its arguments are ignored text.",
	Run: func(inv *invocation, args *argList) *violation {
		for i := range args.words() {
			inv.addWord(args.at(i), roleText)
		}
		return nil
	},
}

var progWhich = &Program{
	Family: "which", Names: []string{"which"}, Operand: rolePattern,
	Summary: "Looks programs up on the trusted PATH: its operands are program names, not paths (so `which curl` is a question, not a download).",
	Spec:    (&optSpec{Name: "which", Permute: true, Alt: true, Opts: []Opt{flag("a"), flag("s")}}).build(),
}

var progMkdir = &Program{
	Family: "mkdir", Names: []string{"mkdir"}, Operand: roleWrite,
	Summary: "Creates directories: every operand is a path it writes (inside the sandbox, off protected paths).",
	Spec: (&optSpec{Name: "mkdir", Permute: true, Prefix: true, Alt: true, Opts: []Opt{
		val(roleText, "m", "mode"), flag("p", "parents"), flag("v", "verbose"), flag("Z"),
		optval(roleText, "", "context"), flag("", "help"), flag("", "version"),
	}}).build(),
}

var progTouch = &Program{
	Family: "touch", Names: []string{"touch"}, Operand: roleWrite,
	Summary: "Creates files or updates their times: every operand is a path it writes; -r reads its reference file.",
	Spec: (&optSpec{Name: "touch", Permute: true, Prefix: true, Alt: true, Opts: []Opt{
		flag("a"), flag("c", "no-create"), val(roleText, "d", "date"), flag("f"),
		flag("h", "no-dereference"), flag("m"), val(roleRead, "r", "reference"), val(roleText, "t"),
		val(roleText, "", "time"), flag("", "help"), flag("", "version"),
	}}).build(),
}

var progTee = &Program{
	Family: "tee", Names: []string{"tee"}, Operand: roleWrite,
	Summary: "Copies its input to files: every operand is a path it writes (inside the sandbox, off protected paths).",
	Spec: (&optSpec{Name: "tee", Permute: true, Prefix: true, Alt: true, Opts: []Opt{
		flag("a", "append"), flag("i", "ignore-interrupts"), flag("p"), optval(roleText, "", "output-error"),
		flag("", "help"), flag("", "version"),
	}}).build(),
}

// progProject is the model of an allow_executables program (./gradlew):
// the project's own program, whose options the gate cannot know, so every
// argument is checked as a path it may write.
var progProject = &Program{
	Family: "project",
	Run: func(inv *invocation, args *argList) *violation {
		for i := range args.words() {
			inv.addWord(args.at(i), roleArg)
		}
		return nil
	},
}

package gate

// make: GNU make's options. make runs the recipes of the project's
// makefile — the project's own code, like a script, bounded by the jail.
// What the gate refuses is code or makefiles from elsewhere: --eval,
// makefiles outside the sandbox, -C (another directory; use cd), and
// variable assignments that make would expand ($(shell …)) or that choose
// the shell recipes run in.

import (
	"strings"

	"github.com/deponent-dev/deponent-action/pkg/evidence"
)

var makeSpec = (&optSpec{Name: "make", Permute: true, Prefix: true, Alt: true, Opts: []Opt{
	flag("b"), flag("m"), flag("B", "always-make"), flag("d"), optval(roleText, "", "debug"),
	flag("e", "environment-overrides"), val(roleRead, "f", "file", "makefile"), flag("h", "help"),
	flag("i", "ignore-errors"), val(roleRead, "I", "include-dir"), Opt{Short: "j", Long: []string{"jobs"}, Arg: optNext, Role: roleText},
	flag("k", "keep-going"), Opt{Short: "l", Long: []string{"load-average", "max-load"}, Arg: optNext, Role: roleText},
	flag("L", "check-symlink-times"), flag("n", "just-print", "dry-run", "recon"), val(roleText, "o", "old-file", "assume-old"),
	optval(roleText, "O", "output-sync"), flag("p", "print-data-base"), flag("q", "question"), flag("r", "no-builtin-rules"),
	flag("R", "no-builtin-variables"), flag("s", "silent", "quiet"), flag("", "no-silent"), flag("S", "no-keep-going", "stop"),
	flag("t", "touch"), flag("", "trace"), flag("v", "version"), flag("w", "print-directory"),
	flag("", "no-print-directory"), val(roleText, "W", "what-if", "new-file", "assume-new"),
	flag("", "warn-undefined-variables"), optval(roleText, "", "shuffle"),
	refused(val(roleText, "E", "eval"), "evaluates makefile text given on the command line, which can run any command", "put the rule in the project's makefile"),
	refused(val(roleText, "C", "directory"), "runs make in another directory, where relative paths mean something else", "use `cd DIR && make …`"),
	refused(val(roleText, "", "jobserver-auth", "jobserver-fds", "jobserver-style"), "is internal to make", "leave it out"),
}}).build()

// makeProtectedVars choose what runs recipes or which makefiles are read.
var makeProtectedVars = wordSet(`SHELL MAKESHELL .SHELLFLAGS MAKEFLAGS MFLAGS MAKEFILES MAKE MAKEOVERRIDES GNUMAKEFLAGS`)

var progMake = &Program{
	Family: "make", Names: []string{"make", "gmake"}, Spec: makeSpec,
	Summary: "Runs the project's makefile (its recipes are the project's code, bounded by the jail). -f makefiles and -I " +
		"include directories are read (inside the sandbox); operands are targets or VAR=value assignments (text).",
	Refuses: []string{"a $ or backquote in a target or assignment (make would expand it: $(shell …) runs a command)",
		"a VAR!=command assignment (make runs the command in a shell)",
		"assigning SHELL, .SHELLFLAGS, MAKEFLAGS, MAKEFILES and kin on the command line"},
	Operands: func(inv *invocation, sub *argList, r *scanResult) *violation {
		words := sub.words()
		for _, i := range r.operands {
			a := words[i]
			if strings.ContainsAny(a, "$`") {
				return refuse(evidence.ClassUnsafeOption, "make '"+shown(a)+"': make expands $ in targets and assignments ($(shell …) runs a command); write the value without $")
			}
			if name, _, ok := strings.Cut(a, "="); ok {
				if strings.HasSuffix(strings.TrimSpace(name), "!") {
					return refuse(evidence.ClassUnsafeOption, "make '"+shown(a)+"': a != assignment runs its value as a shell command; give the value itself with =")
				}
				name = strings.TrimRight(name, ":+?!")
				if makeProtectedVars[strings.TrimSpace(name)] {
					return refuse(evidence.ClassUnsafeOption, "make "+shown(a)+": setting "+name+" changes what runs the recipes or which makefiles are read; leave it out")
				}
			}
			inv.addWord(sub.at(i), roleText)
		}
		return nil
	},
}

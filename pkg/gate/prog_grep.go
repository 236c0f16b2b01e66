package gate

// grep, egrep, fgrep: GNU grep's options. The pattern (the first operand,
// unless -e or -f gave the patterns) is a pattern: not a path, and not
// read by the denylist, so `grep -rn sudo .` and `grep -n "/etc/hosts" x`
// search for the text. Every other operand is a file read. BSD grep
// (macOS) reads -C's value only when glued; both readings are checked.
// Both greps use getopt_long, which reads options after operands (the
// policy cannot set POSIXLY_CORRECT, which would stop that).

var grepSpec = (&optSpec{Name: "grep", Permute: true, Prefix: true, Alt: true, AltPermute: true, DigitOpts: true, Opts: []Opt{
	flag("E", "extended-regexp"), flag("F", "fixed-strings"), flag("G", "basic-regexp"),
	flag("P", "perl-regexp"), val(rolePattern, "e", "regexp"), val(roleRead, "f", "file"),
	flag("i", "ignore-case"), flag("y"), flag("", "no-ignore-case"), flag("w", "word-regexp"),
	flag("x", "line-regexp"), flag("z", "null-data"), flag("s", "no-messages"),
	flag("v", "invert-match"), flag("V", "version"), flag("", "help"), val(roleText, "m", "max-count"),
	flag("b", "byte-offset"), flag("n", "line-number"), flag("", "line-buffered"),
	flag("H", "with-filename"), flag("h", "no-filename"), val(roleText, "", "label"),
	flag("o", "only-matching"), flag("q", "quiet", "silent"), val(roleText, "", "binary-files"),
	flag("a", "text"), flag("I"), val(roleText, "d", "directories"), val(roleText, "D", "devices"),
	flag("r", "recursive"), val(rolePattern, "", "include"), val(rolePattern, "", "exclude"),
	val(roleRead, "", "exclude-from"), val(rolePattern, "", "exclude-dir"),
	flag("L", "files-without-match"), flag("l", "files-with-matches"), flag("c", "count"),
	flag("T", "initial-tab"), flag("Z", "null"), val(roleText, "B", "before-context"),
	val(roleText, "A", "after-context"), altArg(val(roleText, "C", "context"), optArg),
	val(roleText, "", "group-separator"), flag("", "no-group-separator"),
	optval(roleText, "", "color", "colour"), flag("U", "binary"), flag("u", "unix-byte-offsets"),
	refused(flag("R", "dereference-recursive"), "follows every symbolic link, which may lead out of the sandbox", "use -r, which does not"),
	refused(val(roleText, "X"), "selects a matcher by name (an undocumented GNU option)", "use -E, -F, -G or -P"),
}}).build()

var progGrep = &Program{
	Family: "grep", Names: []string{"grep", "egrep", "fgrep"},
	Summary: "Searches files it reads (inside the sandbox; protected paths may be read). Its pattern, -e values and " +
		"--include/--exclude globs are patterns: never paths, never read by the denylist. -f and --exclude-from files are read.",
	Spec: grepSpec,
	Operands: func(inv *invocation, sub *argList, r *scanResult) *violation {
		explicit := r.has("regexp") || r.has("file")
		for k, i := range r.operands {
			role := roleRead
			if k == 0 && !explicit {
				role = rolePattern
			}
			inv.addWord(sub.at(i), role)
		}
		return nil
	},
}

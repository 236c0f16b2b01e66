package gate

// black (also `python -m black`): click options, no abbreviations. Its
// operands are files it rewrites, or only reads with --check or --diff.

var blackSpec = (&optSpec{Name: "black", Permute: true, Opts: []Opt{
	val(roleText, "c", "code"), val(roleText, "l", "line-length"), val(roleText, "t", "target-version"),
	flag("", "pyi"), flag("", "ipynb"), val(roleText, "", "python-cell-magics"), flag("x", "skip-source-first-line"),
	flag("S", "skip-string-normalization"), flag("C", "skip-magic-trailing-comma"), flag("", "preview"),
	flag("", "unstable"), val(roleText, "", "enable-unstable-feature"), Opt{Long: []string{"check"}, Key: "check"},
	Opt{Long: []string{"diff"}, Key: "diff"}, flag("", "color"), flag("", "no-color"), val(roleText, "", "line-ranges"),
	flag("", "fast"), flag("", "safe"), val(roleText, "", "required-version"), val(rolePattern, "", "exclude"),
	val(rolePattern, "", "extend-exclude"), val(rolePattern, "", "force-exclude"), val(rolePattern, "", "include"),
	val(roleText, "", "stdin-filename"), val(roleText, "W", "workers"), flag("q", "quiet"), flag("v", "verbose"),
	flag("", "version"), val(roleRead, "", "config"), flag("h", "help"),
}}).build()

var progBlack = &Program{
	Family: "black", Names: []string{"black"}, Modules: []string{"black"}, Spec: blackSpec,
	Summary: "Formats Python files: its operands are rewritten (inside the sandbox, off protected paths, and a directory must not hold a protected directory with Python files in it), or only read with --check or --diff. --config is read; the exclude and include expressions are patterns.",
	Operands: func(inv *invocation, sub *argList, r *scanResult) *violation {
		role := roleRewriteTree
		if r.has("check") || r.has("diff") {
			role = roleRead
		}
		for _, i := range r.operands {
			inv.addWord(sub.at(i), role)
		}
		return nil
	},
}

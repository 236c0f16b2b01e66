package gate

// mypy (also `python -m mypy`): argparse with abbreviations on and
// invertible flags (--no-X for --X), and @file argument files, which are
// refused. Operands are files or directories it reads; -m and -p name
// modules and packages (text), -c is code (text). Report and cache
// directories are written.

import "strings"

var mypySpec = (&optSpec{Name: "mypy", Permute: true, Prefix: true, Negate: true, Style: styleArgparse, ArgFiles: true, Opts: opts(
	one(
		flag("h", "help"), flag("v", "verbose"), flag("V", "version"), val(roleRead, "", "config-file"),
		flag("", "warn-unused-configs"), val(roleText, "", "python-version"), val(roleText, "", "platform"),
		val(roleText, "", "always-true"), val(roleText, "", "always-false"), val(roleText, "", "enable-error-code"),
		val(roleText, "", "disable-error-code"), val(roleText, "", "enable-incomplete-feature"),
		val(roleText, "", "follow-imports"), val(roleText, "", "untyped-calls-exclude"),
		val(rolePattern, "", "exclude"), val(roleText, "", "custom-typing-module"), val(roleRead, "", "custom-typeshed-dir"),
		val(roleRead, "", "package-root"), val(roleWrite, "", "cache-dir"), val(roleText, "", "soft-error-limit"),
		val(roleText, "", "output"), val(roleText, "", "junit-format"), val(roleWrite, "", "junit-xml"),
		val(roleText, "m", "module"), val(roleText, "p", "package"), val(roleText, "c", "command"),
		val(roleWrite, "", "timing-stats"), val(roleWrite, "", "line-checking-stats"), val(roleText, "", "find-occurrences"),
		flag("i", "incremental"),
		refused(flag("", "install-types"), "installs stub packages with pip (package install)", "leave it out; the environment's packages are set by the operator"),
		refused(val(roleText, "", "python-executable"), "runs the program it names to find installed packages", "leave it out; mypy uses the interpreter it runs under"),
		refused(val(roleText, "", "cache-map"), "takes a variable number of paths the gate does not read", "leave it out"),
		refused(val(roleText, "", "shadow-file"), "takes two paths in a form the gate does not read", "leave it out"),
	),
	// Report directories.
	mypyReports(),
	// Flags, each invertible with --no- (or written in that form).
	flags(strings.Fields(`non-interactive explicit-package-bases namespace-packages ignore-missing-imports
		follow-untyped-imports no-site-packages no-silence-site-packages disallow-any-unimported disallow-any-expr
		disallow-any-decorated disallow-any-explicit disallow-any-generics disallow-subclassing-any
		disallow-untyped-calls disallow-untyped-defs disallow-incomplete-defs check-untyped-defs
		disallow-untyped-decorators implicit-optional no-implicit-optional strict-optional warn-redundant-casts
		warn-unused-ignores warn-no-return warn-return-any warn-unreachable allow-untyped-globals
		allow-redefinition allow-redefinition-new local-partial-types implicit-reexport strict-equality
		strict-bytes extra-checks strict strict-concatenate disable-bytearray-promotion
		disable-memoryview-promotion force-uppercase-builtins force-union-syntax show-error-context
		show-column-numbers show-error-end hide-error-codes show-error-codes show-error-code-links pretty
		color-output error-summary show-absolute-path show-traceback tb raise-exceptions pdb
		warn-incomplete-stub scripts-are-modules sqlite-cache cache-fine-grained skip-version-check
		skip-cache-mtime-checks use-fine-grained-cache fast-exit fast-module-lookup export-types
		allow-empty-bodies dump-type-stats dump-inference-stats dump-build-stats inferstats stats
		bazel allow-untyped-calls allow-untyped-defs allow-incomplete-defs allow-untyped-decorators
		allow-subclassing-any allow-any-generics allow-any-expr allow-any-decorated allow-any-explicit
		allow-any-unimported silence-site-packages site-packages`)...),
)}).build()

func mypyReports() []Opt {
	var out []Opt
	for _, r := range strings.Fields(`any-exprs cobertura-xml html linecount linecoverage lineprecision txt xml xslt-html xslt-txt memory-xml`) {
		out = append(out, val(roleWrite, "", r+"-report"))
	}
	return out
}

var progMypy = &Program{
	Family: "mypy", Names: []string{"mypy"}, Modules: []string{"mypy"}, Spec: mypySpec, Operand: roleRead,
	Summary: "Type-checks the files and directories it reads. --config-file, --custom-typeshed-dir and --package-root are read; " +
		"--cache-dir, --junit-xml and the *-report directories are written; --exclude is a pattern.",
	Refuses: []string{"@file arguments (mypy reads options from them)"},
}

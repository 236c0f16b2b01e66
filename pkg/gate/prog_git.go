package gate

// git: its global options, then one subcommand, each with its own option
// table (git's parse-options accepts unambiguous prefixes of long options,
// so every table here does too). Read-only inspection is modelled — status,
// diff, log, show, blame, grep, ls-files, rev-parse and their kin. What
// runs another program (-c, --exec-path, --ext-diff, difftool, grep -O,
// --show-signature, rebase -x, bisect run, submodule foreach), what points
// git elsewhere (--git-dir, --work-tree, -C), what reaches the network
// (push, fetch, pull, clone, ls-remote, remote show), and what writes .git
// (config writes, init, commit, checkout, …) is refused. `git add` and
// `git commit` are allowed only when the policy lists them in
// allow_git_writes, and the jail must then let .git be written.

import (
	"strings"

	"github.com/deponent-dev/deponent-action/pkg/evidence"
)

var gitGlobalSpec = (&optSpec{Name: "git", Prefix: false, Opts: []Opt{
	flag("P", "no-pager"), flag("", "no-replace-objects"), flag("", "no-lazy-fetch"), flag("", "no-optional-locks"),
	flag("", "no-advice"), flag("", "literal-pathspecs"), flag("", "glob-pathspecs"), flag("", "noglob-pathspecs"),
	flag("", "icase-pathspecs"), flag("", "html-path"), flag("", "man-path"), flag("", "info-path"),
	val(roleText, "", "list-cmds"), val(roleText, "", "namespace"), val(roleText, "", "attr-source"),
	flag("v", "version"), flag("h"),
	refused(flag("", "help"), "opens a manual page viewer", "use git -h, or git SUBCOMMAND -h"),
	refused(val(roleText, "c"), "sets configuration for this command, and configuration can name programs git runs (core.pager, diff.external, core.fsmonitor, …)", "run git without it"),
	refused(val(roleText, "", "config-env"), "sets configuration from the environment, and configuration can name programs git runs", "run git without it"),
	refused(val(roleText, "", "git-dir"), "points git at another repository", "run git inside the sandbox's own repository"),
	refused(val(roleText, "", "work-tree"), "points git at another working tree", "run git inside the sandbox's own repository"),
	refused(optval(roleText, "", "exec-path"), "sets where git finds the programs it runs", "run git without it"),
	refused(val(roleText, "C"), "runs git in another directory, where relative paths mean something else", "use `cd DIR && git …`"),
	refused(flag("p", "paginate"), "runs a pager", "leave it out (output is captured, not paged)"),
	refused(flag("", "bare"), "treats the directory as a bare repository", "leave it out"),
	refused(val(roleText, "", "super-prefix"), "is internal to git", "leave it out"),
}}).build()

// Diff options shared by diff, log, show, stash show and the diff plumbing.
var gitDiffOpts = opts(one(
	flag("pu", "patch"), flag("s", "no-patch"), flag("", "raw"), flag("", "patch-with-raw"), flag("t"),
	flag("", "indent-heuristic"), flag("", "no-indent-heuristic"), flag("", "minimal"), flag("", "patience"),
	flag("", "histogram"), val(roleText, "", "anchored"), val(roleText, "", "diff-algorithm"),
	optval(roleText, "", "stat"), val(roleText, "", "stat-width"), val(roleText, "", "stat-name-width"),
	val(roleText, "", "stat-count"), val(roleText, "", "stat-graph-width"), flag("", "compact-summary"),
	flag("", "numstat"), flag("", "shortstat"), optval(roleText, "X", "dirstat"), flag("", "cumulative"),
	optval(roleText, "", "dirstat-by-file"), flag("", "summary"), flag("", "patch-with-stat"), flag("z"),
	flag("", "name-only"), flag("", "name-status"), optval(roleText, "", "submodule"), optval(roleText, "", "color"),
	flag("", "no-color"), optval(roleText, "", "color-moved"), flag("", "no-color-moved"), val(roleText, "", "color-moved-ws"),
	flag("", "no-color-moved-ws"), optval(roleText, "", "word-diff"), val(rolePattern, "", "word-diff-regex"),
	optval(rolePattern, "", "color-words"), flag("", "no-renames"), flag("", "rename-empty"), flag("", "no-rename-empty"),
	flag("", "check"), val(roleText, "", "ws-error-highlight"), flag("", "full-index"), flag("", "binary"),
	optval(roleText, "", "abbrev"), flag("", "no-abbrev"), optval(roleText, "B", "break-rewrites"),
	optval(roleText, "M", "find-renames"), optval(roleText, "C", "find-copies"), flag("", "find-copies-harder"),
	flag("D", "irreversible-delete"), val(roleText, "l"), val(roleText, "", "diff-filter"), val(rolePattern, "S"),
	val(rolePattern, "G"), val(roleText, "", "find-object"), flag("", "pickaxe-all"), flag("", "pickaxe-regex"),
	val(roleRead, "O"), val(roleText, "", "skip-to"), val(roleText, "", "rotate-to"), flag("R"),
	optval(roleText, "", "relative"), flag("", "no-relative"), flag("a", "text"), flag("", "ignore-cr-at-eol"),
	flag("", "ignore-space-at-eol"), flag("b", "ignore-space-change"), flag("w", "ignore-all-space"),
	flag("", "ignore-blank-lines"), val(rolePattern, "I", "ignore-matching-lines"), val(roleText, "", "inter-hunk-context"),
	flag("W", "function-context"), flag("", "no-function-context"), flag("", "no-ext-diff"), flag("", "textconv"),
	flag("", "no-textconv"), optval(roleText, "", "ignore-submodules"), val(roleText, "", "src-prefix"),
	val(roleText, "", "dst-prefix"), flag("", "no-prefix"), flag("", "default-prefix"), val(roleText, "", "line-prefix"),
	flag("", "ita-invisible-in-index"), flag("", "ita-visible-in-index"), flag("", "exit-code"), flag("", "quiet"),
	val(roleWrite, "", "output"), val(roleText, "", "output-indicator-new"), val(roleText, "", "output-indicator-old"),
	val(roleText, "", "output-indicator-context"), val(roleText, "U"), val(roleText, "", "unified"),
	refused(flag("", "ext-diff"), "runs the external diff program named in git's configuration or GIT_EXTERNAL_DIFF", "leave it out"),
))

// Revision options shared by log, show, whatchanged, shortlog and rev-list.
var gitRevOpts = opts(one(
	flag("", "follow"), flag("", "no-decorate"), optval(roleText, "", "decorate"), val(rolePattern, "", "decorate-refs"),
	val(rolePattern, "", "decorate-refs-exclude"), flag("", "clear-decorations"), flag("", "source"),
	flag("", "mailmap"), flag("", "no-mailmap"), flag("", "use-mailmap"), flag("", "no-use-mailmap"),
	flag("", "full-diff"), flag("", "log-size"), val(roleText, "L"), val(roleText, "n", "max-count"),
	val(roleText, "", "skip"), val(roleText, "", "since", "after"), val(roleText, "", "since-as-filter"),
	val(roleText, "", "until", "before"), val(rolePattern, "", "author"), val(rolePattern, "", "committer"),
	val(rolePattern, "", "grep-reflog"), val(rolePattern, "", "grep"), flag("", "all-match"), flag("", "invert-grep"),
	flag("i", "regexp-ignore-case"), flag("", "basic-regexp"), flag("E", "extended-regexp"), flag("F", "fixed-strings"),
	flag("P", "perl-regexp"), flag("", "remove-empty"), flag("", "merges"), flag("", "no-merges"),
	val(roleText, "", "min-parents"), val(roleText, "", "max-parents"), flag("", "no-min-parents"),
	flag("", "no-max-parents"), flag("", "first-parent"), flag("", "exclude-first-parent-only"), flag("", "not"),
	flag("", "all"), optval(rolePattern, "", "branches"), optval(rolePattern, "", "tags"), optval(rolePattern, "", "remotes"),
	val(rolePattern, "", "glob"), val(rolePattern, "", "exclude"), val(roleText, "", "exclude-hidden"), flag("", "reflog"),
	flag("", "alternate-refs"), flag("", "single-worktree"), flag("", "ignore-missing"), flag("", "bisect"),
	flag("", "stdin"), flag("", "cherry-mark"), flag("", "cherry-pick"), flag("", "left-only"), flag("", "right-only"),
	flag("", "cherry"), flag("g", "walk-reflogs"), flag("", "merge"), flag("", "boundary"),
	flag("", "simplify-by-decoration"), flag("", "show-pulls"), flag("", "full-history"), flag("", "dense"),
	flag("", "sparse"), flag("", "simplify-merges"), optval(roleText, "", "ancestry-path"), flag("", "date-order"),
	flag("", "author-date-order"), flag("", "topo-order"), flag("", "reverse"), optval(roleText, "", "no-walk"),
	flag("", "do-walk"), optval(roleText, "", "pretty"), optval(roleText, "", "format"), flag("", "abbrev-commit"),
	flag("", "no-abbrev-commit"), flag("", "oneline"), val(roleText, "", "encoding"), optval(roleText, "", "expand-tabs"),
	flag("", "no-expand-tabs"), optval(roleText, "", "notes"), flag("", "no-notes"), optval(roleText, "", "show-notes"),
	flag("", "standard-notes"), flag("", "no-standard-notes"), flag("", "relative-date"), val(roleText, "", "date"),
	flag("", "parents"), flag("", "children"), flag("", "left-right"), flag("", "graph"),
	optval(roleText, "", "show-linear-break"), optval(roleText, "", "diff-merges"), flag("", "no-diff-merges"),
	flag("", "remerge-diff"), flag("m"), flag("c"), flag("", "cc"), flag("", "combined-all-paths"),
	flag("", "in-commit-order"), flag("", "objects"), flag("", "objects-edge"), flag("", "count"), flag("", "timestamp"),
	flag("", "no-min-parents"), optval(roleText, "", "show-origin"),
	refused(flag("", "show-signature"), "runs gpg to verify signatures", "leave it out"),
))

// gitSub is one subcommand's model.
type gitSub struct {
	spec *optSpec
	// operands gives the operands' roles; nil: every operand is read
	// (revisions and pathspecs, which git keeps inside the repository).
	operands func(inv *invocation, sub *argList, r *scanResult) *violation
	write    bool // writes .git: only with the policy's allow_git_writes
}

func gitSpec(name string, digits bool, groups ...[]Opt) *optSpec {
	return (&optSpec{Name: "git " + name, Permute: true, Prefix: true, Negate: true, DigitOpts: digits,
		Opts: gitUnique(append(groups, one(flag("h")))...)}).build()
}

// gitUnique drops options whose spellings already appear earlier, so that
// shared groups can be combined.
func gitUnique(groups ...[]Opt) []Opt {
	seenShort := map[byte]bool{}
	seenLong := map[string]bool{}
	var out []Opt
	for _, o := range opts(groups...) {
		short := ""
		for i := 0; i < len(o.Short); i++ {
			if !seenShort[o.Short[i]] {
				short += o.Short[i : i+1]
				seenShort[o.Short[i]] = true
			}
		}
		var long []string
		for _, l := range o.Long {
			if !seenLong[l] {
				long = append(long, l)
				seenLong[l] = true
			}
		}
		if short == "" && len(long) == 0 {
			continue
		}
		o.Short, o.Long = short, long
		out = append(out, o)
	}
	return out
}

var gitSubs = map[string]*gitSub{
	"status": {spec: gitSpec("status", false, one(
		flag("v", "verbose"), flag("s", "short"), flag("b", "branch"), flag("", "show-stash"), flag("", "ahead-behind"),
		optval(roleText, "", "porcelain"), flag("", "long"), flag("z", "null"), optval(roleText, "u", "untracked-files"),
		optval(roleText, "", "ignored"), optval(roleText, "", "ignore-submodules"), optval(roleText, "", "column"),
		flag("", "renames"), optval(roleText, "M", "find-renames"), flag("", "no-column"),
	))},
	"diff": {spec: gitSpec("diff", false, gitUnique(one(
		flag("", "cached", "staged"), optval(roleText, "", "merge-base"), flag("", "no-index"),
		flag("1", "base"), flag("2", "ours"), flag("3", "theirs"), flag("0"),
	), gitDiffOpts))},
	"log":         {spec: gitSpec("log", true, gitUnique(gitRevOpts, gitDiffOpts))},
	"show":        {spec: gitSpec("show", true, gitUnique(gitRevOpts, gitDiffOpts))},
	"whatchanged": {spec: gitSpec("whatchanged", true, gitUnique(gitRevOpts, gitDiffOpts))},
	"rev-list":    {spec: gitSpec("rev-list", true, gitUnique(gitRevOpts))},
	"shortlog": {spec: gitSpec("shortlog", true, gitUnique(one(
		flag("n", "numbered"), flag("s", "summary"), flag("e", "email"), flag("c", "committer"),
		optval(roleText, "w"), val(roleText, "", "group"),
	), gitRevOpts))},
	"diff-tree":  {spec: gitSpec("diff-tree", false, gitUnique(one(flag("r"), flag("", "root"), flag("", "no-commit-id"), flag("", "merge-base"), flag("v")), gitRevOpts, gitDiffOpts))},
	"diff-index": {spec: gitSpec("diff-index", false, gitUnique(one(flag("", "cached"), flag("", "merge-base"), flag("m")), gitDiffOpts))},
	"diff-files": {spec: gitSpec("diff-files", false, gitUnique(one(flag("q"), flag("0"), flag("1", "base"), flag("2", "ours"), flag("3", "theirs"), flag("c"), flag("", "cc")), gitDiffOpts))},
	"blame": {spec: gitSpec("blame", false, one(
		flag("", "incremental"), flag("b"), flag("", "root"), flag("", "show-stats"), flag("", "progress"),
		flag("", "score-debug"), flag("f", "show-name"), flag("n", "show-number"), flag("p", "porcelain"),
		flag("", "line-porcelain"), flag("c"), flag("t"), flag("l"), flag("s"), flag("e", "show-email"), flag("w"),
		val(roleText, "", "ignore-rev"), val(roleRead, "", "ignore-revs-file"), flag("", "color-lines"),
		flag("", "color-by-age"), flag("", "minimal"), val(roleRead, "S"), val(roleRead, "", "contents"),
		optval(roleText, "C"), optval(roleText, "M"), val(roleText, "L"), optval(roleText, "", "abbrev"),
		val(roleText, "", "since"), val(roleText, "", "date"), flag("", "reverse"), flag("", "first-parent"),
		val(roleText, "", "encoding"),
	))},
	"annotate": {spec: gitSpec("annotate", false, one(flag("b"), flag("", "root"), flag("f", "show-name"),
		flag("n", "show-number"), flag("s"), flag("e", "show-email"), flag("w"), val(roleText, "L"),
		val(roleRead, "", "contents"), val(roleText, "", "date"), flag("c"), flag("t"), flag("l")))},
	"ls-files": {spec: gitSpec("ls-files", false, one(
		flag("z"), flag("t"), flag("v"), flag("f"), flag("c", "cached"), flag("d", "deleted"), flag("m", "modified"),
		flag("o", "others"), flag("i", "ignored"), flag("s", "stage"), flag("k", "killed"), flag("", "directory"),
		flag("", "eol"), flag("", "empty-directory"), flag("u", "unmerged"), flag("", "resolve-undo"),
		val(rolePattern, "x", "exclude"), val(roleRead, "X", "exclude-from"), val(roleText, "", "exclude-per-directory"),
		flag("", "exclude-standard"), flag("", "full-name"), flag("", "recurse-submodules"), flag("", "error-unmatch"),
		val(roleText, "", "with-tree"), optval(roleText, "", "abbrev"), flag("", "debug"), flag("", "deduplicate"),
		flag("", "sparse"), val(roleText, "", "format"),
	))},
	"ls-tree": {spec: gitSpec("ls-tree", false, one(
		flag("d"), flag("r"), flag("t"), flag("l", "long"), flag("z"), flag("", "name-only", "name-status"),
		flag("", "object-only"), flag("", "full-name"), flag("", "full-tree"), optval(roleText, "", "abbrev"),
		val(roleText, "", "format"),
	))},
	"grep": {spec: gitSpec("grep", true, one(
		flag("", "cached"), flag("", "no-index"), flag("", "untracked"), flag("", "exclude-standard"),
		flag("", "recurse-submodules"), flag("v", "invert-match"), flag("i", "ignore-case"), flag("w", "word-regexp"),
		flag("a", "text"), flag("I"), flag("", "textconv"), flag("r", "recursive"), val(roleText, "", "max-depth"),
		flag("E", "extended-regexp"), flag("G", "basic-regexp"), flag("F", "fixed-strings"), flag("P", "perl-regexp"),
		flag("n", "line-number"), flag("", "column"), flag("h"), flag("H"), flag("", "full-name"),
		flag("l", "files-with-matches", "name-only"), flag("L", "files-without-match"), flag("z", "null"),
		flag("o", "only-matching"), flag("c", "count"), optval(roleText, "", "color"), flag("", "break"),
		flag("", "heading"), val(roleText, "C", "context"), val(roleText, "B", "before-context"),
		val(roleText, "A", "after-context"), val(roleText, "", "threads"), flag("p", "show-function"),
		flag("W", "function-context"), Opt{Short: "f", Arg: reqArg, Role: roleRead, Key: "pattern-file"},
		Opt{Short: "e", Arg: reqArg, Role: rolePattern, Key: "pattern"}, flag("", "and"), flag("", "or"), flag("", "not"),
		flag("q", "quiet"), flag("", "all-match"), val(roleText, "m", "max-count"), flag("", "ext-grep"),
		refused(optval(roleText, "O", "open-files-in-pager"), "runs the program it names (a pager) on the matching files", "leave it out"),
	)), operands: gitGrepOperands},
	"rev-parse": {spec: gitSpec("rev-parse", false, opts(gitRevParseOpts())), operands: gitTextOperands},
	"describe": {spec: gitSpec("describe", false, one(
		flag("", "all"), flag("", "tags"), flag("", "contains"), optval(roleText, "", "abbrev"),
		val(roleText, "", "candidates"), flag("", "exact-match"), flag("", "debug"), flag("", "long"),
		val(rolePattern, "", "match"), val(rolePattern, "", "exclude"), flag("", "always"), flag("", "first-parent"),
		optval(roleText, "", "dirty"), optval(roleText, "", "broken"),
	)), operands: gitTextOperands},
	"show-ref": {spec: gitSpec("show-ref", false, one(
		flag("", "head"), flag("", "branches"), flag("", "tags"), flag("d", "dereference"), optval(roleText, "s", "hash"),
		flag("", "verify"), flag("", "exists"), optval(roleText, "", "abbrev"), flag("q", "quiet"),
	)), operands: gitTextOperands},
	"for-each-ref": {spec: gitSpec("for-each-ref", false, one(
		val(roleText, "", "count"), val(roleText, "", "sort"), val(roleText, "", "format"), flag("s", "shell"),
		flag("p", "perl"), flag("", "python"), flag("", "tcl"), val(roleText, "", "points-at"),
		optval(roleText, "", "merged"), optval(roleText, "", "no-merged"), optval(roleText, "", "contains"),
		optval(roleText, "", "no-contains"), flag("", "ignore-case"), flag("", "omit-empty"), val(roleText, "", "exclude"),
		flag("", "include-root-refs"),
	)), operands: gitTextOperands},
	"cat-file": {spec: gitSpec("cat-file", false, one(
		flag("t"), flag("s"), flag("e"), flag("p"), flag("", "allow-unknown-type"), flag("", "use-mailmap"),
		flag("", "mailmap"), flag("", "no-mailmap"),
		refused(flag("", "textconv"), "runs the text conversion program named in git's configuration", "use -p"),
		refused(flag("", "filters"), "runs the clean/smudge filter programs named in git's configuration", "use -p"),
		refused(optval(roleText, "", "batch"), "reads object names from standard input, which is empty here", "name the object"),
		refused(optval(roleText, "", "batch-check"), "reads object names from standard input, which is empty here", "name the object"),
	)), operands: gitTextOperands},
	"merge-base": {spec: gitSpec("merge-base", false, one(flag("a", "all"), flag("", "octopus"),
		flag("", "independent"), flag("", "is-ancestor"), flag("", "fork-point"))), operands: gitTextOperands},
	"name-rev": {spec: gitSpec("name-rev", false, one(flag("", "tags"), val(rolePattern, "", "refs"),
		val(rolePattern, "", "exclude"), flag("", "all"), flag("", "annotate-stdin"), flag("", "name-only"),
		flag("", "no-undefined"), flag("", "always"))), operands: gitTextOperands},
	"count-objects": {spec: gitSpec("count-objects", false, one(flag("v", "verbose"), flag("H", "human-readable")))},
	"check-ignore": {spec: gitSpec("check-ignore", false, one(flag("q", "quiet"), flag("v", "verbose"),
		flag("", "no-index"), flag("n", "non-matching"), flag("z")))},
	"check-attr": {spec: gitSpec("check-attr", false, one(flag("a", "all"), flag("", "cached"), flag("z"),
		val(roleText, "", "source")))},
	"version": {spec: gitSpec("version", false, one(flag("", "build-options")))},
	"var":     {spec: gitSpec("var", false, one(flag("l"))), operands: gitTextOperands},
	"branch": {spec: gitSpec("branch", false, one(
		flag("a", "all"), flag("r", "remotes"), Opt{Short: "l", Long: []string{"list"}, Key: "list"}, flag("v", "verbose"),
		optval(roleText, "", "contains"), optval(roleText, "", "no-contains"), optval(roleText, "", "merged"),
		optval(roleText, "", "no-merged"), val(roleText, "", "points-at"), val(roleText, "", "sort"), val(roleText, "", "format"),
		flag("", "show-current"), optval(roleText, "", "column"), optval(roleText, "", "color"), optval(roleText, "", "abbrev"),
		flag("i", "ignore-case"), flag("", "omit-empty"), flag("q", "quiet"),
		refused(flag("dD", "delete"), gitWrites, gitWritesInstead), refused(flag("mM", "move"), gitWrites, gitWritesInstead),
		refused(flag("cC", "copy"), gitWrites, gitWritesInstead), refused(flag("f", "force"), gitWrites, gitWritesInstead),
		refused(val(roleText, "u", "set-upstream-to"), gitWrites, gitWritesInstead), refused(flag("", "unset-upstream"), gitWrites, gitWritesInstead),
		refused(flag("", "edit-description"), gitWrites, gitWritesInstead), refused(optval(roleText, "t", "track"), gitWrites, gitWritesInstead),
		refused(flag("", "create-reflog"), gitWrites, gitWritesInstead),
	)), operands: gitListOnly("branch")},
	"tag": {spec: gitSpec("tag", false, one(
		Opt{Short: "l", Long: []string{"list"}, Key: "list"}, optval(roleText, "n"), optval(roleText, "", "contains"),
		optval(roleText, "", "no-contains"), optval(roleText, "", "merged"), optval(roleText, "", "no-merged"),
		optval(roleText, "", "points-at"), val(roleText, "", "sort"), val(roleText, "", "format"),
		optval(roleText, "", "column"), optval(roleText, "", "color"), flag("i", "ignore-case"), flag("", "omit-empty"),
		refused(flag("a", "annotate"), gitWrites, gitWritesInstead), refused(flag("s", "sign"), gitWrites, gitWritesInstead),
		refused(val(roleText, "u", "local-user"), gitWrites, gitWritesInstead), refused(flag("d", "delete"), gitWrites, gitWritesInstead),
		refused(flag("f", "force"), gitWrites, gitWritesInstead), refused(val(roleText, "m", "message"), gitWrites, gitWritesInstead),
		refused(val(roleText, "F", "file"), gitWrites, gitWritesInstead), refused(flag("e", "edit"), gitWrites, gitWritesInstead),
		refused(flag("v", "verify"), "runs gpg to verify the tag", "use git show TAG"),
	)), operands: gitListOnly("tag")},
	"remote": {spec: gitSpec("remote", false, one(flag("v", "verbose"))), operands: gitRemoteOperands},
	"config": {spec: gitSpec("config", false, one(
		Opt{Long: []string{"get"}, Key: "get"}, Opt{Long: []string{"get-all"}, Key: "get"},
		Opt{Long: []string{"get-regexp"}, Key: "get"}, Opt{Long: []string{"get-urlmatch"}, Key: "get"},
		Opt{Short: "l", Long: []string{"list"}, Key: "get"}, flag("", "show-origin"), flag("", "show-scope"),
		flag("", "name-only"), flag("z", "null"), flag("", "local"), flag("", "global"), flag("", "system"),
		flag("", "worktree"), val(roleRead, "f", "file"), val(roleText, "", "blob"), val(roleText, "", "type"),
		flag("", "bool"), flag("", "int"), flag("", "bool-or-int"), flag("", "path"), flag("", "expiry-date"),
		val(roleText, "", "default"), flag("", "includes"), flag("", "no-includes"), flag("", "fixed-value"),
		refused(flag("", "add"), gitConfigWrite, gitWritesInstead), refused(flag("", "replace-all"), gitConfigWrite, gitWritesInstead),
		refused(flag("", "unset"), gitConfigWrite, gitWritesInstead), refused(flag("", "unset-all"), gitConfigWrite, gitWritesInstead),
		refused(flag("", "rename-section"), gitConfigWrite, gitWritesInstead), refused(flag("", "remove-section"), gitConfigWrite, gitWritesInstead),
		refused(flag("e", "edit"), "opens an editor on the configuration", gitWritesInstead),
		refused(val(roleText, "", "get-color"), "is not modelled", "use --get"), refused(val(roleText, "", "get-colorbool"), "is not modelled", "use --get"),
	)), operands: gitConfigOperands},
	"stash":    {spec: gitSpec("stash", false, gitUnique(gitDiffOpts)), operands: gitSubSubcommand("stash", "list", "show")},
	"reflog":   {spec: gitSpec("reflog", true, gitUnique(gitRevOpts, gitDiffOpts)), operands: gitSubSubcommand("reflog", "show", "list")},
	"worktree": {spec: gitSpec("worktree", false, one(flag("", "porcelain"), flag("v", "verbose"), optval(roleText, "", "expire"), flag("z"))), operands: gitSubSubcommand("worktree", "list")},
	"add": {write: true, spec: gitSpec("add", false, one(
		flag("n", "dry-run"), flag("v", "verbose"), flag("f", "force"), flag("u", "update"), flag("A", "all"),
		flag("", "no-all"), flag("", "ignore-removal"), flag("", "no-ignore-removal"), flag("N", "intent-to-add"),
		flag("", "refresh"), flag("", "ignore-errors"), flag("", "ignore-missing"), flag("", "sparse"),
		val(roleText, "", "chmod"), flag("", "renormalize"), flag("", "no-warn-embedded-repo"),
		refused(flag("i", "interactive"), gitInteractive, "name the paths to add"), refused(flag("p", "patch"), gitInteractive, "name the paths to add"),
		refused(flag("e", "edit"), gitInteractive, "name the paths to add"),
		refused(val(roleText, "", "pathspec-from-file"), namesFromFile, "name the paths"), flag("", "pathspec-file-nul"),
	))},
	"commit": {write: true, spec: gitSpec("commit", false, one(
		flag("a", "all"), val(roleText, "C", "reuse-message"), val(roleText, "", "fixup"), val(roleText, "", "squash"),
		flag("", "reset-author"), flag("", "short"), flag("", "branch"), flag("", "porcelain"), flag("", "long"),
		flag("z", "null"), Opt{Short: "F", Long: []string{"file"}, Arg: reqArg, Role: roleRead, Key: "message"},
		val(roleText, "", "author"), val(roleText, "", "date"), Opt{Short: "m", Long: []string{"message"}, Arg: reqArg, Role: roleText, Key: "message"},
		val(roleRead, "t", "template"), flag("s", "signoff"), val(roleText, "", "trailer"), flag("n", "no-verify"),
		flag("", "verify"), flag("", "allow-empty"), flag("", "allow-empty-message"), val(roleText, "", "cleanup"),
		Opt{Long: []string{"no-edit"}, Key: "no-edit"}, flag("", "amend"), flag("", "no-post-rewrite"), flag("i", "include"),
		flag("o", "only"), optval(roleText, "u", "untracked-files"), flag("v", "verbose"), flag("q", "quiet"),
		flag("", "dry-run"), flag("", "status"), flag("", "no-status"), flag("", "no-gpg-sign"),
		refused(flag("p", "patch"), gitInteractive, "stage with git add, then commit"),
		refused(val(roleText, "c", "reedit-message"), "opens an editor", "use -C or -m"),
		refused(flag("e", "edit"), "opens an editor", "give the message with -m"),
		refused(optval(roleText, "S", "gpg-sign"), "runs gpg to sign the commit", "leave it out"),
		refused(val(roleText, "", "pathspec-from-file"), namesFromFile, "name the paths"), flag("", "pathspec-file-nul"),
	)), operands: gitCommitOperands},
}

const (
	gitWrites        = "changes the repository (refs or configuration in .git)"
	gitWritesInstead = "only read-only git commands are allowed; leave the change to the workflow after Deponent's run"
	gitConfigWrite   = "writes git's configuration, which can name programs git runs"
	gitInteractive   = "is interactive, and there is no terminal"
)

// gitRefused are subcommands refused outright, with the reason.
var gitRefused = map[string]string{
	"push": "contacts the network (the jail has none); push from the workflow after Deponent's run",
	"pull": "contacts the network (the jail has none)", "fetch": "contacts the network (the jail has none)",
	"clone": "contacts the network (the jail has none)", "ls-remote": "contacts the network (the jail has none)",
	"submodule":     "runs commands in submodules (foreach) and contacts the network",
	"difftool":      "runs an external diff program; use git diff",
	"mergetool":     "runs an external merge program",
	"rebase":        "rewrites history and can run commands (-x); it writes .git",
	"bisect":        "runs commands (bisect run) and writes .git",
	"init":          "creates a repository (and --template copies hooks into it)",
	"filter-branch": "runs commands on every commit", "filter-repo": "rewrites history",
	"send-email": "sends mail", "request-pull": "contacts the network", "daemon": "serves the repository over the network",
	"instaweb": "starts a web server", "web--browse": "opens a browser", "help": "opens a manual page viewer; read the docs instead",
	"credential": "handles credentials", "archive": "writes an archive and can contact a remote (--remote)",
	"bundle": "writes or reads bundles", "am": "applies mailed patches and writes .git", "apply": "changes files and the index; use edit_file",
	"checkout": gitWrites, "switch": gitWrites, "restore": gitWrites + " or the working tree; use edit_file",
	"reset": gitWrites, "merge": gitWrites, "cherry-pick": gitWrites, "revert": gitWrites, "clean": "deletes untracked files; use rm",
	"gc": gitWrites, "prune": gitWrites, "repack": gitWrites, "maintenance": gitWrites, "update-index": gitWrites,
	"update-ref": gitWrites, "symbolic-ref": gitWrites, "notes": gitWrites, "replace": gitWrites, "mv": gitWrites + "; use mv",
	"rm": gitWrites + "; use rm", "format-patch": "writes patch files", "fsck": "is not modelled", "p4": "contacts other systems",
	"svn": "contacts other systems", "cvsimport": "contacts other systems", "remote-ext": "runs commands",
}

var progGit = &Program{
	Family: "git", Names: []string{"git"}, Run: runGit,
	Summary: "Inspects the repository: status, diff, log, show, whatchanged, shortlog, rev-list, blame, annotate, grep, ls-files, " +
		"ls-tree, rev-parse, describe, show-ref, for-each-ref, cat-file, merge-base, name-rev, count-objects, check-ignore, " +
		"check-attr, diff-tree, diff-index, diff-files, version, var, and the listing forms of branch, tag, remote, stash, " +
		"reflog, worktree and config. Revisions and pathspecs are read (git keeps them inside the repository); " +
		"--output is written; git grep's pattern and the --grep/--author/-S/-G values are patterns. " +
		"`git add` and `git commit` (with a message given by -m, -F or -C) only when the policy lists them in allow_git_writes.",
	Refuses: []string{"every other subcommand, among them push, pull, fetch, clone, ls-remote, submodule, difftool, mergetool, " +
		"rebase, bisect, init, checkout, switch, restore, reset, merge, apply, clean, and external or aliased commands",
		"git config writes, `remote show` (it contacts the remote) and any branch/tag operand without --list (it would create one)"},
	SubSpecs: gitSubSpecs(),
}

func gitSubSpecs() []*optSpec {
	out := []*optSpec{gitGlobalSpec}
	for _, name := range []string{"status", "diff", "log", "grep", "blame", "ls-files", "branch", "tag", "config", "commit", "add"} {
		out = append(out, gitSubs[name].spec)
	}
	return out
}

func runGit(inv *invocation, args *argList) *violation {
	w := args.words()
	r := scanArgs(gitGlobalSpec, w, false)
	if r.invalid != "" {
		return invalidArgs(gitGlobalSpec, &r)
	}
	if v := inv.applyOpts(gitGlobalSpec, args, &r); v != nil {
		return v
	}
	if len(r.operands) == 0 {
		return nil // `git`, `git --version`: prints and exits
	}
	at := r.operands[0]
	name := w[at]
	inv.addWord(args.at(at), roleText)
	sub := gitSubs[name]
	if sub == nil {
		if why, ok := gitRefused[name]; ok {
			return refuse(evidence.ClassNotAllowlisted, "git "+shown(name)+" is refused: it "+why)
		}
		return refuse(evidence.ClassNotAllowlisted, "git "+shown(name)+" is not a git subcommand the gate models (external commands and aliases are refused); see docs/policy.md for the allowed ones")
	}
	if sub.write && !inv.g.gitWrites[name] {
		return refuse(evidence.ClassNotAllowlisted, "git "+name+" writes the repository, and the policy does not list it in allow_git_writes; "+gitWritesInstead)
	}
	ops := sub.operands
	if ops == nil {
		ops = gitReadOperands
	}
	return inv.runSpec(sub.spec, &argList{inv: inv, from: args.at(at + 1)}, ops)
}

func gitReadOperands(inv *invocation, sub *argList, r *scanResult) *violation {
	for _, i := range r.operands {
		inv.addWord(sub.at(i), roleRead)
	}
	return nil
}

func gitTextOperands(inv *invocation, sub *argList, r *scanResult) *violation {
	for _, i := range r.operands {
		inv.addWord(sub.at(i), roleText)
	}
	return nil
}

// gitGrepOperands: the first operand is the pattern unless -e or -f gave
// them; then revisions and pathspecs.
func gitGrepOperands(inv *invocation, sub *argList, r *scanResult) *violation {
	explicit := r.has("pattern") || r.has("pattern-file")
	for k, i := range r.operands {
		role := roleRead
		if k == 0 && !explicit && (r.dashdash < 0 || i < r.dashdash) {
			role = rolePattern
		}
		inv.addWord(sub.at(i), role)
	}
	return nil
}

// gitListOnly: branch and tag take operands only as --list patterns; any
// other operand would create a branch or tag.
func gitListOnly(name string) func(*invocation, *argList, *scanResult) *violation {
	return func(inv *invocation, sub *argList, r *scanResult) *violation {
		if len(r.operands) > 0 && !r.has("list") && !r.has("contains") && !r.has("merged") && !r.has("no-merged") &&
			!r.has("points-at") && !r.has("no-contains") {
			return refuse(evidence.ClassNotAllowlisted, "git "+name+" "+shown(sub.words()[r.operands[0]])+" would create a "+name+
				" ("+gitWrites+"); to list, use git "+name+" --list PATTERN")
		}
		for _, i := range r.operands {
			inv.addWord(sub.at(i), rolePattern)
		}
		return nil
	}
}

func gitRemoteOperands(inv *invocation, sub *argList, r *scanResult) *violation {
	w := sub.words()
	if len(r.operands) == 0 {
		return nil
	}
	switch first := w[r.operands[0]]; first {
	case "get-url":
		for _, i := range r.operands {
			inv.addWord(sub.at(i), roleText)
		}
		return nil
	case "show":
		return refuse(evidence.ClassNotAllowlisted, "git remote show contacts the remote (the jail has no network); use git remote -v")
	default:
		return refuse(evidence.ClassNotAllowlisted, "git remote "+shown(first)+" is refused: only `git remote`, `git remote -v` and `git remote get-url NAME` are modelled")
	}
}

// gitConfigOperands allows reading: --get/--list forms, `git config KEY`,
// and the `get`/`list` subcommands; writing configuration is refused.
func gitConfigOperands(inv *invocation, sub *argList, r *scanResult) *violation {
	w := sub.words()
	ops := r.operands
	if len(ops) > 0 && (w[ops[0]] == "get" || w[ops[0]] == "list") {
		for _, i := range ops {
			inv.addWord(sub.at(i), roleText)
		}
		return nil
	}
	if r.has("get") {
		for _, i := range ops {
			inv.addWord(sub.at(i), roleText)
		}
		return nil
	}
	if len(ops) == 1 {
		inv.addWord(sub.at(ops[0]), roleText)
		return nil
	}
	if len(ops) == 0 {
		return nil
	}
	return refuse(evidence.ClassNotAllowlisted, "git config "+shown(w[ops[0]])+" … "+gitConfigWrite+"; read it with git config --get KEY")
}

// gitSubSubcommand allows only the named read-only forms (stash list, …).
func gitSubSubcommand(name string, allowed ...string) func(*invocation, *argList, *scanResult) *violation {
	return func(inv *invocation, sub *argList, r *scanResult) *violation {
		w := sub.words()
		if len(r.operands) == 0 {
			if name == "stash" {
				return refuse(evidence.ClassNotAllowlisted, "git stash (push) "+gitWrites+"; use git stash list or git stash show")
			}
			return nil // reflog shows; worktree prints its usage
		}
		first := w[r.operands[0]]
		for _, a := range allowed {
			if first == a {
				for _, i := range r.operands {
					inv.addWord(sub.at(i), roleRead)
				}
				return nil
			}
		}
		return refuse(evidence.ClassNotAllowlisted, "git "+name+" "+shown(first)+" is refused: only "+name+" "+strings.Join(allowed, ", ")+" are modelled ("+gitWrites+")")
	}
}

// gitCommitOperands: a commit needs its message on the command line (an
// editor would wait for a terminal).
func gitCommitOperands(inv *invocation, sub *argList, r *scanResult) *violation {
	if !r.has("message") && !r.has("reuse-message") && !r.has("no-edit") {
		return refuse(evidence.ClassUnsafeOption, "git commit without -m, -F, -C or --no-edit opens an editor; give the message with -m")
	}
	return gitReadOperands(inv, sub, r)
}

func gitRevParseOpts() []Opt {
	o := flags(strings.Fields(`verify sq-quote keep-dashdash stop-at-non-option sq not all branches tags remotes
		show-toplevel show-prefix show-cdup git-dir git-common-dir absolute-git-dir is-inside-git-dir
		is-inside-work-tree is-bare-repository is-shallow-repository local-env-vars flags no-flags revs-only
		no-revs symbolic symbolic-full-name show-superproject-working-tree shared-index-path show-object-format
		show-ref-format git-path-x parseopt`)...)
	return append(o, flag("q", "quiet"), optval(roleText, "", "short"), optval(roleText, "", "abbrev-ref"),
		val(roleText, "", "default"), val(roleText, "", "prefix"), val(rolePattern, "", "glob"), val(rolePattern, "", "exclude"),
		val(roleText, "", "exclude-hidden"), optval(roleText, "", "disambiguate"), val(roleText, "", "since", "after"),
		val(roleText, "", "until", "before"), val(roleText, "", "resolve-git-dir"), val(roleText, "", "git-path"),
		val(roleText, "", "path-format"))
}

package gate

// ruff (also `python -m ruff`): clap options (no abbreviations) per
// subcommand, with the global options allowed anywhere. Files are read by
// `ruff check` and `ruff format --check/--diff`, and rewritten by
// `check --fix`/`--add-noqa` and by `format`. `--config` takes a path or
// an inline TOML `key = value`: the path is read, and the inline form is
// allowed only for keys that hold no path.

import (
	"strings"

	"github.com/deponent-dev/deponent-action/pkg/evidence"
)

func ruffGlobal() []Opt {
	return []Opt{
		Opt{Long: []string{"config"}, Arg: reqArg, Role: roleRead, Key: "config"},
		flag("", "isolated"), flag("v", "verbose"), flag("q", "quiet"), flag("s", "silent"),
		val(roleText, "", "color"), flag("h", "help"),
	}
}

var ruffSelect = []Opt{
	val(roleText, "", "select"), val(roleText, "", "ignore"), val(roleText, "", "extend-select"),
	val(roleText, "", "extend-ignore"), val(roleText, "", "per-file-ignores"), val(roleText, "", "extend-per-file-ignores"),
	val(roleText, "", "fixable"), val(roleText, "", "unfixable"), val(roleText, "", "extend-fixable"),
	val(rolePattern, "", "exclude"), val(rolePattern, "", "extend-exclude"), flag("", "respect-gitignore"),
	flag("", "no-respect-gitignore"), flag("", "force-exclude"), flag("", "no-force-exclude"),
	val(roleText, "", "line-length"), val(roleText, "", "target-version"), flag("", "preview"), flag("", "no-preview"),
	flag("n", "no-cache"), val(roleWrite, "", "cache-dir"), val(roleText, "", "stdin-filename"),
	val(roleText, "", "output-format"), val(roleText, "", "extension"),
}

var ruffCheckSpec = (&optSpec{Name: "ruff check", Permute: true, ArgFiles: true, Opts: opts(ruffGlobal(), ruffSelect, one(
	Opt{Long: []string{"fix"}, Key: "fix"}, flag("", "no-fix"), Opt{Long: []string{"unsafe-fixes"}, Key: "fix-unsafe"},
	flag("", "no-unsafe-fixes"), flag("", "show-fixes"), flag("", "no-show-fixes"), Opt{Long: []string{"diff"}, Key: "diff"},
	Opt{Long: []string{"fix-only"}, Key: "fix-only"}, flag("", "no-fix-only"), flag("", "ignore-noqa"),
	val(roleWrite, "o", "output-file"), flag("", "statistics"), Opt{Long: []string{"add-noqa"}, Key: "add-noqa"},
	flag("", "show-files"), flag("", "show-settings"), val(roleText, "", "dummy-variable-rgx"),
	flag("e", "exit-zero"), flag("", "exit-non-zero-on-fix"),
	refused(flag("w", "watch"), "keeps running and re-checking as files change", "run ruff check again after each change"),
))}).build()

var ruffFormatSpec = (&optSpec{Name: "ruff format", Permute: true, ArgFiles: true, Opts: opts(ruffGlobal(), ruffSelect, one(
	Opt{Long: []string{"check"}, Key: "check"}, Opt{Long: []string{"diff"}, Key: "diff"}, val(roleText, "", "range"),
	flag("", "exit-non-zero-on-format"), flag("", "exit-non-zero-on-fix"),
))}).build()

var ruffInfoSpec = (&optSpec{Name: "ruff", Permute: true, ArgFiles: true, Opts: opts(ruffGlobal(), one(
	val(roleText, "", "output-format"), flag("", "all"), flag("V", "version"),
))}).build()

var progRuff = &Program{
	Family: "ruff", Names: []string{"ruff"}, Modules: []string{"ruff"}, Run: runRuff,
	SubSpecs: []*optSpec{ruffCheckSpec, ruffFormatSpec, ruffInfoSpec},
	Summary: "Lints and formats Python: `ruff check` (files read, or rewritten with --fix, --unsafe-fixes, --fix-only, --add-noqa), " +
		"`ruff format` (files rewritten unless --check or --diff), and the read-only rule, linter, config, version, help, clean and " +
		"analyze. --cache-dir and --output-file are written; --config FILE is read, and --config 'key = value' may set only keys that hold no path.",
	Refuses: []string{"@file arguments", "`ruff server` and `--watch` (they keep running)",
		"--config with an inline TOML key that holds a path (cache-dir, src, extend, namespace-packages, …) or that the gate does not know"},
}

func runRuff(inv *invocation, args *argList) *violation {
	w := args.words()
	// The subcommand is the first word that is not an option.
	sub := -1
	for i := 0; i < len(w); i++ {
		if w[i] == "--config" {
			i++
			continue
		}
		if !strings.HasPrefix(w[i], "-") {
			sub = i
			break
		}
	}
	if sub < 0 {
		return inv.runSpec(ruffInfoSpec, args, ruffOperands(roleText))
	}
	inv.addWord(args.at(sub), roleText)
	rest := &ruffArgs{inv: inv, args: args, skip: sub}
	switch w[sub] {
	case "check":
		return rest.run(ruffCheckSpec)
	case "format":
		return rest.run(ruffFormatSpec)
	case "rule", "linter", "config", "version", "help", "analyze", "generate-shell-completion", "clean":
		return rest.run(ruffInfoSpec)
	case "server":
		return refuse(evidence.ClassNotAllowlisted, "ruff server starts a language server that keeps running; run ruff check or ruff format")
	}
	return refuse(evidence.ClassNotAllowlisted, "ruff "+shown(w[sub])+" is not a ruff subcommand the gate models (check, format, rule, linter, config, version, help, clean, analyze)")
}

// ruffArgs scans a ruff command line without its subcommand word (global
// options may stand before it).
type ruffArgs struct {
	inv  *invocation
	args *argList
	skip int
}

func (r *ruffArgs) run(spec *optSpec) *violation {
	// Scan the words before and after the subcommand as one list by
	// building a view without it.
	inv := r.inv
	full := r.args.words()
	view := make([]string, 0, len(full)-1)
	index := make([]int, 0, len(full)-1)
	for i, w := range full {
		if i != r.skip {
			view = append(view, w)
			index = append(index, r.args.at(i))
		}
	}
	tmp := &invocation{g: inv.g, head: inv.head, args: view, cwds: inv.cwds}
	v := tmp.runSpec(spec, &argList{inv: tmp, from: 0}, ruffOperands(roleRead))
	for _, c := range tmp.checks {
		if c.arg >= 0 { // -1: a value no word holds (ruff's default path)
			c.arg = index[c.arg]
		}
		inv.checks = append(inv.checks, c)
	}
	return v
}

// ruffOperands: files are read, or written when the command rewrites them.
func ruffOperands(def Role) func(*invocation, *argList, *scanResult) *violation {
	return func(inv *invocation, sub *argList, r *scanResult) *violation {
		words := sub.words()
		role := def
		rewrites := r.has("fix") || r.has("fix-unsafe") || r.has("fix-only") || r.has("add-noqa")
		if strings.HasSuffix(r.specName, "format") {
			rewrites = !r.has("check") && !r.has("diff")
		}
		if rewrites && !r.has("diff") {
			role = roleRewriteTree
			if len(r.operands) == 0 {
				// ruff walks the working directory when given no paths.
				inv.add(-1, ".", roleRewriteTree, "the working directory (ruff's default path)")
			}
		}
		for _, o := range r.opts {
			if o.opt.key() != "config" {
				continue
			}
			v, _ := o.value(words)
			if key, _, inline := strings.Cut(v, "="); inline {
				if why := ruffInlineKey(strings.TrimSpace(key)); why != "" {
					return refuse(evidence.ClassUnsafeOption, "ruff --config '"+shown(v)+"': "+why)
				}
			}
		}
		for _, i := range r.operands {
			inv.addWord(sub.at(i), role)
		}
		return nil
	}
}

// ruffInlineKey says why an inline --config key is refused ("" if it is
// allowed): keys that hold paths, and keys the gate does not know.
func ruffInlineKey(key string) string {
	key = strings.Trim(key, `"'`)
	switch key {
	case "cache-dir", "src", "extend", "namespace-packages", "include", "extend-include", "builtins-path":
		return "the key '" + key + "' holds paths, which an inline value would move outside the gate's checks; set it in the project's configuration file"
	}
	if ruffInlineKeys[key] {
		return ""
	}
	for _, pre := range []string{"lint.", "format."} {
		if rest, ok := strings.CutPrefix(key, pre); ok && rest != "" && !strings.Contains(rest, "path") && !strings.Contains(rest, "dir") && !strings.Contains(rest, "src") {
			return ""
		}
	}
	return "the key '" + shown(key) + "' is not one the gate allows inline (see docs/policy.md); set it in the project's configuration file"
}

var ruffInlineKeys = wordSet(`line-length indent-width target-version preview fix unsafe-fixes show-fixes
	output-format respect-gitignore force-exclude required-version builtins exclude extend-exclude fix-only`)

package gate

// pytest (also `python -m pytest`): its argparse options, with long-option
// abbreviations off as pytest sets them, plus the common plugins' options
// (pytest-cov, pytest-xdist, pytest-timeout, pytest-randomly,
// pytest-django, pytest-html, pytest-rerunfailures, pytest-asyncio).
// Operands are test files, directories or node ids (the part before "::"
// is a path read). Options that name paths are checked by what pytest does
// with them: --basetemp is deleted and recreated, --rootdir and the
// directory of -c hold the cache it writes. `-o key=value` is read key by
// key; addopts, which would add options the gate never sees, is refused.

import (
	"path"
	"strings"

	"github.com/deponent-dev/deponent-action/pkg/evidence"
)

var pytestSpec = (&optSpec{Name: "pytest", Permute: true, Style: styleArgparse, ArgFiles: true, Opts: opts(one(
	val(roleText, "k"), val(roleText, "m"), flag("", "markers"), flag("x", "exitfirst"),
	flag("", "fixtures", "funcargs"), flag("", "fixtures-per-test"), flag("", "pdb"), val(roleText, "", "pdbcls"),
	flag("", "trace"), val(roleText, "", "capture"), flag("s"), flag("", "runxfail"),
	flag("", "lf", "last-failed"), flag("", "ff", "failed-first"), flag("", "nf", "new-first"),
	optval(rolePattern, "", "cache-show"), flag("", "cache-clear"), val(roleText, "", "lfnf", "last-failed-no-failures"),
	flag("", "sw", "stepwise"), flag("", "sw-skip", "stepwise-skip"), flag("", "sw-reset", "stepwise-reset"),
	val(roleText, "", "durations"), val(roleText, "", "durations-min"), flag("v", "verbose"), flag("", "no-header"),
	flag("", "no-summary"), flag("", "no-fold-skipped"), flag("q", "quiet"), val(roleText, "", "verbosity"),
	val(roleText, "r"), flag("", "disable-warnings", "disable-pytest-warnings"), flag("l", "showlocals"),
	flag("", "no-showlocals"), val(roleText, "", "tb"), flag("", "xfail-tb"), val(roleText, "", "show-capture"),
	flag("", "full-trace"), val(roleText, "", "color"), val(roleText, "", "code-highlight"),
	val(roleWrite, "", "junit-xml", "junitxml"), val(roleText, "", "junit-prefix"),
	val(roleText, "W", "pythonwarnings"), val(roleText, "", "maxfail"), flag("", "strict-config"),
	flag("", "strict-markers"), flag("", "strict"), Opt{Short: "c", Long: []string{"config-file", "inifile"}, Arg: reqArg, Role: roleRead, Key: "config-file"},
	flag("", "continue-on-collection-errors"), Opt{Long: []string{"rootdir"}, Arg: reqArg, Role: roleWrite, Doc: "pytest writes its cache under it"},
	flag("", "collect-only", "co"), flag("", "pyargs"), val(roleRead, "", "ignore"), val(rolePattern, "", "ignore-glob"),
	val(roleText, "", "deselect"), val(roleRead, "", "confcutdir"), flag("", "noconftest"), flag("", "keep-duplicates"),
	flag("", "collect-in-virtualenv"), val(roleText, "", "import-mode"), flag("", "doctest-modules"),
	val(roleText, "", "doctest-report"), val(rolePattern, "", "doctest-glob"), flag("", "doctest-ignore-import-errors"),
	flag("", "doctest-continue-on-failure"), Opt{Long: []string{"basetemp"}, Arg: reqArg, Role: roleDelete, Doc: "pytest deletes and recreates it"},
	flag("V", "version"), flag("h", "help"), val(roleText, "p"), flag("", "trace-config"), optval(roleWrite, "", "debug"),
	Opt{Short: "o", Long: []string{"override-ini"}, Arg: reqArg, Role: roleText, Key: "override-ini"},
	val(roleText, "", "assert"), flag("", "setup-only"), flag("", "setup-show"), flag("", "setup-plan"),
	val(roleText, "", "log-level"), val(roleText, "", "log-format"), val(roleText, "", "log-date-format"),
	val(roleText, "", "log-cli-level"), val(roleText, "", "log-cli-format"), val(roleText, "", "log-cli-date-format"),
	val(roleWrite, "", "log-file"), val(roleText, "", "log-file-mode"), val(roleText, "", "log-file-level"),
	val(roleText, "", "log-file-format"), val(roleText, "", "log-file-date-format"), val(roleText, "", "log-auto-indent"),
	val(roleText, "", "log-disable"),
	refused(val(roleText, "", "pastebin"), "uploads the session log to a paste service", "read the output instead (the jail has no network)"),
	// pytest-cov
	Opt{Long: []string{"cov"}, Arg: optNext, Role: roleRead}, Opt{Long: []string{"cov-report"}, Arg: reqArg, Role: roleText, Key: "cov-report", Doc: "TYPE:DEST writes DEST"},
	val(roleRead, "", "cov-config"), flag("", "no-cov-on-fail"), flag("", "no-cov"), val(roleText, "", "cov-fail-under"),
	flag("", "cov-append"), flag("", "cov-branch"), val(roleText, "", "cov-precision"), val(roleText, "", "cov-context"),
	// pytest-xdist
	val(roleText, "n", "numprocesses"), val(roleText, "", "maxprocesses"), val(roleText, "", "max-worker-restart"),
	val(roleText, "", "dist"), flag("", "loadscope-reorder"), flag("", "no-loadscope-reorder"),
	refused(val(roleText, "", "tx"), "starts test workers by a specification that can run other interpreters or remote hosts", "use -n to run local workers"),
	refused(val(roleText, "", "rsyncdir"), "copies directories to remote workers", "use -n to run local workers"),
	refused(flag("f", "looponfail"), "reruns the tests forever as files change", "run pytest again after each change"),
	// pytest-timeout, pytest-randomly, pytest-rerunfailures, pytest-asyncio
	val(roleText, "", "timeout"), val(roleText, "", "timeout-method"), val(roleText, "", "session-timeout"),
	val(roleText, "", "randomly-seed"), flag("", "randomly-dont-reset-seed"), flag("", "randomly-dont-reorganize"),
	val(roleText, "", "reruns"), val(roleText, "", "reruns-delay"), val(roleText, "", "only-rerun"),
	val(roleText, "", "asyncio-mode"),
	// pytest-django, pytest-html
	val(roleText, "", "ds"), val(roleText, "", "dc"), flag("", "reuse-db"), flag("", "create-db"),
	flag("", "nomigrations"), flag("", "migrations"), val(roleWrite, "", "html"), flag("", "self-contained-html"),
	val(roleRead, "", "css"),
))}).build()

var progPytest = &Program{
	Family: "pytest", Names: []string{"pytest", "py.test"}, Modules: []string{"pytest"}, Spec: pytestSpec,
	Summary: "Runs tests. Operands are test files, directories or node ids (the path before \"::\" is read). --basetemp is " +
		"deleted and recreated (so never the sandbox root or a protected path); --rootdir and the directory of -c/--config-file " +
		"receive the cache; --junit-xml, --log-file, --debug FILE, --html and --cov-report TYPE:DEST are written; " +
		"`-o key=value` is read per key (cache_dir and log_file written, testpaths and pythonpath read).",
	Refuses: []string{"@file arguments (pytest ≥ 8.2 reads options from them)",
		"-o/--override-ini addopts (it would add options the gate never reads) and ini keys the gate does not know",
		"long-option abbreviations (pytest itself does not accept them)"},
	Operands: pytestOperands,
}

// pytestIni are the ini keys -o may set, by role. testpaths and pythonpath
// hold space-separated paths.
var pytestIni = map[string]Role{
	"cache_dir": roleWrite, "log_file": roleWrite, "testpaths": roleRead, "pythonpath": roleRead,
	"python_files": rolePattern, "python_classes": rolePattern, "python_functions": rolePattern, "norecursedirs": rolePattern,
}

func init() {
	for _, k := range strings.Fields(`markers empty_parameter_set_mark filterwarnings usefixtures xfail_strict
		console_output_style enable_assertion_pass_hook junit_suite_name junit_logging junit_log_passing_tests
		junit_duration_report junit_family doctest_optionflags doctest_encoding log_level log_format log_date_format
		log_cli log_cli_level log_cli_format log_cli_date_format log_file_level log_file_format log_file_date_format
		log_file_mode log_auto_indent faulthandler_timeout minversion required_plugins tmp_path_retention_count
		tmp_path_retention_policy verbosity_assertions verbosity_test_cases truncation_limit_lines truncation_limit_chars
		asyncio_mode asyncio_default_fixture_loop_scope timeout timeout_method session_timeout DJANGO_SETTINGS_MODULE
		strict strict_config strict_markers strict_xfail consider_namespace_packages`) {
		pytestIni[k] = roleText
	}
}

func pytestOperands(inv *invocation, sub *argList, r *scanResult) *violation {
	words := sub.words()
	for i := range r.opts {
		o := &r.opts[i]
		v, ok := o.value(words)
		if !ok {
			continue
		}
		switch o.opt.key() {
		case "config-file":
			// The config file's directory becomes the rootdir, where the cache is written.
			inv.add(sub.at(o.val), path.Join(path.Dir(v), ".pytest_cache"), roleWrite, "the cache directory beside "+o.name+" '"+shown(v)+"'")
		case "cov-report":
			if _, dest, found := strings.Cut(v, ":"); found && dest != "" {
				inv.add(sub.at(o.val), dest, roleWrite, "the destination of "+o.name)
			}
		case "override-ini":
			key, value, found := strings.Cut(v, "=")
			role, known := pytestIni[key]
			switch {
			case !found:
				return refuse(evidence.ClassUnsafeOption, "pytest "+o.name+" needs key=value; got '"+shown(v)+"'")
			case key == "addopts":
				return refuse(evidence.ClassUnsafeOption, "pytest "+o.name+" addopts=… adds options the gate never reads (they could move --basetemp or --rootdir anywhere); pass the options themselves on the command line")
			case !known:
				return refuse(evidence.ClassUnsafeOption, "pytest "+o.name+" key '"+shown(key)+"' is not in the gate's model of pytest's ini options (see docs/policy.md); set it in the project's configuration instead")
			case role == roleRead:
				for _, p := range strings.Fields(value) {
					inv.add(sub.at(o.val), p, roleRead, "the "+key+" entry")
				}
			default:
				inv.add(sub.at(o.val), value, role, "the "+key+" setting")
			}
		}
	}
	for _, i := range r.operands {
		w := words[i]
		p, _, _ := strings.Cut(w, "::")
		inv.add(sub.at(i), p, roleRead, "")
	}
	return nil
}

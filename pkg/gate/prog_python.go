package gate

// python, python3, pythonX.Y: the interpreter's own options, then one of
// -c CODE, -m MODULE, a script, or "-". The script is a file it reads
// (inside the sandbox); the words after CODE or the script are the
// program's own arguments, which the gate cannot interpret, so each is
// checked as a path the program may write. `-m` runs only modules the
// policy names (python_modules), each under its own model, or the
// project's own modules (found in the working directory).

import (
	"strings"

	"github.com/deponent-dev/deponent-action/pkg/evidence"
)

var progPython = &Program{
	Family: "python", Names: []string{"python", "python3"}, NameMatch: isPythonName, Run: runPython,
	Summary: "Runs Python. A script is a file it reads (inside the sandbox); -c code is text; the arguments after the code or the " +
		"script are checked as paths the program may write. `-X pycache_prefix=DIR` writes DIR. `-m MODULE` runs a module the " +
		"policy lists in python_modules, under that module's own model (pytest, mypy, …), or a module of the project itself " +
		"(its top-level package is in the working directory, and neither -I nor -P is given), whose arguments are checked like a script's.",
	Refuses: []string{"-m with a module neither the policy lists nor the project holds (package managers such as pip are refused as installs)",
		"an option of the interpreter it does not know"},
}

// isPythonName accepts python3.12, python3.13t and the like.
func isPythonName(h string) bool {
	rest, ok := strings.CutPrefix(h, "python")
	if !ok || rest == "" {
		return false
	}
	for i := 0; i < len(rest); i++ {
		if !(rest[i] >= '0' && rest[i] <= '9' || rest[i] == '.' || i == len(rest)-1 && rest[i] == 't') {
			return false
		}
	}
	return true
}

// The interpreter's options that take a value; every other letter in
// pythonFlags is a flag.
const pythonFlags = "bBdEhiIOPqsSuvVx?R"

func runPython(inv *invocation, args *argList) *violation {
	w := args.words()
	bad := func(why string) *violation { return refuse(evidence.ClassUnsafeOption, "python "+why) }
	rest := func(from int) *violation {
		for k := from; k < len(w); k++ {
			inv.addWord(args.at(k), roleArg)
		}
		return nil
	}
	for i := 0; i < len(w); i++ {
		a := w[i]
		switch {
		case a == "-":
			return rest(i + 1)
		case a == "--":
			if i+1 < len(w) {
				inv.addWord(args.at(i+1), roleRead)
				return rest(i + 2)
			}
			return nil
		case !strings.HasPrefix(a, "-"):
			inv.addWord(args.at(i), roleRead) // the script
			return rest(i + 1)
		case strings.HasPrefix(a, "--"):
			switch {
			case a == "--help" || a == "--version" || a == "--help-env" || a == "--help-xoptions" || a == "--help-all":
			case a == "--check-hash-based-pycs" && i+1 < len(w):
				inv.addWord(args.at(i+1), roleText)
				i++
			case strings.HasPrefix(a, "--check-hash-based-pycs="):
			default:
				return bad("option '" + shown(a) + "' is not in the gate's model of the interpreter (see docs/policy.md)")
			}
			continue
		}
		for j := 1; j < len(a); j++ {
			c := a[j]
			switch {
			case c == 'c' || c == 'm' || c == 'W' || c == 'X':
				valArg, valOff := i, j+1
				if j+1 == len(a) {
					if i+1 >= len(w) {
						return bad("-" + string(c) + " needs a value")
					}
					valArg, valOff = i+1, 0
				}
				v := w[valArg][valOff:]
				switch c {
				case 'c':
					inv.add(args.at(valArg), v, roleText, "")
					return rest(valArg + 1)
				case 'm':
					return inv.pythonModule(args, valArg, v)
				case 'W':
					inv.add(args.at(valArg), v, roleText, "")
				case 'X':
					name, value, _ := strings.Cut(v, "=")
					if name == "pycache_prefix" {
						inv.add(args.at(valArg), value, roleWrite, "the value of -X pycache_prefix")
					} else {
						inv.add(args.at(valArg), v, roleText, "")
					}
				}
				i = valArg
				j = len(a)
			case strings.IndexByte(pythonFlags, c) >= 0:
				if c == 'I' || c == 'P' {
					inv.pythonSafePath = true
				}
			default:
				return bad("option -" + string(c) + " is not in the gate's model of the interpreter (see docs/policy.md)")
			}
		}
	}
	return nil
}

// packageManagers are modules that install or manage packages.
var packageManagers = wordSet(`pip pip3 ensurepip easy_install pipx uv poetry conda mamba pdm pipenv hatch
	setuptools virtualenv twine build flit`)

// pythonModule applies `-m MOD` with its arguments after word valArg.
func (inv *invocation) pythonModule(args *argList, valArg int, mod string) *violation {
	w := args.words()
	if !isDottedName(mod) {
		return refuse(evidence.ClassNotAllowlisted, "python -m '"+shown(mod)+"' is not a module name")
	}
	top, _, _ := strings.Cut(mod, ".")
	inv.add(args.at(valArg), mod, roleText, "")
	if packageManagers[strings.ToLower(top)] {
		return refuse(evidence.ClassDestructive, "python -m "+shown(mod)+" runs a package manager (package install); the environment's packages are set by the "+
			"operator, not the agent, and the gate has no model of "+top+" (so read-only commands such as `pip list` are refused too)")
	}
	if inv.localModule(top) {
		for k := valArg + 1; k < len(w); k++ {
			inv.addWord(args.at(k), roleArg)
		}
		return nil
	}
	if !inv.g.pyModules[mod] {
		return refuse(evidence.ClassNotAllowlisted, "python -m "+shown(mod)+": the policy does not list this module in python_modules (it lists: "+
			strings.Join(inv.g.pol.PythonModules, ", ")+"), and it is not a module of the project; run a script of the project instead, "+
			"or ask the operator to add the module")
	}
	p := programsByModule[mod]
	if p == nil {
		return refuse(evidence.ClassNotAllowlisted, "python -m "+shown(mod)+" has no model in the gate's catalogue")
	}
	return inv.runProgram(p, &argList{inv: inv, from: args.at(valArg + 1)})
}

// localModule reports whether `python -m top...` imports the project's own
// code: without -I or -P, the working directory comes first on sys.path.
func (inv *invocation) localModule(top string) bool {
	if inv.pythonSafePath {
		return false
	}
	for _, cwd := range inv.cwds {
		found := false
		for _, cand := range []string{top + ".py", top} {
			if _, ok, perr := resolveStat(inv.g.sandbox, joinCwd(cwd, cand)); perr == nil && ok {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

func isDottedName(s string) bool {
	if s == "" || len(s) > 256 {
		return false
	}
	for _, part := range strings.Split(s, ".") {
		if part == "" || part[0] >= '0' && part[0] <= '9' {
			return false
		}
		for i := 0; i < len(part); i++ {
			c := part[i]
			if !(isASCIIAlnum(c) || c == '_') {
				return false
			}
		}
	}
	return true
}

// Models of standard-library modules run with -m.

var progJSONTool = &Program{
	Family: "json.tool", Modules: []string{"json.tool"},
	Summary: "python -m json.tool: pretty-prints JSON. Its first operand is read, its second written.",
	Spec: (&optSpec{Name: "python -m json.tool", Permute: true, Prefix: true, Style: styleArgparse, Opts: []Opt{
		flag("", "sort-keys"), flag("", "no-ensure-ascii"), flag("", "json-lines"), val(roleText, "", "indent"),
		flag("", "tab"), flag("", "no-indent"), flag("", "compact"), flag("", "color"), flag("", "no-color"), flag("h", "help"),
	}}).build(),
	Operands: func(inv *invocation, sub *argList, r *scanResult) *violation {
		for k, i := range r.operands {
			role := roleRead
			if k >= 1 {
				role = roleWrite
			}
			inv.addWord(sub.at(i), role)
		}
		return nil
	},
}

var progVenv = &Program{
	Family: "venv", Modules: []string{"venv"}, Operand: roleWrite,
	Summary: "python -m venv: creates virtual environments in the directories it is given (written: inside the sandbox, off protected paths), with pip from the interpreter's own copy. " +
		"With --clear it first deletes everything in them, so they are also removed paths (never the sandbox root, a protected path or a directory holding one).",
	Operands: func(inv *invocation, sub *argList, r *scanResult) *violation {
		role := roleWrite
		if r.has("clear") {
			role = roleDelete // venv empties the directory before it builds the environment
		}
		for _, i := range r.operands {
			inv.addWord(sub.at(i), role)
		}
		return nil
	},
	Spec: (&optSpec{Name: "python -m venv", Permute: true, Prefix: true, Style: styleArgparse, Opts: []Opt{
		flag("", "system-site-packages"), flag("", "symlinks"), flag("", "copies"), flag("", "clear"),
		flag("", "upgrade"), flag("", "without-pip"), val(roleText, "", "prompt"),
		flag("", "without-scm-ignore-files"), flag("h", "help"),
		refused(flag("", "upgrade-deps"), "downloads and installs the latest pip and setuptools (package install)",
			"create the environment without it; its packages come from the operator's environment"),
	}}).build(),
}

var progUnittest = &Program{
	Family: "unittest", Modules: []string{"unittest"}, Run: runUnittest,
	Summary: "python -m unittest: runs tests. Its operands are test modules or files (read); `discover` reads its -s and -t directories; -k and -p are patterns.",
}

var unittestSpec = (&optSpec{Name: "python -m unittest", Permute: true, Prefix: true, Style: styleArgparse, Opts: []Opt{
	flag("h", "help"), flag("v", "verbose"), flag("q", "quiet"), flag("", "locals"), val(roleText, "", "durations"),
	flag("f", "failfast"), flag("c", "catch"), flag("b", "buffer"), val(roleText, "k"),
}}).build()

var unittestDiscoverSpec = (&optSpec{Name: "python -m unittest discover", Permute: true, Prefix: true, Style: styleArgparse, Opts: []Opt{
	flag("h", "help"), flag("v", "verbose"), flag("q", "quiet"), flag("", "locals"), val(roleText, "", "durations"),
	flag("f", "failfast"), flag("c", "catch"), flag("b", "buffer"), val(roleText, "k"),
	val(roleRead, "s", "start-directory"), val(rolePattern, "p", "pattern"), val(roleRead, "t", "top-level-directory"),
}}).build()

func runUnittest(inv *invocation, args *argList) *violation {
	w := args.words()
	spec := unittestSpec
	if len(w) > 0 && w[0] == "discover" {
		inv.addWord(args.at(0), roleText)
		spec = unittestDiscoverSpec
		args = &argList{inv: inv, from: args.at(1)}
	}
	return inv.runSpec(spec, args, func(inv *invocation, sub *argList, r *scanResult) *violation {
		for _, i := range r.operands {
			inv.addWord(sub.at(i), roleRead)
		}
		return nil
	})
}

var progPyCompile = &Program{
	Family: "py_compile", Modules: []string{"py_compile"}, Operand: roleWrite,
	Summary: "python -m py_compile: compiles the files it is given, writing their bytecode beside them (so the files count as written).",
	Spec: (&optSpec{Name: "python -m py_compile", Permute: true, Prefix: true, Style: styleArgparse, Opts: []Opt{
		flag("q", "quiet"), flag("h", "help"),
	}}).build(),
}

package gate

// go: the go command's flag syntax (-flag, --flag, -flag=value, -flag
// value; no clusters, no abbreviations) per subcommand. Building, testing,
// vetting, running, formatting, listing and reading the environment are
// modelled; -toolexec, -exec and -vettool (which run programs the gate
// never sees), -overlay, `go env -w/-u` (writes the user's go env file),
// tool flags outside a small model (-ldflags=-extld=PROG runs PROG,
// -ldflags=-o=FILE writes the binary at FILE), `go doc -http`,
// `go generate`, `go tool` and downloads are refused. The program `go run`
// and `go test -args` pass their arguments to is the project's own, so
// those arguments are checked as paths it may write.

import (
	"strings"

	"github.com/deponent-dev/deponent-action/pkg/evidence"
)

var goBuildFlags = []Opt{
	flag("", "a"), flag("", "n"), val(roleText, "", "p"), flag("", "race"), flag("", "msan"), flag("", "asan"),
	flag("", "cover"), val(roleText, "", "covermode"), val(roleText, "", "coverpkg"), flag("", "v"),
	flag("", "work"), flag("", "x"), Opt{Long: []string{"asmflags"}, Arg: reqArg, Role: roleText, Key: "asmflags"},
	val(roleText, "", "buildmode"), val(roleText, "", "buildvcs"), val(roleText, "", "compiler"),
	Opt{Long: []string{"gccgoflags"}, Arg: reqArg, Role: roleText, Key: "gccgoflags"},
	Opt{Long: []string{"gcflags"}, Arg: reqArg, Role: roleText, Key: "gcflags"}, val(roleText, "", "installsuffix"), flag("", "json"),
	Opt{Long: []string{"ldflags"}, Arg: reqArg, Role: roleText, Key: "ldflags"},
	flag("", "linkshared"), val(roleText, "", "mod"), flag("", "modcacherw"), val(roleWrite, "", "modfile"),
	val(roleRead, "", "pgo"), val(roleWrite, "", "pkgdir"), val(roleText, "", "tags"), flag("", "trimpath"),
	refused(val(roleText, "", "toolexec"), "runs the program it names around every compiler tool", "leave it out"),
	refused(val(roleText, "", "overlay"), "replaces source files with files the overlay names, which the gate does not read", "leave it out"),
	refused(val(roleText, "", "C"), "runs in another directory, where relative paths mean something else", "use `cd DIR && go …`"),
}

func goSpec(name string, permute bool, extra ...Opt) *optSpec {
	return (&optSpec{Name: "go " + name, Style: styleGoFlag, Permute: permute, Opts: opts(goBuildFlags, extra, one(flag("", "h", "help")))}).build()
}

var goTestFlags = []Opt{
	Opt{Long: []string{"args"}, Key: "args"}, flag("", "c"), val(roleWrite, "", "o"), val(roleText, "", "bench"),
	val(roleText, "", "benchtime"), val(roleText, "", "count"), val(roleText, "", "cpu"), flag("", "failfast"),
	flag("", "fullpath"), val(roleText, "", "fuzz"), val(roleText, "", "fuzzminimizetime"), val(roleText, "", "fuzztime"),
	val(roleText, "", "list"), val(roleText, "", "parallel"), val(roleText, "", "run"), flag("", "short"),
	val(roleText, "", "shuffle"), val(roleText, "", "skip"), val(roleText, "", "timeout"), val(roleText, "", "vet"),
	flag("", "benchmem"), val(roleWrite, "", "blockprofile"), val(roleText, "", "blockprofilerate"),
	val(roleWrite, "", "coverprofile"), val(roleWrite, "", "cpuprofile"), val(roleWrite, "", "memprofile"),
	val(roleText, "", "memprofilerate"), val(roleWrite, "", "mutexprofile"), val(roleText, "", "mutexprofilefraction"),
	val(roleWrite, "", "outputdir"), val(roleWrite, "", "trace"),
	refused(val(roleText, "", "exec"), "runs the test binary through the program it names", "leave it out"),
}

var goSubs = map[string]*optSpec{
	"build":   goSpec("build", true, val(roleWrite, "", "o")),
	"test":    goSpec("test", true, goTestFlags...),
	"vet":     goSpec("vet", true, refused(val(roleText, "", "vettool"), "runs the analysis program it names", "leave it out")),
	"run":     goSpec("run", false, refused(val(roleText, "", "exec"), "runs the binary through the program it names", "leave it out")),
	"fmt":     goSpec("fmt", true),
	"list":    goSpec("list", true, val(roleText, "", "f"), flag("", "m"), flag("", "versions"), flag("", "deps"), flag("", "test"), flag("", "e"), flag("", "export"), flag("", "find"), flag("", "compiled"), flag("", "retracted"), refused(flag("", "u"), "looks up updates on the network", "leave it out")),
	"version": (&optSpec{Name: "go version", Style: styleGoFlag, Permute: true, Opts: []Opt{flag("", "m"), flag("", "v"), flag("", "json")}}).build(),
	"doc": (&optSpec{Name: "go doc", Style: styleGoFlag, Permute: true, Opts: []Opt{flag("", "all"), flag("", "c"), flag("", "cmd"), flag("", "short"), flag("", "src"), flag("", "u"),
		refused(flag("", "http"), "starts a documentation web server (fetching pkgsite) that never exits", "read the documentation with go doc PKG")}}).build(),
	"env": (&optSpec{Name: "go env", Style: styleGoFlag, Permute: true, Opts: []Opt{flag("", "json"), flag("", "changed"),
		refused(flag("", "w"), "writes the user's go environment file, outside the sandbox", "set variables with NAME=value before the command, or in the policy's env"),
		refused(flag("", "u"), "writes the user's go environment file, outside the sandbox", "leave it out")}}).build(),
	"mod tidy":   (&optSpec{Name: "go mod tidy", Style: styleGoFlag, Permute: true, Opts: []Opt{flag("", "v"), flag("", "e"), flag("", "x"), flag("", "diff"), val(roleText, "", "go"), val(roleText, "", "compat")}}).build(),
	"mod verify": (&optSpec{Name: "go mod verify", Style: styleGoFlag, Permute: true}).build(),
	"mod why":    (&optSpec{Name: "go mod why", Style: styleGoFlag, Permute: true, Opts: []Opt{flag("", "m"), flag("", "vendor")}}).build(),
	"mod graph":  (&optSpec{Name: "go mod graph", Style: styleGoFlag, Permute: true, Opts: []Opt{val(roleText, "", "go"), flag("", "x")}}).build(),
	"mod vendor": (&optSpec{Name: "go mod vendor", Style: styleGoFlag, Permute: true, Opts: []Opt{flag("", "v"), flag("", "e"),
		Opt{Long: []string{"o"}, Arg: reqArg, Role: roleDelete, Doc: "go mod vendor removes the directory before it writes it"}}}).build(),
	"mod init": (&optSpec{Name: "go mod init", Style: styleGoFlag, Permute: true}).build(),
	"mod edit": (&optSpec{Name: "go mod edit", Style: styleGoFlag, Permute: true, Opts: []Opt{flag("", "fmt"), val(roleText, "", "module"),
		val(roleText, "", "go"), val(roleText, "", "toolchain"), val(roleText, "", "require"), val(roleText, "", "droprequire"),
		val(roleText, "", "exclude"), val(roleText, "", "dropexclude"), Opt{Long: []string{"replace"}, Arg: reqArg, Role: roleText, Key: "replace"},
		val(roleText, "", "dropreplace"), val(roleText, "", "retract"), val(roleText, "", "dropretract"), val(roleText, "", "godebug"),
		val(roleText, "", "dropgodebug"), flag("", "json"), flag("", "print")}}).build(),
}

var goRefused = map[string]string{
	"install": "installs programs (package install)", "get": "downloads and adds dependencies (package install)",
	"generate": "runs the commands written in //go:generate lines, which the gate never sees; run those commands yourself",
	"tool":     "runs a tool the gate does not model", "bug": "opens a browser", "telemetry": "changes the user's telemetry settings",
	"clean": "removes files, including caches outside the sandbox (-cache, -modcache)", "work": "is not modelled",
	"fix": "is not modelled", "mod download": "downloads modules (the jail has no network)",
}

var progGo = &Program{
	Family: "go", Names: []string{"go"}, Run: runGo,
	Summary: "Builds, tests, vets, runs, formats and lists Go packages; reads `go env`, `go version`, `go doc`; tidies, verifies, " +
		"edits, vendors and explains go.mod. Package patterns and files are read; -o, -coverprofile and the other profile outputs, " +
		"`go fmt` packages (rewritten: a tree must not hold a protected directory with Go files in it), `go mod vendor -o DIR` (removed first, so never the sandbox root or a directory holding a protected path), " +
		"-outputdir, -pkgdir and -modfile are written; arguments after `go run` files or `go test -args` are checked as paths the program may write.",
	Refuses: []string{"-toolexec, -exec, -vettool, -overlay and -C",
		"-ldflags, -gcflags and -asmflags words outside a small model of the linker, compiler and assembler flags " +
			"(-extld and -extldflags run other programs, -o and the profile flags write files the gate never sees), and any -gccgoflags", "go env -w/-u", "go install, get, generate, tool, clean, work, fix, bug, telemetry, mod download",
		"a package or module written with @version (it would be downloaded)", "go mod edit -replace with a local path outside the sandbox"},
}

func runGo(inv *invocation, args *argList) *violation {
	w := args.words()
	if len(w) == 0 {
		return nil
	}
	name := w[0]
	inv.addWord(args.at(0), roleText)
	from := 1
	if name == "mod" && len(w) > 1 && !strings.HasPrefix(w[1], "-") {
		name = "mod " + w[1]
		inv.addWord(args.at(1), roleText)
		from = 2
	}
	if why, ok := goRefused[name]; ok {
		class := evidence.ClassNotAllowlisted
		return refuse(class, "go "+name+" is refused: it "+why)
	}
	spec := goSubs[name]
	switch {
	case name == "version" || name == "help":
		if spec == nil {
			spec = goSubs["doc"]
		}
	case spec == nil:
		return refuse(evidence.ClassNotAllowlisted, "go "+shown(name)+" is not a go subcommand the gate models (see docs/policy.md)")
	}
	sub := &argList{inv: inv, from: args.at(from)}
	// go test -args: everything after it goes to the test binary.
	words := sub.words()
	end := len(words)
	if name == "test" {
		for i, a := range words {
			if a == "-args" || a == "--args" {
				end = i + 1
				break
			}
		}
	}
	view := &invocation{g: inv.g, head: inv.head, args: inv.args[:sub.from+end], cwds: inv.cwds}
	v := view.runSpec(spec, &argList{inv: view, from: sub.from}, func(vi *invocation, s *argList, r *scanResult) *violation {
		return goOperands(vi, s, r, name)
	})
	inv.checks = append(inv.checks, view.checks...)
	if v != nil {
		return v
	}
	for i := sub.from + end; i < len(inv.args); i++ {
		inv.addWord(i, roleArg)
	}
	return nil
}

func goOperands(inv *invocation, sub *argList, r *scanResult, name string) *violation {
	words := sub.words()
	for i := range r.opts {
		o := &r.opts[i]
		if tool := goToolFlagTables[o.opt.key()]; tool != nil {
			v, _ := o.value(words)
			if why := inv.goToolFlags(sub.at(o.val), o.opt.key(), v, tool); why != nil {
				return why
			}
		}
	}
	if o := r.get("replace"); o != nil {
		v, _ := o.value(words)
		if _, to, ok := strings.Cut(v, "="); ok && (strings.HasPrefix(to, ".") || strings.HasPrefix(to, "/")) {
			inv.add(sub.at(o.val), to, roleRead, "the local path of -replace")
		}
	}
	programArgs := false
	for k, i := range r.operands {
		a := words[i]
		if programArgs {
			inv.addWord(sub.at(i), roleArg)
			continue
		}
		if strings.Contains(a, "@") && name != "mod edit" {
			return refuse(evidence.ClassNotAllowlisted, "go "+name+" "+shown(a)+": a version after @ would be downloaded (the jail has no network); use the module's packages as they are in the sandbox")
		}
		role := roleRead
		switch {
		case name == "run" && k > 0 && !(strings.HasSuffix(a, ".go") && strings.HasSuffix(words[r.operands[k-1]], ".go")):
			// The program's own arguments: what follows the package (or the .go files).
			programArgs = true
			role = roleArg
		case name == "fmt" && (strings.HasPrefix(a, "./") || strings.HasPrefix(a, "../") || strings.HasPrefix(a, "/") || a == "." || strings.HasSuffix(a, ".go")):
			// gofmt -l -w: the files of the packages named (a tree with /...) are rewritten.
			p := strings.TrimSuffix(strings.TrimSuffix(a, "/..."), "...")
			if p == "" {
				p = "."
			}
			inv.add(sub.at(i), p, roleRewriteGoTree, "")
			continue
		case name == "mod edit":
			role = roleWrite // the go.mod file to edit instead of the main module's
		case name == "version":
			role = roleRead // binaries (or directories of them) whose build information it prints
		case name == "env" || name == "doc" || name == "mod init" || name == "mod why":
			role = roleText
		case strings.HasPrefix(a, "./") || strings.HasPrefix(a, "../") || strings.HasPrefix(a, "/") || a == "." || strings.HasSuffix(a, ".go"):
			role = roleRead
		default:
			role = roleText // an import path
		}
		if role == roleRead {
			p := strings.TrimSuffix(strings.TrimSuffix(a, "/..."), "...")
			if p == "" {
				p = "."
			}
			inv.add(sub.at(i), p, roleRead, "")
			continue
		}
		inv.addWord(sub.at(i), role)
	}
	return nil
}

// The flags the go command passes to its tools (-ldflags, -gcflags,
// -asmflags, -gccgoflags): "[pattern=]flags", the flags split on spaces
// with '…' or "…" quoting a whole field (cmd/go's quoted.Split), then
// read by the tool's own Go flag parser. A tool flag can run a program
// (the linker's -extld, and -extldflags handed to the C linker) or write a
// file (-o, -cpuprofile, …), so only these are modelled, each with the
// role of its value; any other flag, and any operand, is refused.
var goToolFlagTables = map[string]map[string]Role{
	"ldflags": {"s": roleNone, "w": roleNone, "X": roleText, "buildid": roleText, "linkmode": roleText,
		"v": roleNone, "strictdups": roleText, "compressdwarf": roleText, "bindnow": roleNone, "checklinkname": roleText},
	"gcflags": {"N": roleNone, "l": roleNone, "m": roleNone, "S": roleNone, "B": roleNone, "C": roleNone, "e": roleNone,
		"live": roleNone, "wb": roleNone, "lang": roleText, "spectre": roleText, "race": roleNone, "smallframes": roleNone},
	"asmflags":   {"I": roleRead, "D": roleText, "S": roleNone, "trimpath": roleText, "shared": roleNone, "dynlink": roleNone},
	"gccgoflags": {},
}

// goToolValueFlags are the modelled tool flags that take a value (the next
// field when not glued with "=").
var goToolValueFlags = wordSet(`X buildid linkmode strictdups compressdwarf checklinkname lang spectre I D trimpath`)

func (inv *invocation) goToolFlags(arg int, key, v string, table map[string]Role) *violation {
	bad := func(why string) *violation {
		return refuse(evidence.ClassUnsafeOption, "go -"+key+" '"+shown(v)+"': "+why+
			"; the gate reads only the tool flags in its model (see docs/policy.md), since others run programs (-extld, -extldflags) or write files (-o, profiles)")
	}
	flags := strings.TrimSpace(v)
	if flags != "" && flags[0] != '-' {
		_, rest, ok := strings.Cut(flags, "=")
		if !ok {
			return bad("not [pattern=]flags")
		}
		flags = rest
	}
	fields, ok := splitGoQuoted(flags)
	if !ok {
		return bad("a quote the go command would not read")
	}
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		if len(f) < 2 || f[0] != '-' {
			return bad("'" + shown(f) + "' is not a flag (the tool would read it as another input)")
		}
		body := strings.TrimPrefix(f[1:], "-")
		name, val, hasVal := strings.Cut(body, "=")
		role, known := table[name]
		if !known {
			return bad("the tool flag -" + name + " is not modelled")
		}
		if goToolValueFlags[name] && !hasVal {
			if i+1 >= len(fields) {
				return bad("-" + name + " needs a value")
			}
			i++
			val, hasVal = fields[i], true
		}
		if hasVal && role.isPath() {
			inv.add(arg, val, role, "the value of -"+name+" in -"+key)
		}
	}
	return nil
}

// splitGoQuoted splits like cmd/go's quoted.Split: fields separated by
// spaces, a field may be wholly quoted with ' or " (no escapes inside).
func splitGoQuoted(s string) ([]string, bool) {
	var out []string
	for {
		s = strings.TrimLeft(s, " \t\n\r")
		if s == "" {
			return out, true
		}
		if q := s[0]; q == '\'' || q == '"' {
			end := strings.IndexByte(s[1:], q)
			if end < 0 {
				return nil, false
			}
			out = append(out, s[1:1+end])
			s = s[2+end:]
			if s != "" && !strings.ContainsRune(" \t\n\r", rune(s[0])) {
				return nil, false
			}
			continue
		}
		end := strings.IndexAny(s, " \t\n\r")
		if end < 0 {
			end = len(s)
		}
		f := s[:end]
		if strings.ContainsAny(f, "'\"") {
			return nil, false
		}
		out = append(out, f)
		s = s[end:]
	}
}

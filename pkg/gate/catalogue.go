package gate

// The program catalogue.
//
// Every program the gate lets run has a model here, one file per family
// (prog_grep.go, prog_git.go, …): its names, its option table, which
// options are refused and why, what its operands are (paths it reads or
// writes, patterns, text), and hooks for what an option table cannot say
// (git's subcommands, find's expressions, sed's and awk's scripts, python's
// -m). A program without a model cannot be allowlisted: the policy parser
// refuses it by name, so no program runs with an option surface the gate
// has not read.

import (
	"sort"
	"strings"

	"github.com/deponent-dev/deponent-action/pkg/evidence"
)

// Program is one family's model.
type Program struct {
	Family string   // the model's name: its file is prog_<Family>.go
	Names  []string // the heads it governs
	// NameMatch accepts further heads (python3.12 for the python family).
	NameMatch func(string) bool
	// Modules are the `python -m` names the model also governs.
	Modules []string
	Summary string   // what the model allows, for docs/policy.md
	Spec    *optSpec // the option table; nil when Run does everything
	// Operands assigns roles to the operands of a scan; nil gives every
	// operand the role Operand.
	Operands func(inv *invocation, sub *argList, r *scanResult) *violation
	Operand  Role
	// Run replaces the default reading (Spec, then Operands) for programs
	// with subcommands or their own syntax.
	Run func(inv *invocation, args *argList) *violation
	// Refuses lists what the model refuses beyond its refused options, for
	// docs/policy.md ("sed scripts with the e command").
	Refuses []string
	// SubSpecs are further option tables (subcommands), for docs and tests.
	SubSpecs []*optSpec
}

// catalogue is the registry: every modelled program.
var catalogue = []*Program{
	progAwk, progBlack, progCat, progCp, progDiff, progEcho, progFind, progGit, progGo, progGrep,
	progHead, progJSONTool, progLs, progMake, progMkdir, progMv, progMypy, progPrintf, progPwd,
	progPyCompile, progPytest, progPython, progRm, progRuff, progSed, progSort, progTail, progTee,
	progTouch, progTrue, progUniq, progUnittest, progVenv, progWc, progWhich,
}

var (
	programsByName   = map[string]*Program{}
	programsByModule = map[string]*Program{}
)

func init() {
	for _, p := range catalogue {
		for _, n := range p.Names {
			if programsByName[n] != nil {
				panic("gate: two models for " + n)
			}
			programsByName[n] = p
		}
		for _, m := range p.Modules {
			if programsByModule[m] != nil {
				panic("gate: two models for module " + m)
			}
			programsByModule[m] = p
		}
	}
}

// programFor returns the model of a head, or nil.
func programFor(head string) *Program {
	if p := programsByName[head]; p != nil {
		return p
	}
	for _, p := range catalogue {
		if p.NameMatch != nil && p.NameMatch(head) {
			return p
		}
	}
	return nil
}

// ModelledPrograms lists every head the catalogue models (not counting
// pattern-matched names such as python3.12), sorted.
func ModelledPrograms() []string {
	out := make([]string, 0, len(programsByName))
	for n := range programsByName {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// ModelledModules lists every `python -m` module the catalogue models.
func ModelledModules() []string {
	out := make([]string, 0, len(programsByModule))
	for n := range programsByModule {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// argList is the slice of a command's arguments a model reads: words
// [from, len) of the invocation's args.
type argList struct {
	inv  *invocation
	from int
}

func (a *argList) words() []string { return a.inv.args[a.from:] }

// at returns the absolute index of the i-th word of the list.
func (a *argList) at(i int) int { return a.from + i }

// check is one thing the gate must verify about one argument: that its
// value (the word, or the part of it an option's value occupies) is
// acceptable in its role.
type check struct {
	arg  int    // index into invocation.args
	val  string // the value checked: the word or a substring of it
	role Role
	what string // how reasons name it: "the value of --output"; "" for "argument 'x'"
}

// invocation is one simple command being read by its model.
type invocation struct {
	g    *Gate
	head string
	args []string // the arguments after glob expansion, without the head
	cwds []string // the working directories the command may run in, sandbox-relative
	// alt is set while the alternate (BSD) reading is being applied.
	alt    bool
	checks []check
	// pythonSafePath: the interpreter was run with -I or -P, so `-m` never
	// imports from the working directory.
	pythonSafePath bool
}

func (inv *invocation) add(arg int, val string, role Role, what string) {
	inv.checks = append(inv.checks, check{arg: arg, val: val, role: role, what: what})
}

// addWord gives a whole argument a role.
func (inv *invocation) addWord(arg int, role Role) {
	inv.add(arg, inv.args[arg], role, "")
}

// model reads one command's arguments with its program's model.
func (inv *invocation) model(p *Program) *violation {
	args := &argList{inv: inv, from: 0}
	return inv.runProgram(p, args)
}

// runProgram applies a model to a slice of the arguments (the whole
// command, or what follows `python -m mod`).
func (inv *invocation) runProgram(p *Program, args *argList) *violation {
	if p.Run != nil {
		return p.Run(inv, args)
	}
	return inv.runSpec(p.Spec, args, func(inv *invocation, sub *argList, r *scanResult) *violation {
		if p.Operands != nil {
			return p.Operands(inv, sub, r)
		}
		for _, i := range r.operands {
			inv.addWord(sub.at(i), p.Operand)
		}
		return nil
	})
}

// runSpec scans args against spec under every reading the real program
// may apply (GNU, and BSD when spec.Alt), records a check for each option
// value, and lets operands assign the operands' roles. A reading the
// program would reject is an error in the primary reading (the gate does
// not approve what it cannot read) and no reading at all in the alternate
// one (the BSD program would refuse the list and do nothing).
func (inv *invocation) runSpec(spec *optSpec, args *argList, operands func(*invocation, *argList, *scanResult) *violation) *violation {
	words := args.words()
	if spec.ArgFiles {
		for i, w := range words {
			if strings.HasPrefix(w, "@") {
				return &violation{evidence.ClassUnsafeOption, spec.Name + " reads more arguments from '" + shown(w) +
					"' (an @file argument), which the gate would never see; pass the options on the command line (write '" +
					shown("./"+w) + "' if it names a file)"}
			}
			_ = i
		}
	}
	readings := 1
	if spec.Alt {
		readings = 2
	}
	saved := inv.alt
	defer func() { inv.alt = saved }()
	for k := 0; k < readings; k++ {
		alt := k == 1
		r := scanArgs(spec, words, alt)
		if r.invalid != "" {
			if alt {
				continue
			}
			return invalidArgs(spec, &r)
		}
		inv.alt = alt
		if v := inv.applyOpts(spec, args, &r); v != nil {
			return v
		}
		if v := operands(inv, args, &r); v != nil {
			return v
		}
	}
	return nil
}

// applyOpts refuses refused options and records a check for every option
// value.
func (inv *invocation) applyOpts(spec *optSpec, args *argList, r *scanResult) *violation {
	words := args.words()
	for i := range r.opts {
		o := &r.opts[i]
		if o.opt.Refuse != "" {
			return refusedOption(spec, o, words)
		}
		if v, ok := o.value(words); ok && o.opt.Role != roleNone {
			inv.add(args.at(o.val), v, o.opt.Role, "the value of "+o.name)
		}
	}
	return nil
}

func refusedOption(spec *optSpec, o *seenOpt, words []string) *violation {
	written := words[o.word]
	name := o.name
	if strings.HasPrefix(written, "--") {
		if w, _, _ := strings.Cut(written, "="); w != o.name {
			name += " (written '" + shown(w) + "')"
		}
	}
	reason := spec.Name + " " + name + " " + o.opt.Refuse
	if o.opt.Instead != "" {
		reason += "; " + o.opt.Instead
	}
	return &violation{o.opt.Class, reason}
}

func invalidArgs(spec *optSpec, r *scanResult) *violation {
	reason := spec.Name + ": " + r.invalid
	switch {
	case r.ambiguous != nil:
		reason += "; spell the option out in full"
	case r.unknown != "":
		reason += ": the gate refuses options that are not in its model of " + spec.Name +
			" (see docs/policy.md); leave it out, or put an operand that starts with '-' after '--'"
	}
	return &violation{evidence.ClassUnsafeOption, reason}
}

// refuse builds a refusal for a model's own rule.
func refuse(class evidence.Class, reason string) *violation {
	return &violation{class, reason}
}

// Option table helpers: the catalogue files read as tables.

// flag is an option without a value.
func flag(short string, long ...string) Opt { return Opt{Short: short, Long: long} }

// val is an option with a required value of the given role.
func val(role Role, short string, long ...string) Opt {
	return Opt{Short: short, Long: long, Arg: reqArg, Role: role}
}

// optval is an option with an optional, glued value of the given role.
func optval(role Role, short string, long ...string) Opt {
	return Opt{Short: short, Long: long, Arg: optArg, Role: role}
}

// refused marks an option as refused, with the reason and what to do
// instead.
func refused(o Opt, why, instead string) Opt {
	o.Refuse, o.Instead = why, instead
	return o
}

// altArg sets how the BSD variant reads the option's value.
func altArg(o Opt, k argKind) Opt {
	o.AltArg, o.AltSet = k, true
	return o
}

// flags declares many value-less long options at once ("--no-color", …).
func flags(longs ...string) []Opt {
	out := make([]Opt, len(longs))
	for i, l := range longs {
		out[i] = Opt{Long: []string{l}}
	}
	return out
}

// opts concatenates option groups.
func opts(groups ...[]Opt) []Opt {
	var out []Opt
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

// one wraps single options for opts().
func one(o ...Opt) []Opt { return o }

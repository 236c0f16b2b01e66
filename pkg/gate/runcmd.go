package gate

// run_cmd: from a parsed command line to a decision and its rendering.
//
// Each simple command goes through the same phases, and every phase runs
// over the whole chain before the next, so a chain is refused for its most
// telling problem (a denied phrase before an unknown program before a
// path), whichever command carries it:
//
//   - prepare: the working directories each command may run in (after
//     `cd SUBDIR &&`), glob expansion against them, and the program's
//     model, which gives every argument a role;
//   - the denylist, over each command's program, options and operands
//     (search patterns of read-only programs excepted);
//   - the program: allowlisted, modelled, and its model's refusals;
//   - arguments: every path, in every working directory the command may
//     see, against the sandbox and the protected paths.

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/deponent-dev/deponent-action/pkg/evidence"
)

// Caps on `cd` and on the readings of one argument.
const (
	maxCd              = 8  // cd commands in one run_cmd
	maxCwds            = 8  // working directories a command may run in
	maxGluedReadings   = 16 // "=" values checked in one unmodelled argument
	maxClusterReadings = 40 // glued-value readings checked in one unmodelled option cluster
)

func (g *Gate) decideRunCmd(cmd string) Decision {
	if strings.TrimSpace(cmd) == "" {
		return block(evidence.ClassEmptyCommand, "run_cmd needs 'cmd', a non-empty string")
	}
	if len(cmd) > maxCommandBytes {
		return block(evidence.ClassCommandTooLong, fmt.Sprintf("command is %d bytes; the limit is %d (64 KiB)", len(cmd), maxCommandBytes))
	}
	s, v := parseCommand(cmd)
	if v != nil {
		return block(v.class, v.reason)
	}
	script, v := g.checkScript(s)
	if v != nil {
		return block(v.class, v.reason)
	}
	return Decision{Verdict: evidence.VerdictAllow, BlastClass: evidence.ClassLocalExec,
		Reason: "allowlisted, in-sandbox, non-chained-to-deny", Script: script}
}

// cmdPlan is one simple command on its way through the phases.
type cmdPlan struct {
	c     *shCommand
	head  string
	cwds  []string
	isCd  bool
	args  []string // arguments after glob expansion
	src   []int    // args[i] came from c.words[src[i]]
	globs []bool   // c.words[j] was expanded from a glob
	inv   invocation
	// modelled: the model ran, so every argument has its roles.
	modelled bool
	early    *violation // a refusal found while preparing, reported in the program phase
	late     *violation // a path refusal found while preparing, reported in the argument phase
}

// checkScript applies policy to a parsed command line and renders it.
func (g *Gate) checkScript(s *shScript) (string, *violation) {
	if len(s.cmds) == 0 {
		return "", &violation{evidence.ClassEmptyCommand, "command has only comments or blank lines"}
	}
	plans := make([]cmdPlan, len(s.cmds))
	g.prepare(s, plans)

	var dt denyText
	for i := range plans {
		dt.reset()
		plans[i].denyWords(&dt)
		if v := g.denyHit(&dt); v != nil {
			return "", v
		}
	}
	for i := range plans {
		p := &plans[i]
		if !p.isCd {
			if v := g.checkHead(p.c.words[0]); v != nil {
				return "", v
			}
		}
		if p.early != nil {
			return "", p.early
		}
		if v := checkRedirects(s, i); v != nil {
			return "", v
		}
	}
	for i := range plans {
		if v := g.checkArgs(&plans[i]); v != nil {
			return "", v
		}
	}
	return render(s, plans)
}

// prepare works out, command by command, the working directories, the
// expanded arguments and the model's roles. Refusals are kept in the plan
// for their phase; once a `cd` is refused, the commands after it are not
// modelled (the denylist then reads all their words).
func (g *Gate) prepare(s *shScript, plans []cmdPlan) {
	// The working directories a command may run in follow the shell's
	// and-or logic: `cd D && x` runs x in D; `cd D || x` and `cd D; x`
	// may run x in either (cd can fail). cur is the set at the start of an
	// and-or list, run the set for the next pipeline, okSet/failSet the
	// sets in which the last pipeline succeeded or failed.
	cur := []string{"."}
	var run, okSet, failSet []string
	run = cur
	cds := 0
	stop := false
	for i := range plans {
		p := &plans[i]
		p.c = &s.cmds[i]
		p.head = p.c.words[0].val
		p.cwds = run
		piped := (i > 0 && s.ops[i-1] == "|") || (i < len(s.ops) && s.ops[i] == "|")
		first := i == 0 || s.ops[i-1] != "|" && s.ops[i-1] != "&&" && s.ops[i-1] != "||"
		if p.head == "cd" && p.c.words[0].glob == "" {
			p.isCd = true
			cds++
		}
		// This command's own effect on the working directory.
		ok, fail := run, run
		switch {
		case stop:
		case p.isCd:
			dirs, v := g.cdTargets(p, piped, cds)
			if v != nil {
				p.early = v
				stop = true
				break
			}
			ok = dirs
		default:
			g.prepareArgs(p)
		}
		// Fold it into the pipeline and the and-or list.
		if i > 0 && s.ops[i-1] == "|" {
			// Inside a pipeline: each part runs in a subshell with the
			// pipeline's directories; the status is the last part's.
			ok, fail = run, run
		}
		if first {
			okSet, failSet = ok, fail
		} else if s.ops[i-1] == "&&" {
			okSet, failSet = ok, union(failSet, fail)
		} else if s.ops[i-1] == "||" {
			okSet, failSet = union(okSet, ok), fail
		}
		if i == len(plans)-1 {
			break
		}
		switch s.ops[i] {
		case "&&":
			run = okSet
		case "||":
			run = failSet
		case "|":
			// run stays: the next part of the pipeline sees the same directories.
		default: // ";"
			cur = union(okSet, failSet)
			run = cur
		}
		if len(run) > maxCwds {
			p.early = &violation{evidence.ClassTooComplex, fmt.Sprintf("the commands after this one could run in more than %d directories (cd chained with ; or ||); chain cd with &&", maxCwds)}
			stop = true
		}
	}
}

func union(a, b []string) []string {
	out := append([]string(nil), a...)
	for _, x := range b {
		found := false
		for _, y := range out {
			if x == y {
				found = true
				break
			}
		}
		if !found {
			out = append(out, x)
		}
	}
	return out
}

// cdTargets checks `cd DIR` and returns the directories it leads to, one
// per directory it may start from. Only `cd SUBDIR` into the sandbox is
// modelled: no options, no "-", no "..", no globs, not in a pipeline.
func (g *Gate) cdTargets(p *cmdPlan, piped bool, count int) ([]string, *violation) {
	fail := func(why string) ([]string, *violation) {
		return nil, &violation{evidence.ClassShellConstruct, "cd " + why}
	}
	w := p.c.words
	switch {
	case count > maxCd:
		return fail(fmt.Sprintf("is allowed at most %d times in one run_cmd", maxCd))
	case len(p.c.assigns) > 0 || len(p.c.redirs) > 0:
		return fail("takes no NAME=value prefix or redirect here")
	case piped:
		return fail("inside a pipeline changes nothing (each part runs in a subshell); write `cd DIR && cmd`")
	case len(w) != 2:
		return fail("takes exactly one directory here: `cd SUBDIR && cmd`")
	}
	d := w[1]
	switch {
	case d.glob != "":
		return fail("into a glob is not allowed; name the directory")
	case d.val == "" || d.val == "-" || strings.HasPrefix(d.val, "-"):
		return fail("needs a directory name (no options, no `cd -`)")
	case hasDotDot(d.val):
		return fail("'" + shown(d.val) + "' is refused: '..' is not allowed in cd (the shell and the kernel read it differently through symlinks); name the directory from the sandbox root or the current directory")
	}
	out := make([]string, 0, len(p.cwds))
	for _, from := range p.cwds {
		rel, perr := resolveIn(g.sandbox, joinCwd(from, d.val))
		if perr != nil {
			return fail("'" + shown(d.val) + "' " + perr.detail() + "; cd only into a directory inside the sandbox")
		}
		out = union(out, []string{rel})
	}
	return out, nil
}

func hasDotDot(p string) bool {
	for r := p; r != ""; {
		var c string
		c, r = nextComponent(r)
		if c == ".." {
			return true
		}
	}
	return false
}

// joinCwd names path p as seen from the sandbox-relative directory cwd.
func joinCwd(cwd, p string) string {
	if cwd == "." || strings.HasPrefix(p, "/") {
		return p
	}
	return cwd + "/" + p
}

// prepareArgs expands globs and runs the model.
func (g *Gate) prepareArgs(p *cmdPlan) {
	words := p.c.words[1:]
	p.globs = nil // made at the first expanded glob; read through p.expanded
	p.args = make([]string, 0, len(words))
	p.src = make([]int, 0, len(words))
	budget := maxGlobMatches
	for j, w := range words {
		if w.glob == "" {
			p.args = append(p.args, w.val)
			p.src = append(p.src, j+1)
			continue
		}
		matches, v := g.expand(p, w, &budget)
		if v != nil {
			p.late = v
			return
		}
		if matches == nil {
			p.args = append(p.args, w.val) // no match: sh passes the word on as it is
			p.src = append(p.src, j+1)
			continue
		}
		if p.globs == nil {
			p.globs = make([]bool, len(p.c.words))
		}
		p.globs[j+1] = true
		for _, m := range matches {
			p.args = append(p.args, m)
			p.src = append(p.src, j+1)
		}
	}
	p.inv = invocation{g: g, head: p.head, args: p.args, cwds: p.cwds, checks: make([]check, 0, len(p.args)+2)}
	prog := g.modelFor(p.head)
	if prog == nil {
		return
	}
	if v := p.inv.model(prog); v != nil {
		p.early = v
		return
	}
	p.modelled = true
}

// expanded reports whether word j of the command was a glob that matched.
func (p *cmdPlan) expanded(j int) bool {
	return p.globs != nil && p.globs[j]
}

// modelFor returns the model a head runs under: its catalogue entry, the
// project-program model for allow_executables, or nil for a head that is
// not allowed (refused in the program phase).
func (g *Gate) modelFor(head string) *Program {
	if strings.ContainsRune(head, '/') {
		if g.allowExec[head] {
			return progProject
		}
		return nil
	}
	if !g.allow[head] {
		return nil
	}
	return programFor(head)
}

// expand expands one glob word in the command's working directory.
func (g *Gate) expand(p *cmdPlan, w shWord, budget *int) ([]string, *violation) {
	if strings.HasPrefix(w.val, "/") {
		return nil, &violation{evidence.ClassArgPathEscape, "argument '" + shown(w.val) +
			"' is an absolute glob; globs are expanded only relative to the sandbox"}
	}
	if len(p.cwds) != 1 {
		return nil, &violation{evidence.ClassTooComplex, "glob '" + shown(w.val) +
			"' after a cd that may not have happened (chained with ; or ||): its matches depend on the directory; chain cd with &&"}
	}
	matches, perr, ok := expandGlobIn(g.sandbox, p.cwds[0], w.glob, *budget)
	if !ok {
		return nil, &violation{evidence.ClassTooComplex, fmt.Sprintf("glob '%s' matches more than %d paths; narrow it", shown(w.val), maxGlobMatches)}
	}
	if perr != nil {
		return nil, &violation{evidence.ClassArgPathEscape, "glob '" + shown(w.val) + "' " + perr.detail()}
	}
	*budget -= len(matches)
	for _, m := range matches {
		if m[0] == '-' {
			// A file named "--compress-program=sh" would become an
			// option after expansion, past the option checks.
			return nil, &violation{evidence.ClassUnsafeOption, "glob '" + shown(w.val) + "' matches '" + shown(m) +
				"', which the program would read as an option; use ./" + shown(w.val) + " or name the files"}
		}
	}
	return matches, nil
}

// denyWords adds the words the denylist reads: the prefixes, the program,
// and every argument except the search patterns of a read-only program
// (of "--regexp=sudo" only "--regexp=" is read).
func (p *cmdPlan) denyWords(d *denyText) {
	for _, a := range p.c.assigns {
		d.add(a.name + "=" + a.val)
	}
	for j, w := range p.c.words {
		if j > 0 && p.modelled && !p.expanded(j) {
			if rest, ok := p.patternPart(j); ok {
				if rest != "" {
					d.add(rest)
				}
				continue
			}
		}
		d.add(w.val)
	}
}

// patternPart reports whether source word j reached the model as one
// argument whose value is a pattern in every reading, and returns the part
// of the word before the pattern (an option's name, or "").
func (p *cmdPlan) patternPart(j int) (string, bool) {
	arg := -1
	for i, s := range p.src {
		if s == j {
			arg = i
			break
		}
	}
	if arg < 0 {
		return "", false
	}
	w := p.args[arg]
	off := -1
	for _, c := range p.inv.checks {
		if c.arg != arg {
			continue
		}
		if c.role != rolePattern || len(c.val) > len(w) || w[len(w)-len(c.val):] != c.val {
			return "", false
		}
		if o := len(w) - len(c.val); off < 0 || o < off {
			off = o
		}
	}
	if off < 0 {
		return "", false
	}
	return w[:off], true
}

// checkRedirects: `2>&1` is allowed where it sends standard error where
// standard output already goes — into a pipe, or to /dev/null after
// `>/dev/null` — and nowhere else (the runner records both streams).
func checkRedirects(s *shScript, i int) *violation {
	c := &s.cmds[i]
	piped := i < len(s.ops) && s.ops[i] == "|"
	stdoutNull := false
	for _, r := range c.redirs {
		switch {
		case r.toDevNull && r.fd == '1':
			stdoutNull = true
		case r.toStdout && !piped && !stdoutNull:
			return &violation{evidence.ClassRedirect, "`2>&1` is allowed only before a pipe (`cmd 2>&1 | tail`) or after `>/dev/null`: the runner already records standard output and standard error"}
		}
	}
	return nil
}

// checkArgs verifies the prefixes, the expansion and every checked
// argument in every directory the command may run in.
func (g *Gate) checkArgs(p *cmdPlan) *violation {
	if p.isCd {
		return nil
	}
	for _, a := range p.c.assigns {
		if v := g.checkAssign(p, a); v != nil {
			return v
		}
	}
	if p.late != nil {
		return p.late
	}
	if !p.modelled {
		return nil
	}
	// Whatever its role, every glob match must be inside the sandbox: a
	// match is a name the shell read from the filesystem.
	for i, a := range p.args {
		if !p.expanded(p.src[i]) {
			continue
		}
		for _, cwd := range p.cwds {
			if _, perr := resolveIn(g.sandbox, joinCwd(cwd, a)); perr != nil {
				w := p.c.words[p.src[i]].val
				return &violation{evidence.ClassArgPathEscape, "glob '" + shown(w) + "' matches '" + shown(a) + "', which " + perr.detail()}
			}
		}
	}
	var done map[check]bool // the alternate reading repeats most checks: verify each once
	if len(p.inv.checks) > 16 {
		done = make(map[check]bool, len(p.inv.checks))
	}
	for k, c := range p.inv.checks {
		if !c.role.isPath() {
			continue
		}
		key := check{val: c.val, role: c.role}
		if done != nil {
			if done[key] {
				continue
			}
			done[key] = true
		} else if seenCheck(p.inv.checks[:k], key) {
			continue
		}
		for _, cwd := range p.cwds {
			if v := g.checkValue(p, c, cwd); v != nil {
				return v
			}
		}
	}
	return nil
}

func seenCheck(before []check, key check) bool {
	for _, b := range before {
		if b.val == key.val && b.role == key.role {
			return true
		}
	}
	return false
}

// checkValue checks one value in one working directory.
func (g *Gate) checkValue(p *cmdPlan, c check, cwd string) *violation {
	what := c.what
	if what == "" {
		what = "argument '" + shown(p.args[c.arg]) + "'"
	} else {
		what += " ('" + shown(c.val) + "')"
	}
	if cwd != "." {
		what += " (in '" + shown(cwd) + "' after cd)"
	}
	if c.role == roleArg {
		return g.checkUnknownArg(p.head, what, c.val, cwd)
	}
	if c.val == "" || c.val == "-" && c.role != roleDelete {
		return nil // no path, or standard input/output
	}
	if c.role == roleDelete {
		return g.checkDelete(p.head, what, c.val, cwd)
	}
	rel, perr := resolveIn(g.sandbox, joinCwd(cwd, c.val))
	if perr != nil {
		return &violation{evidence.ClassArgPathEscape, what + " " + perr.detail() + pathAdvice(c.val)}
	}
	if c.role == roleWrite || c.role == roleWriteTree || c.role == roleWriteDest || c.role == roleRewriteTree || c.role == roleRewriteGoTree {
		if entry, ok := g.protectedEntry(rel); ok {
			return &violation{evidence.ClassProtectedPath, "'" + p.head + "' would write " + what + ", under protected path '" + entry +
				"' (what is written there runs later outside the jail, or is the kernel's own record)"}
		}
	}
	if c.role == roleRewriteTree || c.role == roleRewriteGoTree {
		exts, kind := pythonSources, "Python"
		if c.role == roleRewriteGoTree {
			exts, kind = goSources, "Go"
		}
		if entry, ok := g.holdsProtectedSources(rel, exts); ok {
			return &violation{evidence.ClassProtectedPath, "'" + p.head + "' would rewrite the " + kind + " files below " + what + ", among them those in protected path '" + entry +
				"'; name the directories to rewrite (for example src tests), or check without rewriting (--check, --diff)"}
		}
		return nil
	}
	if c.role == roleWriteDest && isDir(g.sandbox+"/"+rel) {
		return nil // an existing directory: the trees land under their own names, checked on their own
	}
	if c.role == roleWriteTree || c.role == roleWriteDest {
		entry, ok := g.holdsProtected(rel)
		if rel == "." {
			entry, ok = ".deponent", true // the sandbox root holds every anchored entry
		}
		if ok {
			return &violation{evidence.ClassProtectedPath, "'" + p.head + "' would write a whole tree at " + what + ", which holds (or may create) protected path '" + entry +
				"': the tree's entries could create or replace it; put the tree in a directory that holds no protected path (for example DIR/NAME), or copy the files one by one"}
		}
	}
	return nil
}

// maxSourceScan bounds the walk for Python sources under protected paths;
// a larger tree is treated as holding some.
const maxSourceScan = 10000

// The sources a formatter rewrites as it walks a directory.
var (
	pythonSources = map[string]bool{".py": true, ".pyi": true, ".ipynb": true}
	goSources     = map[string]bool{".go": true}
)

// holdsProtectedSources reports an existing anchored protected directory
// at or below rel that holds sources with one of the extensions, which a
// formatter walking rel would rewrite. The walk does not follow links.
func (g *Gate) holdsProtectedSources(rel string, exts map[string]bool) (string, bool) {
	for _, e := range g.anchored {
		if rel != "." && !hasProtectedPrefix(e, rel) {
			continue
		}
		seen := 0
		found := false
		_ = filepath.WalkDir(filepath.Join(g.sandbox, e), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			seen++
			if seen > maxSourceScan {
				found = true
				return fs.SkipAll
			}
			if !d.IsDir() && exts[path.Ext(d.Name())] {
				found = true
				return fs.SkipAll
			}
			return nil
		})
		if found {
			return e, true
		}
	}
	return "", false
}

// isDir reports whether p, already resolved inside the sandbox, is a
// directory now.
func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// pathAdvice suggests the fix for a path refused as outside the sandbox.
func pathAdvice(v string) string {
	switch {
	case strings.HasPrefix(v, "/"):
		return "; name files relative to the sandbox"
	case strings.HasPrefix(v, ".."):
		return "; the sandbox root is the top: name files below it"
	}
	return ""
}

// checkDelete checks a path a program removes (rm, or a moved source):
// the link itself is removed, not what it points to, unless the name ends
// in "/" (then the shell and the program follow it). The sandbox root,
// anything outside it, a protected path and a directory holding one are
// refused.
func (g *Gate) checkDelete(head, what, v, cwd string) *violation {
	full := joinCwd(cwd, v)
	dir, base := path.Split(full)
	var rel string
	var perr *pathError
	if base == "" || base == "." || base == ".." {
		rel, perr = resolveIn(g.sandbox, full)
	} else {
		if dir == "" {
			dir = "."
		}
		var d string
		d, perr = resolveIn(g.sandbox, dir)
		rel = base
		if d != "." {
			rel = d + "/" + base
		}
	}
	switch {
	case perr != nil:
		return &violation{evidence.ClassArgPathEscape, "'" + head + "' would remove " + what + ", which " + perr.detail() + "; only paths inside the sandbox can be removed"}
	case rel == ".":
		return &violation{evidence.ClassDestructive, "'" + head + "' would remove " + what + ", the sandbox root itself; name what to remove inside it"}
	}
	if entry, ok := g.protectedEntry(rel); ok {
		return &violation{evidence.ClassProtectedPath, "'" + head + "' would remove " + what + ", under protected path '" + entry + "'"}
	}
	if entry, ok := g.holdsProtected(rel); ok {
		return &violation{evidence.ClassProtectedPath, "'" + head + "' would remove " + what + ", which holds protected path '" + entry + "'"}
	}
	return nil
}

// holdsProtected reports a protected path below rel: an anchored entry, or
// a .git directly inside it. (Deeper nested repositories are not searched
// for; the jail keeps the top-level .git read-only.)
func (g *Gate) holdsProtected(rel string) (string, bool) {
	for _, e := range g.anchored {
		if hasProtectedPrefix(e, rel) {
			return e, true
		}
	}
	if hasProtectedPrefix(".git", rel) {
		return ".git", true
	}
	if exists(g.sandbox + "/" + rel + "/.git") {
		return rel + "/.git", true
	}
	return "", false
}

// checkUnknownArg checks an argument whose meaning the gate does not know
// (a script's argv, a project program's options) as a path the program may
// write: the whole word, the text after each "=", and for a short-option
// cluster every place a glued value could start.
func (g *Gate) checkUnknownArg(head, what, a, cwd string) *violation {
	if a == "-" || a == "--" || a == "" {
		return nil
	}
	if v := g.checkArgReading(head, what, a, cwd); v != nil {
		return v
	}
	if strings.Count(a, "=") > maxGluedReadings {
		return &violation{evidence.ClassTooComplex, what + " has more than 16 '=' signs; each value would have to be checked as a path"}
	}
	for i := strings.IndexByte(a, '='); i >= 0; {
		if val := a[i+1:]; val != "" {
			if v := g.checkArgReading(head, what, val, cwd); v != nil {
				return v
			}
		}
		next := strings.IndexByte(a[i+1:], '=')
		if next < 0 {
			break
		}
		i += 1 + next
	}
	if len(a) > 2 && a[0] == '-' && a[1] != '-' {
		end := 1
		for end < len(a) && isASCIIAlnum(a[end]) {
			end++
		}
		if end == len(a) {
			end--
		}
		if end > maxClusterReadings {
			return &violation{evidence.ClassTooComplex, "option cluster '" + shown(a) + "' is longer than 40 letters; put the option's value in its own word"}
		}
		for k := 2; k <= end; k++ {
			if v := g.checkArgReading(head, what, a[k:], cwd); v != nil {
				return v
			}
		}
	}
	return nil
}

func (g *Gate) checkArgReading(head, what, p, cwd string) *violation {
	rel, perr := resolveIn(g.sandbox, joinCwd(cwd, p))
	if perr != nil {
		if p != what {
			what += " (read as path '" + shown(p) + "')"
		}
		return &violation{evidence.ClassArgPathEscape, what + " " + perr.detail() + pathAdvice(p)}
	}
	if entry, ok := g.protectedEntry(rel); ok {
		return &violation{evidence.ClassProtectedPath, "'" + head + "' can write files, and " + what +
			" names protected path '" + entry + "' (what is written there runs later outside the jail)"}
	}
	return nil
}

func isASCIIAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// checkHead checks the program a simple command runs.
func (g *Gate) checkHead(w shWord) *violation {
	h := w.val
	switch {
	case w.glob != "":
		return &violation{evidence.ClassNotAllowlisted, "program name '" + shown(h) + "' contains glob characters; name the program literally"}
	case h == "":
		return &violation{evidence.ClassNotAllowlisted, "empty program name"}
	case strings.ContainsRune(h, '/'):
		if !g.allowExec[h] {
			return &violation{evidence.ClassNotAllowlisted, "program '" + shown(h) + "' is a path: only bare allowlisted names " +
				"(looked up on the trusted PATH, never in the sandbox) or exact allow_executables entries may run"}
		}
		if _, perr := resolveIn(g.sandbox, h); perr != nil {
			return &violation{evidence.ClassArgPathEscape, "program '" + shown(h) + "' " + perr.detail()}
		}
		return nil
	case refusedBuiltins[h]:
		return &violation{evidence.ClassShellConstruct, "'" + h + "' is a shell builtin or keyword that changes how the rest of the command is read; it is never allowed"}
	case !g.allow[h]:
		reason := "program '" + shown(h) + "' is not allowlisted"
		if g.allowExec["./"+h] {
			reason += "; run it as './" + h + "' (allow_executables)"
		} else {
			reason += " (the programs this policy allows: " + strings.Join(g.pol.AllowHeads, ", ") +
				"; the operator can add others with a model through extra_allow_heads)"
		}
		return &violation{evidence.ClassNotAllowlisted, reason}
	case programFor(h) == nil:
		// The policy parser refuses such heads; a hand-built Policy could
		// still name one.
		return &violation{evidence.ClassNotAllowlisted, "program '" + shown(h) + "' has no model in the gate's catalogue, so its options cannot be checked; it is refused"}
	}
	if exe, in := g.headInside[h]; in {
		return &violation{evidence.ClassNotAllowlisted, "program '" + h + "' resolves to " + exe + ", inside the sandbox; only programs from outside it may run by name"}
	}
	return nil
}

// render writes the canonical script: every word single-quoted, glob
// matches spelled out, prefixes and redirects in their fixed forms.
func render(s *shScript, plans []cmdPlan) (string, *violation) {
	var stack [512]byte
	b := stack[:0]
	for i := range plans {
		p := &plans[i]
		if i > 0 {
			b = appendOperator(b, s.ops[i-1])
		}
		for _, a := range p.c.assigns {
			b = append(b, a.name...)
			b = append(b, '=')
			b = appendShellQuoted(b, a.val)
			b = append(b, ' ')
		}
		b = appendShellQuoted(b, p.head)
		if p.isCd {
			b = append(b, ' ')
			b = appendShellQuoted(b, p.c.words[1].val)
		} else {
			for _, a := range p.args {
				b = append(b, ' ')
				b = appendShellQuoted(b, a)
			}
		}
		for _, r := range p.c.redirs {
			b = append(b, ' ')
			b = append(b, r.text...)
		}
		if len(b) > maxScriptBytes {
			return "", &violation{evidence.ClassTooComplex, "rendered command is larger than 1 MiB (glob matches included); narrow the globs"}
		}
	}
	return string(b), nil
}

// Prefix assignments: `NAME=value cmd` for a short list of variables that
// tune tools without changing how anything is found or run.

type assignKind uint8

const (
	assignWord      assignKind = iota // a short word: no absolute path, no ".."
	assignPathList                    // ':'-separated directories read from: each inside the sandbox
	assignWritePath                   // a file or directory written: inside, not protected
)

var assignableVars = map[string]assignKind{
	"PYTHONPATH": assignPathList, "MYPYPATH": assignPathList,
	"PYTHONDONTWRITEBYTECODE": assignWord, "PYTHONUNBUFFERED": assignWord, "PYTHONHASHSEED": assignWord,
	"PYTHONWARNINGS": assignWord, "PYTHONFAULTHANDLER": assignWord, "PYTHONUTF8": assignWord,
	"PYTHONIOENCODING": assignWord, "PYTHONDEVMODE": assignWord, "PYTHONTRACEMALLOC": assignWord,
	"DJANGO_SETTINGS_MODULE": assignWord, "COVERAGE_FILE": assignWritePath,
	"CI": assignWord, "NO_COLOR": assignWord, "FORCE_COLOR": assignWord, "CLICOLOR": assignWord,
	"COLUMNS": assignWord, "LINES": assignWord, "TERM": assignWord, "LANG": assignWord, "LC_ALL": assignWord,
	"LANGUAGE": assignWord, "TZ": assignWord,
	"CGO_ENABLED": assignWord, "GOOS": assignWord, "GOARCH": assignWord, "GOEXPERIMENT": assignWord,
	"GO111MODULE": assignWord, "GOCACHE": assignWritePath, "GOTMPDIR": assignWritePath,
	"NODE_ENV": assignWord, "RUST_BACKTRACE": assignWord,
}

func assignableNames() string {
	names := make([]string, 0, len(assignableVars))
	for n := range assignableVars {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// AssignableVariables lists the variables a command may set with a
// `NAME=value` prefix.
func AssignableVariables() []string {
	return strings.Split(assignableNames(), ", ")
}

func (g *Gate) checkAssign(p *cmdPlan, a shAssign) *violation {
	bad := func(why string) *violation {
		return &violation{evidence.ClassEnvAssignment, a.name + "='" + shown(a.val) + "' " + why}
	}
	if len(a.val) > 4096 {
		return bad("is longer than 4096 bytes")
	}
	switch assignableVars[a.name] {
	case assignWord:
		for i := 0; i < len(a.val); i++ {
			c := a.val[i]
			if !(isASCIIAlnum(c) || strings.IndexByte("._,:=+@%/-", c) >= 0) {
				return bad("may hold only letters, digits and . _ , : = + @ % / -")
			}
		}
		for _, part := range strings.FieldsFunc(a.val, func(r rune) bool { return r == ':' || r == '=' || r == ',' }) {
			if strings.HasPrefix(part, "/") || hasDotDot(part) {
				return bad("names a path outside the sandbox; values are words, not absolute paths or '..'")
			}
		}
	case assignPathList, assignWritePath:
		parts := []string{a.val}
		if assignableVars[a.name] == assignPathList {
			parts = strings.Split(a.val, ":")
		}
		for _, part := range parts {
			if part == "" {
				continue // an empty entry is the working directory
			}
			for _, cwd := range p.cwds {
				rel, perr := resolveIn(g.sandbox, joinCwd(cwd, part))
				if perr != nil {
					return bad("entry '" + shown(part) + "' " + perr.detail() + "; it must name a directory inside the sandbox")
				}
				if assignableVars[a.name] == assignWritePath {
					if entry, ok := g.protectedEntry(rel); ok {
						return bad("is under protected path '" + entry + "'")
					}
				}
			}
		}
	}
	return nil
}

package gate

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/deponent-dev/deponent-action/pkg/evidence"
)

// defaultProtected are refused for writes in every sandbox, besides ".git"
// at any depth: the kernel's bookkeeping, and CI definitions, which run
// later with the repository's secrets if the agent's changes are pushed.
var defaultProtected = []string{".deponent", ".github/workflows", ".github/actions"}

// Decision is the gate's answer for one tool call.
type Decision struct {
	Verdict    evidence.Verdict // evidence.VerdictAllow or evidence.VerdictBlock
	BlastClass evidence.Class   // what was allowed, or why it was refused
	Reason     string           // what was refused and, where useful, the fix
	// Set on ALLOW only:
	Script string // run_cmd: the canonical rendering to run under `/bin/sh -c`; never the raw string
	Path   string // read_file/write_file: resolved path relative to the sandbox, forward slashes, safe under an os.Root of the sandbox
}

// Allowed reports whether the verdict is ALLOW.
func (d Decision) Allowed() bool { return d.Verdict == evidence.VerdictAllow }

func block(class evidence.Class, reason string) Decision {
	return Decision{Verdict: evidence.VerdictBlock, BlastClass: class, Reason: reason}
}

// Gate decides tool calls for one sandbox under one policy. It is immutable
// after NewGate and safe for concurrent use.
type Gate struct {
	sandbox     string
	pol         *Policy
	allow       map[string]bool
	allowExec   map[string]bool
	deny        []denyPattern
	anchored    []string // protected paths other than ".git": ".deponent", extras, allow_executables
	trustedPATH string
	headInside  map[string]string // allowlisted heads whose PATH executable resolves into the sandbox
	maxWrite    int64
}

type denyPattern struct {
	phrase    []byte
	category  string
	needLeft  bool // a word boundary is required before the match
	needRight bool // a word boundary is required after the match
}

// PolicyError is a policy that cannot govern: an invalid field, or a
// trusted_path that cannot be used with this sandbox. Callers tell it apart
// from a bad sandbox with errors.As.
type PolicyError struct{ Err error }

func (e *PolicyError) Error() string { return e.Err.Error() }
func (e *PolicyError) Unwrap() error { return e.Err }

// NewGate builds a gate for the sandbox directory (which must exist; its
// symlink-resolved absolute path is used) under pol (nil: DefaultPolicy).
// An error caused by the policy is a *PolicyError; any other error is
// about the sandbox.
func NewGate(sandbox string, pol *Policy) (*Gate, error) {
	if pol == nil {
		pol = DefaultPolicy()
	} else {
		pol = pol.clone()
		if err := pol.normalize(); err != nil {
			return nil, &PolicyError{err}
		}
	}
	root, err := resolveSandbox(sandbox)
	if err != nil {
		return nil, err
	}
	g := &Gate{
		sandbox:    root,
		pol:        pol,
		allow:      make(map[string]bool, len(pol.AllowHeads)),
		allowExec:  make(map[string]bool, len(pol.AllowExecutables)),
		headInside: map[string]string{},
		maxWrite:   int64(pol.ResourceLimits.FileSizeMB) << 20,
	}
	for _, h := range pol.AllowHeads {
		g.allow[h] = true
	}
	g.anchored = append(g.anchored, defaultProtected...)
	g.anchored = append(g.anchored, pol.ExtraProtectedPaths...)
	for _, e := range pol.AllowExecutables {
		g.allowExec[e] = true
		g.anchored = append(g.anchored, strings.TrimPrefix(e, "./"))
	}
	g.deny = compileDeny(pol.Deny)

	dirs, err := trustedDirs(root, pol.TrustedPath)
	if err != nil {
		return nil, &PolicyError{err}
	}
	if len(dirs) == 0 {
		// An empty PATH lets some shells fall back to a built-in search
		// path; refuse rather than guess.
		return nil, &PolicyError{errors.New("gate: no usable directory for the trusted PATH (set trusted_path in the policy)")}
	}
	g.trustedPATH = strings.Join(dirs, ":")
	for _, h := range pol.AllowHeads {
		if exe, ok := lookPathIn(dirs, h); ok {
			if _, inside := cutUnderRoot(exe, root); inside {
				g.headInside[h] = exe
			}
		}
	}
	return g, nil
}

func resolveSandbox(sandbox string) (string, error) {
	if sandbox == "" {
		return "", errors.New("gate: sandbox path is empty")
	}
	abs, err := filepath.Abs(sandbox)
	if err != nil {
		return "", fmt.Errorf("gate: sandbox %s: %w", sandbox, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("gate: sandbox %s: %w", sandbox, err)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", fmt.Errorf("gate: sandbox %s: %w", sandbox, err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("gate: sandbox %s is not a directory", sandbox)
	}
	if real == "/" || strings.ContainsRune(real, ':') {
		return "", fmt.Errorf("gate: sandbox %s cannot be the filesystem root or contain ':'", sandbox)
	}
	return real, nil
}

// trustedDirs builds the PATH commands run with: the policy's list, or the
// runner's PATH, keeping only absolute, existing directories outside the
// sandbox. A policy that names an in-sandbox directory is an error; the
// runner's PATH is filtered silently.
func trustedDirs(root string, fromPolicy []string) ([]string, error) {
	list := fromPolicy
	if list == nil {
		list = filepath.SplitList(os.Getenv("PATH"))
	}
	seen := map[string]bool{}
	var out []string
	for _, d := range list {
		if d == "" || !filepath.IsAbs(d) || strings.ContainsRune(d, ':') {
			continue
		}
		real, err := filepath.EvalSymlinks(d)
		if err != nil {
			continue
		}
		if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
			continue
		}
		if _, inside := cutUnderRoot(real, root); inside {
			if fromPolicy != nil {
				return nil, fmt.Errorf("gate: trusted_path entry %s is inside the sandbox", d)
			}
			continue
		}
		if !seen[real] {
			seen[real] = true
			out = append(out, real)
		}
	}
	return out, nil
}

// lookPathIn finds name the way sh would on PATH=dirs and returns the
// executable's symlink-resolved path.
func lookPathIn(dirs []string, name string) (string, bool) {
	for _, d := range dirs {
		p := d + "/" + name
		fi, err := os.Stat(p)
		if err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			continue
		}
		if real, err := filepath.EvalSymlinks(p); err == nil {
			return real, true
		}
	}
	return "", false
}

// Sandbox returns the resolved absolute sandbox root.
func (g *Gate) Sandbox() string { return g.sandbox }

// Policy returns a copy of the gate's effective policy.
func (g *Gate) Policy() *Policy { return g.pol.clone() }

// TrustedPATH returns the PATH commands must run with. It never contains
// the sandbox, relative or empty entries.
func (g *Gate) TrustedPATH() string { return g.trustedPATH }

// ProtectedPaths returns absolute paths inside the sandbox that the jail
// must keep read-only: .git, .deponent, the policy's extra_protected_paths
// and allow_executables. They may not exist yet. (The gate also refuses
// writes to nested .git directories, which a jail cannot enumerate ahead.)
func (g *Gate) ProtectedPaths() []string {
	out := make([]string, 0, len(g.anchored)+1)
	out = append(out, g.sandbox+"/.git")
	for _, a := range g.anchored {
		out = append(out, g.sandbox+"/"+a)
	}
	sort.Strings(out)
	return out
}

// toolParams lists each tool's parameters; any other key is refused.
var toolParams = map[string][]string{
	"read_file":  {"path"},
	"write_file": {"path", "content"},
	"run_cmd":    {"cmd"},
}

// Decide answers one tool call. params comes from JSON, so values may be of
// any JSON type; only the types the tool expects are accepted. A panic
// inside the gate (a bug) is a BLOCK of class gate-failure, never a crash.
func (g *Gate) Decide(tool string, params map[string]any) (d Decision) {
	defer func() {
		if r := recover(); r != nil {
			d = block(evidence.ClassGateFailure, fmt.Sprintf("the gate failed while deciding (fail closed): %v", r))
		}
	}()
	want, known := toolParams[tool]
	if !known {
		return block(evidence.ClassUnknownTool, "no policy for tool '"+shown(tool)+"' (deny-by-default)")
	}
	if d, ok := checkParamKeys(tool, want, params); !ok {
		return d
	}
	switch tool {
	case "run_cmd":
		cmd, ok := params["cmd"].(string)
		if !ok {
			return block(evidence.ClassEmptyCommand, "run_cmd needs 'cmd', a non-empty string; got "+jsonTypeName(params["cmd"]))
		}
		return g.decideRunCmd(cmd)
	case "read_file":
		p, d, ok := pathParam(tool, params)
		if !ok {
			return d
		}
		return g.decideFile(p, false)
	default: // write_file
		p, d, ok := pathParam(tool, params)
		if !ok {
			return d
		}
		content, isStr := params["content"].(string)
		if !isStr {
			return block(evidence.ClassMalformed, "write_file needs 'content', a string; got "+jsonTypeName(params["content"]))
		}
		if int64(len(content)) > g.maxWrite {
			return block(evidence.ClassMalformed, fmt.Sprintf("write_file content is %d bytes, over the policy's file_size_mb limit (%d MiB)",
				len(content), g.pol.ResourceLimits.FileSizeMB))
		}
		return g.decideFile(p, true)
	}
}

func checkParamKeys(tool string, want []string, params map[string]any) (Decision, bool) {
	var extra []string
	for k := range params {
		if !containsKey(want, k) {
			extra = append(extra, k)
		}
	}
	if len(extra) == 0 {
		return Decision{}, true
	}
	sort.Strings(extra)
	return block(evidence.ClassMalformed, fmt.Sprintf("%s does not take parameter '%s' (it takes: %s); unknown parameters are refused",
		tool, shown(extra[0]), strings.Join(want, ", "))), false
}

func containsKey(list []string, k string) bool {
	for _, x := range list {
		if x == k {
			return true
		}
	}
	return false
}

func pathParam(tool string, params map[string]any) (string, Decision, bool) {
	v, present := params["path"]
	p, isStr := v.(string)
	switch {
	case !present:
		return "", block(evidence.ClassMalformed, tool+" needs 'path', a string relative to the sandbox; it is missing"), false
	case !isStr:
		return "", block(evidence.ClassMalformed, tool+" needs 'path', a string relative to the sandbox; got "+jsonTypeName(v)), false
	case p == "":
		return "", block(evidence.ClassMalformed, tool+" needs 'path', a non-empty string"), false
	case len(p) > 4096:
		return "", block(evidence.ClassMalformed, tool+": 'path' is longer than 4096 bytes"), false
	case !utf8.ValidString(p):
		return "", block(evidence.ClassMalformed, tool+": 'path' is not valid UTF-8"), false
	}
	return p, Decision{}, true
}

func jsonTypeName(v any) string {
	switch v.(type) {
	case nil:
		return "nothing (missing or null)"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case float64, float32, int, int64, int32, uint, uint64, interface{ String() string }:
		return "a number"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("a %T", v)
}

// decideFile checks a read_file or write_file path.
func (g *Gate) decideFile(p string, write bool) Decision {
	escape, allowClass, verb := evidence.ClassOutOfSandboxRead, evidence.ClassLocalRead, "read"
	if write {
		escape, allowClass, verb = evidence.ClassOutOfSandboxWrite, evidence.ClassLocalWrite, "write"
	}
	if strings.IndexByte(p, 0) < 0 {
		if r, hidden := firstDeceptiveRune(p); hidden {
			return block(evidence.ClassDeceptiveChar, "path contains "+describeRune(r)+
				", a control, invisible, bidirectional or look-alike character: the name shown would not be the name used")
		}
	}
	if strings.HasPrefix(p, "~") || strings.Contains(p, "$") {
		// Nothing expands these, but whoever wrote them meant a home
		// directory or a variable, which is outside the sandbox by intent.
		// Refuse the ambiguity rather than create a directory named "~".
		return block(escape, "path escapes sandbox: '"+shown(p)+"' (a home or variable reference; file tools expand nothing: name the file relative to the sandbox)")
	}
	rel, perr := resolveIn(g.sandbox, p)
	if perr != nil {
		return block(escape, "path escapes sandbox: '"+shown(p)+"' ("+perr.detail()+")")
	}
	if write {
		if rel == "." || strings.HasSuffix(p, "/") {
			return block(evidence.ClassMalformed, "write_file path '"+shown(p)+"' names a directory, not a file")
		}
		if entry, ok := g.protectedEntry(rel); ok {
			return block(evidence.ClassProtectedPath, "write to protected path '"+shown(rel)+"' refused: '"+entry+
				"' is protected (what is written there runs later outside the jail, or is the kernel's own record)")
		}
	}
	return Decision{Verdict: evidence.VerdictAllow, BlastClass: allowClass, Reason: verb + " inside sandbox", Path: rel}
}

func (g *Gate) protectedEntry(rel string) (string, bool) {
	return matchProtected(g.anchored, rel)
}

// run_cmd.

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

// checkScript applies policy to a parsed command line and renders it. The
// checks run in phases over every command, so a chain is refused for its
// most telling problem (a denied phrase before an unknown program before a
// path) whichever command carries it.
func (g *Gate) checkScript(s *shScript) (string, *violation) {
	if len(s.cmds) == 0 {
		return "", &violation{evidence.ClassEmptyCommand, "command has only comments or blank lines"}
	}
	for _, c := range s.cmds {
		if v := g.denyHit(c.words); v != nil {
			return "", v
		}
	}
	roles := make([][]argRole, len(s.cmds))
	for i, c := range s.cmds {
		if v := g.checkHead(c.words[0]); v != nil {
			return "", v
		}
		r, v := programModel(c.words[0].val, c.words[1:])
		if v != nil {
			return "", v
		}
		roles[i] = r
	}
	var stack [512]byte
	b := stack[:0]
	budget := maxGlobMatches
	for i, c := range s.cmds {
		if i > 0 {
			b = appendOperator(b, s.ops[i-1])
		}
		head := c.words[0].val
		b = appendShellQuoted(b, head)
		writer := !readOnlyPrograms[head]
		for j, w := range c.words[1:] {
			role := roleOperand
			if roles[i] != nil {
				role = roles[i][j]
			}
			var v *violation
			b, budget, v = g.appendArg(b, head, w, role, writer, budget)
			if v != nil {
				return "", v
			}
		}
		if len(b) > maxScriptBytes {
			return "", &violation{evidence.ClassTooComplex, "rendered command is larger than 1 MiB (glob matches included); narrow the globs"}
		}
	}
	return string(b), nil
}

// appendArg checks one argument and appends its rendering: the word, or the
// sorted glob matches, each single-quoted.
func (g *Gate) appendArg(b []byte, head string, w shWord, role argRole, writer bool, budget int) ([]byte, int, *violation) {
	if w.glob != "" {
		if strings.HasPrefix(w.val, "/") {
			return b, budget, &violation{evidence.ClassArgPathEscape, "argument '" + shown(w.val) +
				"' is an absolute glob; globs are expanded only relative to the sandbox"}
		}
		matches, perr, ok := expandGlob(g.sandbox, w.glob, budget)
		if !ok {
			return b, budget, &violation{evidence.ClassTooComplex, fmt.Sprintf("glob '%s' matches more than %d paths; narrow it", shown(w.val), maxGlobMatches)}
		}
		if perr != nil {
			return b, budget, &violation{evidence.ClassArgPathEscape, "glob '" + shown(w.val) + "' " + perr.detail()}
		}
		if len(matches) > 0 {
			budget -= len(matches)
			for _, m := range matches {
				if m[0] == '-' {
					// A file named "--compress-program=sh" would become an
					// option after expansion, past the option checks above.
					return b, budget, &violation{evidence.ClassUnsafeOption, "glob '" + shown(w.val) + "' matches '" + shown(m) +
						"', which the program would read as an option; use ./" + shown(w.val) + " or name the files"}
				}
				if v := g.checkArgWord(head, m, writer); v != nil {
					return b, budget, v
				}
				b = append(b, ' ')
				b = appendShellQuoted(b, m)
			}
			return b, budget, nil
		}
		// No match: sh passes the word through literally, and so do we.
	}
	if role == roleOperand {
		if v := g.checkArgWord(head, w.val, writer); v != nil {
			return b, budget, v
		}
	}
	b = append(b, ' ')
	return appendShellQuoted(b, w.val), budget, nil
}

// checkArgWord checks every reading of an argument that could name a file:
// the whole word, the text after each "=", and for a short-option cluster
// ("-xo/tmp/f") every place its glued value could start.
func (g *Gate) checkArgWord(head, a string, writer bool) *violation {
	if a == "-" || a == "--" || a == "" {
		return nil
	}
	if v := g.checkPathWord(head, a, a, writer); v != nil {
		return v
	}
	if strings.Count(a, "=") > maxGluedReadings {
		return &violation{evidence.ClassTooComplex, "argument '" + shown(a) + "' has more than 16 '=' signs; each value would have to be checked as a path"}
	}
	for i := strings.IndexByte(a, '='); i >= 0; {
		if val := a[i+1:]; val != "" {
			if v := g.checkPathWord(head, a, val, writer); v != nil {
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
			if v := g.checkPathWord(head, a, a[k:], writer); v != nil {
				return v
			}
		}
	}
	return nil
}

// checkPathWord checks that p (a reading of argument arg) stays inside the
// sandbox and, for programs that can write, avoids protected paths.
func (g *Gate) checkPathWord(head, arg, p string, writer bool) *violation {
	rel, perr := resolveIn(g.sandbox, p)
	if perr != nil {
		what := "argument '" + shown(arg) + "'"
		if p != arg {
			what += " (read as path '" + shown(p) + "')"
		}
		return &violation{evidence.ClassArgPathEscape, what + " " + perr.detail()}
	}
	if writer {
		if entry, ok := g.protectedEntry(rel); ok {
			return &violation{evidence.ClassProtectedPath, "'" + head + "' can write files, and argument '" + shown(arg) +
				"' names protected path '" + entry + "' (what is written there runs later outside the jail)"}
		}
	}
	return nil
}

// Caps on how many extra readings of one argument are checked ("=" values,
// option-cluster suffixes), keeping the work per word linear in its length.
const (
	maxGluedReadings   = 16
	maxClusterReadings = 40
)

func isASCIIAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// readOnlyPrograms never write files, so they may name protected paths
// (`cat .git/config`). sort (-o) and uniq (second operand) can write.
var readOnlyPrograms = map[string]bool{
	"cat": true, "head": true, "tail": true, "grep": true, "egrep": true, "fgrep": true,
	"wc": true, "ls": true, "diff": true, "echo": true, "pwd": true, "true": true,
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
			reason += "; add it to extra_allow_heads in the policy file if it should run"
		}
		return &violation{evidence.ClassNotAllowlisted, reason}
	}
	if exe, in := g.headInside[h]; in {
		return &violation{evidence.ClassNotAllowlisted, "program '" + h + "' resolves to " + exe + ", inside the sandbox; only programs from outside it may run by name"}
	}
	return nil
}

// Denylist.

// compileDeny prepares denylist phrases. A boundary is required before
// every match and, when the phrase ends in a word character, after it:
// "curl" matches "curl x" and "os.system('curl')" but not "curling.txt";
// "/etc/" matches "/etc/passwd" but not "src/etc/x". A phrase ending in a
// flag ("rm -r") also matches longer clusters ("rm -rf").
func compileDeny(phrases []string) []denyPattern {
	cat := map[string]string{}
	for _, r := range defaultDenyRules {
		cat[r.phrase] = r.category
	}
	out := make([]denyPattern, 0, len(phrases))
	for _, p := range phrases {
		c := cat[p]
		if c == "" {
			c = "policy"
		}
		lastTok := p[strings.LastIndexByte(p, ' ')+1:]
		out = append(out, denyPattern{
			phrase:    []byte(p),
			category:  c,
			needLeft:  true,
			needRight: isDenyWordByte(p[len(p)-1]) && !strings.HasPrefix(lastTok, "-"),
		})
	}
	return out
}

// isDenyWordByte: letters, digits, '_', '-', '.' and non-ASCII bytes are
// inside words; anything else (space, '/', quotes, '=', '(' …) separates.
func isDenyWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '_' || c == '-' || c == '.' || c >= utf8.RuneSelf
}

// denyHit matches the denylist against one command's words, lower-cased
// (ASCII) and joined by single spaces, with whitespace inside words
// collapsed, so that quoting and spacing cannot split a phrase.
func (g *Gate) denyHit(words []shWord) *violation {
	var stack [512]byte
	text := stack[:0]
	for i, w := range words {
		if i > 0 {
			text = append(text, ' ')
		}
		for j := 0; j < len(w.val); j++ {
			c := w.val[j]
			switch {
			case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f':
				if len(text) > 0 && text[len(text)-1] == ' ' {
					continue
				}
				c = ' '
			case c >= 'A' && c <= 'Z':
				c += 'a' - 'A'
			}
			text = append(text, c)
		}
	}
	for i := range g.deny {
		d := &g.deny[i]
		for off := 0; off < len(text); {
			k := bytes.Index(text[off:], d.phrase)
			if k < 0 {
				break
			}
			start, end := off+k, off+k+len(d.phrase)
			okLeft := !d.needLeft || start == 0 || !isDenyWordByte(text[start-1])
			okRight := !d.needRight || end == len(text) || !isDenyWordByte(text[end])
			if okLeft && okRight {
				return &violation{evidence.ClassDestructive, "command matches denylist entry '" + string(d.phrase) + "' (" + d.category + ")"}
			}
			off = start + 1
		}
	}
	return nil
}

// Program model: which arguments can name files, and which options make an
// allowlisted program run something else.

type argRole uint8

const (
	roleOperand argRole = iota // may name a file: checked
	roleText                   // never opened as a file by this program
)

// programModel returns a role per argument (nil: every argument may name a
// file) or a refusal for an unsafe option. Only programs whose argument
// syntax is modelled get text roles; for all others every word is checked.
func programModel(head string, args []shWord) ([]argRole, *violation) {
	if v := unsafeOptions(head, args); v != nil {
		return nil, v
	}
	switch {
	case head == "echo":
		roles := make([]argRole, len(args))
		for i := range roles {
			roles[i] = roleText
		}
		return roles, nil
	case head == "grep" || head == "egrep" || head == "fgrep":
		return grepRoles(args)
	case isPythonName(head):
		return pythonRoles(args)
	}
	return nil, nil
}

func isPythonName(h string) bool {
	rest, ok := strings.CutPrefix(h, "python")
	if !ok {
		return false
	}
	for i := 0; i < len(rest); i++ {
		if !(rest[i] >= '0' && rest[i] <= '9' || rest[i] == '.') {
			return false
		}
	}
	return true
}

// pythonRoles: `-c CODE` is program text, not a path; `-m MOD` names a
// module (package installers are refused); the words after either, or
// after the script path, are the program's own arguments and are checked.
func pythonRoles(args []shWord) ([]argRole, *violation) {
	roles := make([]argRole, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i].val
		if a == "-" || a == "--" || !strings.HasPrefix(a, "-") {
			return roles, nil // script (or stdin) and its arguments: checked
		}
		if strings.HasPrefix(a, "--") {
			if a == "--check-hash-based-pycs" {
				i++
			}
			continue
		}
		for j := 1; j < len(a); j++ {
			switch a[j] {
			case 'c', 'm':
				val, idx := a[j+1:], i
				if val == "" && i+1 < len(args) {
					idx = i + 1
					val = args[idx].val
				}
				if a[j] == 'c' {
					roles[idx] = roleText
				} else if v := checkPythonModule(val); v != nil {
					return nil, v
				} else {
					roles[idx] = roleText
				}
				return roles, nil
			case 'W', 'X':
				if j+1 == len(a) {
					i++ // the value is the next word (checked)
				}
				j = len(a)
			}
		}
	}
	return roles, nil
}

// checkPythonModule refuses package installers run as modules
// (`python3 -m pip install`, `-mpip`, `-m ensurepip`).
func checkPythonModule(mod string) *violation {
	top := strings.ToLower(mod)
	if i := strings.IndexByte(top, '.'); i >= 0 {
		top = top[:i]
	}
	switch top {
	case "pip", "pip3", "ensurepip", "easy_install", "pipx", "uv", "poetry", "conda":
		return &violation{evidence.ClassDestructive, "python -m " + shown(mod) + " installs packages (package install); dependencies must come from the environment, not the agent"}
	}
	return nil
}

// grepRoles marks grep's pattern as text, so that `grep -rn "/api/" src`
// is not read as an absolute path. It is careful about where the pattern
// is: an -e/-f anywhere (GNU grep permutes options) means there is no
// positional pattern; options whose argument syntax differs between GNU and
// BSD grep (-C, -X, long options it does not know) make it treat every word
// as a possible file; and text roles are only given before the first
// operand, where every grep agrees on what a word is.
func grepRoles(args []shWord) ([]argRole, *violation) {
	roles := make([]argRole, len(args))
	explicit, strict, seenOperand, afterDD := false, false, false, false
	pattern := -1
	for i := 0; i < len(args); i++ {
		a := args[i].val
		switch {
		case afterDD || a == "-" || !strings.HasPrefix(a, "-"):
			if pattern < 0 && !seenOperand {
				pattern = i
			}
			seenOperand = true
		case a == "--":
			afterDD = true
		case strings.HasPrefix(a, "--"):
			name, _, hasEq := strings.Cut(a, "=")
			switch {
			case name == "--regexp":
				explicit = true
				if !hasEq && i+1 < len(args) {
					i++
					if !seenOperand {
						roles[i] = roleText
					}
				} else if hasEq && !seenOperand {
					roles[i] = roleText
				}
			case name == "--file":
				explicit = true
				if !hasEq {
					i++
				}
			case name == "--dereference-recursive":
				return nil, &violation{evidence.ClassUnsafeOption, "grep " + name + " follows symlinks that may point outside the sandbox; use -r"}
			case grepLongNoValue[name]:
			case grepLongValue[name]:
				if !hasEq {
					i++
				}
			default:
				if !hasEq {
					strict = true
				}
			}
		default:
			for j := 1; j < len(a); j++ {
				c := a[j]
				switch c {
				case 'R', 'S':
					return nil, &violation{evidence.ClassUnsafeOption, "grep -" + string(c) + " follows symlinks that may point outside the sandbox; use -r"}
				case 'C', 'X':
					if j+1 == len(a) {
						strict = true
					}
					j = len(a)
				case 'e', 'f', 'A', 'B', 'D', 'd', 'm':
					if c == 'e' || c == 'f' {
						explicit = true
					}
					if j+1 == len(a) {
						if i+1 < len(args) {
							i++
							if c == 'e' && !seenOperand {
								roles[i] = roleText
							}
						}
					} else if c == 'e' && !seenOperand {
						roles[i] = roleText
					}
					j = len(a)
				}
			}
		}
	}
	if pattern >= 0 && !explicit && !strict {
		roles[pattern] = roleText
	}
	return roles, nil
}

var grepLongNoValue = wordSet(`--recursive --line-number --ignore-case --no-ignore-case --count
	--files-with-matches --files-without-match --invert-match --word-regexp --line-regexp
	--only-matching --quiet --silent --no-messages --with-filename --no-filename --extended-regexp
	--fixed-strings --basic-regexp --perl-regexp --color --colour --null --null-data --text
	--byte-offset --initial-tab --line-buffered --help --version`)

var grepLongValue = wordSet(`--max-count --after-context --before-context --label --include --exclude
	--exclude-dir --exclude-from --binary-files --devices --directories --group-separator`)

// unsafeOptions refuses options that make an allowlisted program run
// another program, install packages, or read a list of paths the gate
// cannot see. Long options may be abbreviated (getopt_long and argparse
// accept unique prefixes), so any prefix of four or more characters counts.
func unsafeOptions(head string, args []shWord) *violation {
	long, exact := unsafeLong[head], unsafeExact[head]
	if long == nil && exact == nil && head != "tar" {
		return nil
	}
	for i, w := range args {
		a := w.val
		if a == "--" {
			break
		}
		name, _, _ := strings.Cut(a, "=")
		for _, opt := range exact {
			if a == opt {
				return unsafeOptionViolation(head, a)
			}
		}
		if strings.HasPrefix(name, "--") && len(name) >= 4 {
			for _, opt := range long {
				if strings.HasPrefix(opt, name) {
					return unsafeOptionViolation(head, opt)
				}
			}
		}
		// tar -I/-F (compress program, info script), also in clusters and
		// in the old dashless first argument ("tar xIf prog a.tar").
		if head == "tar" && ((strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--")) || i == 0) &&
			strings.ContainsAny(a, "IF") {
			return unsafeOptionViolation(head, "-I/-F")
		}
	}
	return nil
}

func unsafeOptionViolation(head, opt string) *violation {
	return &violation{evidence.ClassUnsafeOption, head + " " + opt + " would run another program or read paths the gate cannot check; it is not allowed"}
}

var unsafeLong = map[string][]string{
	"sort": {"--compress-program", "--files0-from"},
	"wc":   {"--files0-from"},
	"mypy": {"--python-executable", "--install-types"},
	"tar": {"--to-command", "--use-compress-program", "--checkpoint-action", "--rsh-command",
		"--rmt-command", "--info-script", "--new-volume-script"},
	"zip": {"--unzip-command"},
	"git": {"--exec-path", "--config-env"},
	"du":  {"--files0-from"},
}

var unsafeExact = map[string][]string{
	"find": {"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"},
	"zip":  {"-TT"},
	"git":  {"-c"},
}

// shown makes a string safe to embed in a reason: control and invisible
// characters are escaped, very long strings shortened.
func shown(s string) string {
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	if _, hidden := firstDeceptiveRune(s); !hidden && strings.IndexByte(s, 0) < 0 && utf8.ValidString(s) {
		return s
	}
	q := strconv.QuoteToASCII(s)
	return q[1 : len(q)-1]
}

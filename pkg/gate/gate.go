package gate

import (
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
	denyIx      *denyIndex
	anchored    []string // protected paths other than ".git": ".deponent", extras, allow_executables
	trustedPATH string
	headInside  map[string]string // allowlisted heads whose PATH executable resolves into the sandbox
	maxWrite    int64
	pyModules   map[string]bool // python_modules: what `python -m` may run
	gitWrites   map[string]bool // allow_git_writes: the git subcommands that may write .git
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
	g.pyModules = make(map[string]bool, len(pol.PythonModules))
	for _, m := range pol.PythonModules {
		g.pyModules[m] = true
	}
	g.gitWrites = make(map[string]bool, len(pol.GitWrites))
	for _, w := range pol.GitWrites {
		g.gitWrites[w] = true
	}
	g.anchored = append(g.anchored, defaultProtected...)
	g.anchored = append(g.anchored, pol.ExtraProtectedPaths...)
	for _, e := range pol.AllowExecutables {
		g.allowExec[e] = true
		g.anchored = append(g.anchored, strings.TrimPrefix(e, "./"))
	}
	g.deny = compileDeny(pol.Deny)
	g.denyIx = buildDenyIndex(g.deny)

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

// The tools the gate decides.
const (
	ToolRunCmd    = evidence.ToolRunCmd    // {cmd}: a command line, run jailed
	ToolReadFile  = evidence.ToolReadFile  // {path}: read one file
	ToolWriteFile = evidence.ToolWriteFile // {path, content}: create or replace one file
	ToolEditFile  = evidence.ToolEditFile  // {path, old, new}: replace the one occurrence of old with new in one file
	ToolListDir   = evidence.ToolListDir   // {path}: list one directory
)

// toolParams lists each tool's parameters; any other key is refused.
var toolParams = map[string][]string{
	ToolReadFile:  {"path"},
	ToolWriteFile: {"path", "content"},
	ToolEditFile:  {"path", "old", "new"},
	ToolListDir:   {"path"},
	ToolRunCmd:    {"cmd"},
}

// Tools lists the tools the gate decides, sorted.
func Tools() []string {
	out := make([]string, 0, len(toolParams))
	for t := range toolParams {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// ToolParams lists a tool's parameters (nil for an unknown tool).
func ToolParams(tool string) []string {
	return append([]string(nil), toolParams[tool]...)
}

// Decide answers one tool call. params comes from JSON, so values may be of
// any JSON type; only the types the tool expects are accepted. A panic
// inside the gate (a bug) is a BLOCK of class gate-failure, never a crash.
//
// On ALLOW, read_file, write_file, edit_file and list_dir carry the
// resolved sandbox-relative Path; run_cmd carries the Script to run.
// write_file and edit_file follow the same path rules (inside the
// sandbox, not protected); edit_file's old must be a non-empty string and
// new a string, each within the policy's file_size_mb; the executor, not
// the gate, checks that old occurs exactly once. list_dir follows
// read_file's rules and may name the sandbox root (".").
func (g *Gate) Decide(tool string, params map[string]any) (d Decision) {
	defer func() {
		if r := recover(); r != nil {
			d = block(evidence.ClassGateFailure, fmt.Sprintf("the gate failed while deciding (fail closed): %v", r))
		}
	}()
	want, known := toolParams[tool]
	if !known {
		return block(evidence.ClassUnknownTool, "no policy for tool '"+shown(tool)+"' (deny-by-default); the tools are "+strings.Join(Tools(), ", "))
	}
	if d, ok := checkParamKeys(tool, want, params); !ok {
		return d
	}
	if tool == ToolRunCmd {
		cmd, ok := params["cmd"].(string)
		if !ok {
			return block(evidence.ClassEmptyCommand, "run_cmd needs 'cmd', a non-empty string; got "+jsonTypeName(params["cmd"]))
		}
		return g.decideRunCmd(cmd)
	}
	p, d, ok := pathParam(tool, params)
	if !ok {
		return d
	}
	switch tool {
	case ToolReadFile:
		return g.decideFile(p, fileRead)
	case ToolListDir:
		return g.decideFile(p, fileList)
	case ToolWriteFile:
		content, isStr := params["content"].(string)
		if !isStr {
			return block(evidence.ClassMalformed, "write_file needs 'content', a string; got "+jsonTypeName(params["content"]))
		}
		if d, ok := g.sizeCap(tool, "content", content); !ok {
			return d
		}
		return g.decideFile(p, fileWrite)
	default: // edit_file
		old, isStr := params["old"].(string)
		switch {
		case !isStr:
			return block(evidence.ClassMalformed, "edit_file needs 'old', the exact text to replace (a non-empty string); got "+jsonTypeName(params["old"]))
		case old == "":
			return block(evidence.ClassMalformed, "edit_file needs 'old', the exact text to replace; it is empty (to create or overwrite a whole file, use write_file)")
		}
		nw, isStr := params["new"].(string)
		if !isStr {
			return block(evidence.ClassMalformed, "edit_file needs 'new', the replacement text (a string, possibly empty); got "+jsonTypeName(params["new"]))
		}
		for _, f := range [2][2]string{{"old", old}, {"new", nw}} {
			if d, ok := g.sizeCap(tool, f[0], f[1]); !ok {
				return d
			}
		}
		return g.decideFile(p, fileEdit)
	}
}

func (g *Gate) sizeCap(tool, key, v string) (Decision, bool) {
	if int64(len(v)) > g.maxWrite {
		return block(evidence.ClassMalformed, fmt.Sprintf("%s '%s' is %d bytes, over the policy's file_size_mb limit (%d MiB)",
			tool, key, len(v), g.pol.ResourceLimits.FileSizeMB)), false
	}
	return Decision{}, true
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

type fileOp uint8

const (
	fileRead fileOp = iota
	fileList
	fileWrite
	fileEdit
)

// decideFile checks the path of a file tool.
func (g *Gate) decideFile(p string, op fileOp) Decision {
	write := op == fileWrite || op == fileEdit
	escape, allowClass := evidence.ClassOutOfSandboxRead, evidence.ClassLocalRead
	if write {
		escape, allowClass = evidence.ClassOutOfSandboxWrite, evidence.ClassLocalWrite
	}
	verb := [...]string{"read", "list", "write", "edit"}[op]
	tool := [...]string{ToolReadFile, ToolListDir, ToolWriteFile, ToolEditFile}[op]
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
		return block(escape, "path escapes sandbox: '"+shown(p)+"' ("+perr.detail()+")"+pathAdvice(p))
	}
	if write {
		if rel == "." || strings.HasSuffix(p, "/") {
			return block(evidence.ClassMalformed, tool+" path '"+shown(p)+"' names a directory, not a file")
		}
		if entry, ok := g.protectedEntry(rel); ok {
			return block(evidence.ClassProtectedPath, verb+" to protected path '"+shown(rel)+"' refused: '"+entry+
				"' is protected (what is written there runs later outside the jail, or is the kernel's own record)")
		}
	}
	return Decision{Verdict: evidence.VerdictAllow, BlastClass: allowClass, Reason: verb + " inside sandbox", Path: rel}
}

func (g *Gate) protectedEntry(rel string) (string, bool) {
	return matchProtected(g.anchored, rel)
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

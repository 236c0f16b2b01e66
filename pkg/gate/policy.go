package gate

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/deponent-dev/deponent-action/pkg/canon"
)

// Policy tunes a Gate and the jail without code. It is read from a JSON
// file (LoadPolicy/ParsePolicy) or starts from DefaultPolicy. Parsing is
// strict — unknown keys, wrong types, duplicate keys and trailing data are
// errors naming the key — because a typo must never silently loosen policy.
//
// The fields hold the EFFECTIVE policy: after ParsePolicy, AllowHeads and
// Deny are the final lists (defaults replaced and/or extended), sorted and
// deduplicated. Build one with DefaultPolicy or ParsePolicy; a Policy built by
// hand is validated by NewGate, and zero limits there mean the defaults.
//
// File keys (every key optional; `{}` is the default policy):
//
//	version                integer   Policy format version. Default 1; only 1 is accepted.
//	allow_heads            [string]  Replaces the program allowlist. Default: black, cat, cp,
//	                                 diff, echo, find, git, grep, head, ls, mkdir, mv, mypy, pwd,
//	                                 pytest, python, python3, rm, ruff, sed, sort, tail, touch,
//	                                 true, uniq, wc, which.
//	                                 Bare program names only ([A-Za-z0-9._+-], found on the
//	                                 trusted PATH), and each must have a model in the gate's
//	                                 catalogue (ModelledPrograms; docs/policy.md lists them): a
//	                                 program without one is an error naming it, never allowed
//	                                 with an option surface the gate has not read. Shells,
//	                                 program launchers (env, xargs, nice, timeout, sudo, …) and
//	                                 state-changing shell builtins (eval, exec, export, …) are
//	                                 refused: they would run commands the gate never sees.
//	extra_allow_heads      [string]  Added to the allowlist (after allow_heads, if both are given).
//	                                 The same rules. Default [].
//	python_modules         [string]  Replaces the modules `python -m` may run (besides the
//	                                 project's own): each must have a model (ModelledModules).
//	                                 Default: black, json.tool, mypy, py_compile, pytest, ruff,
//	                                 unittest, venv.
//	extra_python_modules   [string]  Added to python_modules. Default [].
//	allow_git_writes       [string]  git subcommands that may write the repository: "add",
//	                                 "commit". Default [] (git is read-only). The jail must also
//	                                 let .git be written for them to succeed.
//	deny                   [string]  Replaces the denylist: phrases refused in any command,
//	                                 matched case-insensitively (ASCII) on word boundaries over the
//	                                 parsed words, e.g. "curl", "pip install", "/etc/". Default: the
//	                                 seed's destructive, network, privilege/system-path, package
//	                                 install and home-reference phrases (see DefaultPolicy).
//	extra_deny             [string]  Added to the denylist. Default [].
//	allow_executables      [string]  Exact in-sandbox programs that may be run by path, written
//	                                 "./path" (e.g. "./gradlew"): the head "./gradlew" is then
//	                                 allowed, nothing else with a slash. These files are also
//	                                 protected from writes. Default [].
//	extra_protected_paths  [string]  Paths relative to the sandbox refused for writes, added to the
//	                                 built-ins, which cannot be removed: ".git" (at any depth),
//	                                 ".deponent", ".github/workflows" and ".github/actions".
//	                                 Compared case-insensitively, after symlink
//	                                 resolution. Default [].
//	limits                 object    Resource caps for the jail; each key optional:
//	  limits.cpu_seconds   integer   CPU seconds, 1..21600. Default 60.
//	  limits.file_size_mb  integer   Largest file a command may write, MiB, 1..65536. Default 256.
//	                                 Also caps write_file content.
//	  limits.memory_mb     integer   Memory, MiB, 1..262144. Default 2048.
//	  limits.wall_seconds  integer   Wall-clock seconds, 1..21600. Default 90.
//	  limits.tasks         integer   Processes and threads a command may have at once, 1..65536.
//	                                 Default 1024.
//	  limits.disk_mb       integer   Total a command may add to the disk (sandbox and its temp
//	                                 directory), MiB, 1..1048576. Default 4096.
//	env                    object    Variables set in the jail, {"NAME": "literal value"}. Default {}.
//	env_pass               [string]  Variables copied from the runner's environment into the jail
//	                                 (omitted when unset there). Default [].
//	                                 For env and env_pass, names the jail controls (PATH, HOME,
//	                                 TMPDIR, SHELL, IFS, ENV, BASH_ENV, LD_*, DYLD_*, BASH_FUNC_*, …)
//	                                 names that inject options into modelled programs
//	                                 (POSIXLY_CORRECT, GREP_OPTIONS, PYTEST_ADDOPTS, MAKEFLAGS,
//	                                 GOFLAGS, GIT_*, …) and secret-bearing names (GITHUB_*, ACTIONS_*, RUNNER_*,
//	                                 AWS_*, SSH_*, GH_*, names with a part ending in TOKEN, and
//	                                 names containing SECRET, PASSWORD, PASSWD, CREDENTIAL,
//	                                 PRIVATE_KEY, API_KEY or ACCESS_KEY) are refused.
//	trusted_path           [string]  The PATH commands run with, in search order: absolute
//	                                 directories. Default: the runner's PATH without empty,
//	                                 relative, missing and in-sandbox entries. Entries that are
//	                                 missing on the runner are dropped; an entry inside the
//	                                 sandbox makes NewGate fail.
type Policy struct {
	Version             int               `json:"version"`
	AllowHeads          []string          `json:"allow_heads"`
	Deny                []string          `json:"deny"`
	AllowExecutables    []string          `json:"allow_executables"`
	ExtraProtectedPaths []string          `json:"extra_protected_paths"`
	ResourceLimits      PolicyLimits      `json:"limits"`
	Env                 map[string]string `json:"env"`
	EnvPassNames        []string          `json:"env_pass"`
	TrustedPath         []string          `json:"trusted_path,omitempty"` // nil: derived from the runner's PATH
	PythonModules       []string          `json:"python_modules"`
	GitWrites           []string          `json:"allow_git_writes"`
}

// PolicyLimits are the jail's resource caps. Zero means the default.
type PolicyLimits struct {
	CPUSeconds  int `json:"cpu_seconds"`
	FileSizeMB  int `json:"file_size_mb"`
	MemoryMB    int `json:"memory_mb"`
	WallSeconds int `json:"wall_seconds"`
	Tasks       int `json:"tasks"`
	DiskMB      int `json:"disk_mb"`
}

// Seed defaults and upper bounds for limits. Six hours is GitHub's job
// limit; the size bounds only stop absurd values.
const (
	defaultCPUSeconds  = 60
	defaultFileSizeMB  = 256
	defaultMemoryMB    = 2048
	defaultWallSeconds = 90
	defaultTasks       = 1024
	defaultDiskMB      = 4096

	maxLimitSeconds = 6 * 60 * 60
	maxFileSizeMB   = 64 << 10
	maxMemoryMB     = 256 << 10
	maxTasks        = 1 << 16
	maxDiskMB       = 1 << 20

	maxPolicyBytes = 1 << 20
	maxPolicyDepth = 16
	maxEnvValue    = 32 << 10
)

// defaultAllowHeads is the seed's coding-agent allowlist.
var defaultAllowHeads = []string{
	"python", "python3", "pytest", "ruff", "black", "mypy",
	"ls", "cat", "head", "tail", "pwd", "echo", "grep", "wc",
	"mkdir", "touch", "diff", "true", "sort", "uniq",
	// Issue 12: what an agent needs to inspect a repository and fix a bug,
	// each under its model (read-only git, find without -exec/-delete,
	// sed without e or outside files, cp/mv/rm inside the sandbox).
	"git", "find", "sed", "cp", "mv", "rm", "which",
}

// defaultPythonModules are what `python -m` may run by default.
var defaultPythonModules = []string{"black", "json.tool", "mypy", "py_compile", "pytest", "ruff", "unittest", "venv"}

// gitWriteSubcommands are the values allow_git_writes accepts.
var gitWriteSubcommands = []string{"add", "commit"}

// defaultDenyRules are the seed's denylist categories, as phrases matched on
// word boundaries (see Gate.denyHit). Defence in depth: most of these heads
// are not allowlisted anyway; the phrases also catch them inside code
// strings such as `python3 -c "os.system('curl …')"`.
var defaultDenyRules = []struct{ phrase, category string }{
	{"rm -rf /", "destructive"}, {"rm -fr /", "destructive"}, {"rm -r /", "destructive"},
	{"rmdir", "destructive"}, {"mkfs", "destructive"}, {"dd if=", "destructive"},
	{"dd of=", "destructive"}, {"shred", "destructive"}, {":(){", "destructive (fork bomb)"},
	{"shutdown", "destructive"}, {"reboot", "destructive"}, {"halt", "destructive"},
	{"poweroff", "destructive"},

	{"curl", "network"}, {"wget", "network"}, {"ssh", "network"}, {"scp", "network"},
	{"sftp", "network"}, {"rsync", "network"}, {"nc", "network"}, {"ncat", "network"},
	{"netcat", "network"}, {"telnet", "network"}, {"nmap", "network"}, {"ftp", "network"},
	{"socat", "network"},

	{"sudo", "privilege"}, {"su", "privilege"}, {"doas", "privilege"}, {"chmod", "privilege"},
	{"chown", "privilege"}, {"chgrp", "privilege"}, {"launchctl", "system"},
	{"systemctl", "system"}, {"crontab", "system"}, {"mount", "system"},
	{"/etc/", "system path"}, {"/usr/", "system path"}, {"/bin/", "system path"},
	{"/sbin/", "system path"}, {"/var/", "system path"}, {"/dev/", "system path"},
	{"/proc/", "system path"}, {"/sys/", "system path"}, {"/boot/", "system path"},
	{"/root", "system path"},

	{"pip install", "package install"}, {"pip3 install", "package install"},
	{"npm install", "package install"},
	{"npm i", "package install"}, {"yarn add", "package install"},
	{"gem install", "package install"}, {"apt", "package install"},
	{"apt-get", "package install"}, {"brew install", "package install"},
	{"go install", "package install"}, {"cargo install", "package install"},
	{"easy_install", "package install"}, {"conda install", "package install"},
	{"npm add", "package install"}, {"pnpm add", "package install"}, {"pnpm install", "package install"},
	{"bun add", "package install"}, {"bun install", "package install"}, {"uv add", "package install"},
	{"poetry add", "package install"}, {"pipx install", "package install"}, {"go get", "package install"},
	{"mamba install", "package install"}, {"dnf install", "package install"}, {"yum install", "package install"},
	{"apk add", "package install"}, {"snap install", "package install"},

	{"~", "home reference"}, {"$home", "home reference"}, {"${home}", "home reference"},
	{"/home/", "home reference"}, {"/users/", "home reference"},
}

// DefaultPolicy returns the default coding-agent policy: the seed's, with
// the inspection and file programs an agent needs to fix a bug (issue 12).
func DefaultPolicy() *Policy {
	p := &Policy{
		Version:             1,
		AllowHeads:          append([]string(nil), defaultAllowHeads...),
		Deny:                make([]string, 0, len(defaultDenyRules)),
		AllowExecutables:    []string{},
		ExtraProtectedPaths: []string{},
		Env:                 map[string]string{},
		EnvPassNames:        []string{},
		PythonModules:       append([]string(nil), defaultPythonModules...),
		GitWrites:           []string{},
	}
	for _, r := range defaultDenyRules {
		p.Deny = append(p.Deny, r.phrase)
	}
	if err := p.normalize(); err != nil {
		panic("kernel: default policy is invalid: " + err.Error())
	}
	return p
}

// PolicyKeys lists every key the policy parser accepts, nested ones as
// "limits.cpu_seconds", sorted. Documentation is checked against it.
func PolicyKeys() []string {
	keys := make([]string, 0, len(policyTopKeys)+len(policyLimitKeys))
	keys = append(keys, policyTopKeys...)
	for _, k := range policyLimitKeys {
		keys = append(keys, "limits."+k)
	}
	sort.Strings(keys)
	return keys
}

var policyTopKeys = []string{
	"allow_executables", "allow_git_writes", "allow_heads", "deny", "env", "env_pass", "extra_allow_heads",
	"extra_deny", "extra_protected_paths", "extra_python_modules", "limits", "python_modules", "trusted_path", "version",
}

var policyLimitKeys = []string{"cpu_seconds", "disk_mb", "file_size_mb", "memory_mb", "tasks", "wall_seconds"}

// LoadPolicy reads and parses a policy file. Errors name the file.
func LoadPolicy(path string) (*Policy, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("policy file %s: %w", path, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxPolicyBytes+1))
	if err != nil {
		return nil, fmt.Errorf("policy file %s: %w", path, err)
	}
	p, err := ParsePolicy(data)
	if err != nil {
		return nil, fmt.Errorf("policy file %s: %w", path, err)
	}
	return p, nil
}

// ParsePolicy parses a JSON policy strictly (see Policy for the keys).
func ParsePolicy(data []byte) (*Policy, error) {
	if len(data) > maxPolicyBytes {
		return nil, errors.New("policy: larger than 1 MiB")
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errors.New("policy: empty document (use {} for the default policy)")
	}
	// The kernel's strict reader: duplicate keys, invalid UTF-8, NaN and
	// trailing data are errors with their line and column, never a value
	// silently chosen.
	top, err := canon.Parse(data, canon.Limits{MaxBytes: maxPolicyBytes, MaxDepth: maxPolicyDepth})
	if err != nil {
		return nil, fmt.Errorf("policy: invalid JSON: %w", err)
	}
	if top.Kind() != canon.Object {
		return nil, fmt.Errorf("policy: expected a JSON object, got %s", kindName(top))
	}
	return policyFromJSON(top)
}

func policyFromJSON(top canon.Value) (*Policy, error) {
	p := DefaultPolicy()
	var extraHeads, extraDeny, extraModules []string
	for _, f := range top.Members() {
		var err error
		switch f.Key {
		case "version":
			var v int
			if v, err = policyInt(f.Value, f.Key, 1, 1<<31-1); err == nil && v != 1 {
				err = fmt.Errorf("policy: key %q: unsupported version %d (this kernel reads version 1)", f.Key, v)
			}
		case "allow_heads":
			p.AllowHeads, err = policyStrings(f.Value, f.Key)
		case "extra_allow_heads":
			extraHeads, err = policyStrings(f.Value, f.Key)
		case "deny":
			p.Deny, err = policyStrings(f.Value, f.Key)
		case "extra_deny":
			extraDeny, err = policyStrings(f.Value, f.Key)
		case "allow_executables":
			p.AllowExecutables, err = policyStrings(f.Value, f.Key)
		case "python_modules":
			p.PythonModules, err = policyStrings(f.Value, f.Key)
		case "extra_python_modules":
			extraModules, err = policyStrings(f.Value, f.Key)
		case "allow_git_writes":
			p.GitWrites, err = policyStrings(f.Value, f.Key)
		case "extra_protected_paths":
			p.ExtraProtectedPaths, err = policyStrings(f.Value, f.Key)
		case "env_pass":
			p.EnvPassNames, err = policyStrings(f.Value, f.Key)
		case "trusted_path":
			p.TrustedPath, err = policyStrings(f.Value, f.Key)
			if err == nil && len(p.TrustedPath) == 0 {
				err = fmt.Errorf("policy: key %q: must list at least one directory (omit the key to use the runner's PATH)", f.Key)
			}
		case "env":
			p.Env, err = policyStringMap(f.Value, f.Key)
		case "limits":
			err = parseLimits(f.Value, &p.ResourceLimits)
		default:
			err = unknownKeyError(f.Key, "", policyTopKeys)
		}
		if err != nil {
			return nil, err
		}
	}
	for _, h := range extraHeads {
		if err := checkHeadName(h); err != nil {
			return nil, fmt.Errorf("policy: key \"extra_allow_heads\": %q %v", h, err)
		}
	}
	for _, d := range extraDeny {
		if _, err := normalizeDenyPhrase(d); err != nil {
			return nil, fmt.Errorf("policy: key \"extra_deny\": %q %v", d, err)
		}
	}
	for _, m := range extraModules {
		if err := checkModuleName(m); err != nil {
			return nil, fmt.Errorf("policy: key \"extra_python_modules\": %q %v", m, err)
		}
	}
	p.AllowHeads = append(p.AllowHeads, extraHeads...)
	p.Deny = append(p.Deny, extraDeny...)
	p.PythonModules = append(p.PythonModules, extraModules...)
	if err := p.normalize(); err != nil {
		return nil, err
	}
	return p, nil
}

func parseLimits(v canon.Value, l *PolicyLimits) error {
	if v.Kind() != canon.Object {
		return fmt.Errorf("policy: key \"limits\": expected an object, got %s", kindName(v))
	}
	for _, f := range v.Members() {
		key := "limits." + f.Key
		var err error
		switch f.Key {
		case "cpu_seconds":
			l.CPUSeconds, err = policyInt(f.Value, key, 1, maxLimitSeconds)
		case "file_size_mb":
			l.FileSizeMB, err = policyInt(f.Value, key, 1, maxFileSizeMB)
		case "memory_mb":
			l.MemoryMB, err = policyInt(f.Value, key, 1, maxMemoryMB)
		case "wall_seconds":
			l.WallSeconds, err = policyInt(f.Value, key, 1, maxLimitSeconds)
		case "tasks":
			l.Tasks, err = policyInt(f.Value, key, 1, maxTasks)
		case "disk_mb":
			l.DiskMB, err = policyInt(f.Value, key, 1, maxDiskMB)
		default:
			err = unknownKeyError(f.Key, "limits.", policyLimitKeys)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// normalize validates every field and puts lists in canonical order. It is
// what makes two spellings of the same policy hash the same.
func (p *Policy) normalize() error {
	if p.Version == 0 {
		p.Version = 1
	}
	if p.Version != 1 {
		return fmt.Errorf("policy: key \"version\": unsupported version %d (this kernel reads version 1)", p.Version)
	}
	for i, h := range p.AllowHeads {
		if err := checkHeadName(h); err != nil {
			return fmt.Errorf("policy: key \"allow_heads\": %q %v", h, err)
		}
		p.AllowHeads[i] = h
	}
	p.AllowHeads = sortedUnique(p.AllowHeads)

	for _, m := range p.PythonModules {
		if err := checkModuleName(m); err != nil {
			return fmt.Errorf("policy: key \"python_modules\": %q %v", m, err)
		}
	}
	p.PythonModules = sortedUnique(p.PythonModules)
	for _, w := range p.GitWrites {
		if !containsKey(gitWriteSubcommands, w) {
			return fmt.Errorf("policy: key \"allow_git_writes\": %q is not a git subcommand the gate can allow to write (it allows: %s)", w, strings.Join(gitWriteSubcommands, ", "))
		}
	}
	p.GitWrites = sortedUnique(p.GitWrites)

	for i, d := range p.Deny {
		n, err := normalizeDenyPhrase(d)
		if err != nil {
			return fmt.Errorf("policy: key \"deny\": %q %v", d, err)
		}
		p.Deny[i] = n
	}
	p.Deny = sortedUnique(p.Deny)

	for _, e := range p.AllowExecutables {
		if err := checkExecutablePath(e); err != nil {
			return fmt.Errorf("policy: key \"allow_executables\": %q %v", e, err)
		}
	}
	p.AllowExecutables = sortedUnique(p.AllowExecutables)

	prot := make([]string, 0, len(p.ExtraProtectedPaths))
	for _, e := range p.ExtraProtectedPaths {
		n, ok := normalizeProtected(e)
		if !ok {
			return fmt.Errorf("policy: key \"extra_protected_paths\": %q must be a relative path inside the sandbox (not \".\", no \"..\")", e)
		}
		if !isBuiltinProtected(n) {
			prot = append(prot, n)
		}
	}
	p.ExtraProtectedPaths = sortedUnique(prot)

	if err := p.ResourceLimits.normalize(); err != nil {
		return err
	}

	if p.Env == nil {
		p.Env = map[string]string{}
	}
	for name, val := range p.Env {
		if err := checkEnvName(name); err != nil {
			return fmt.Errorf("policy: key \"env.%s\": %v", name, err)
		}
		if strings.IndexByte(val, 0) >= 0 || len(val) > maxEnvValue {
			return fmt.Errorf("policy: key \"env.%s\": value must be at most 32 KiB without NUL bytes", name)
		}
	}
	for _, name := range p.EnvPassNames {
		if err := checkEnvName(name); err != nil {
			return fmt.Errorf("policy: key \"env_pass\": %q: %v", name, err)
		}
		if _, dup := p.Env[name]; dup {
			return fmt.Errorf("policy: key \"env_pass\": %q is also set in \"env\"; pick one", name)
		}
	}
	p.EnvPassNames = sortedUnique(p.EnvPassNames)

	if p.TrustedPath != nil {
		if len(p.TrustedPath) == 0 {
			return errors.New("policy: key \"trusted_path\": must list at least one directory")
		}
		seen := make(map[string]bool, len(p.TrustedPath))
		out := p.TrustedPath[:0:0]
		for _, d := range p.TrustedPath {
			if !filepath.IsAbs(d) || strings.ContainsAny(d, ":\x00") || filepath.Clean(d) != d {
				return fmt.Errorf("policy: key \"trusted_path\": %q must be a clean absolute directory without ':'", d)
			}
			if !seen[d] {
				seen[d] = true
				out = append(out, d)
			}
		}
		p.TrustedPath = out
	}
	return nil
}

func (l *PolicyLimits) normalize() error {
	fields := []struct {
		name string
		v    *int
		def  int
		max  int
	}{
		{"cpu_seconds", &l.CPUSeconds, defaultCPUSeconds, maxLimitSeconds},
		{"file_size_mb", &l.FileSizeMB, defaultFileSizeMB, maxFileSizeMB},
		{"memory_mb", &l.MemoryMB, defaultMemoryMB, maxMemoryMB},
		{"wall_seconds", &l.WallSeconds, defaultWallSeconds, maxLimitSeconds},
		{"tasks", &l.Tasks, defaultTasks, maxTasks},
		{"disk_mb", &l.DiskMB, defaultDiskMB, maxDiskMB},
	}
	for _, f := range fields {
		if *f.v == 0 {
			*f.v = f.def
		}
		if *f.v < 1 || *f.v > f.max {
			return fmt.Errorf("policy: key \"limits.%s\": must be between 1 and %d, got %d", f.name, f.max, *f.v)
		}
	}
	return nil
}

// Limits returns the jail's caps with every default filled in.
func (p *Policy) Limits() PolicyLimits {
	l := p.ResourceLimits
	_ = l.normalize() // fills zero fields; out-of-range values were refused by ParsePolicy/NewGate
	return l
}

// Wall is the wall-clock cap as a duration.
func (l PolicyLimits) Wall() time.Duration { return time.Duration(l.WallSeconds) * time.Second }

// EnvPass returns the variables to set in the jail: the literal env entries
// plus every env_pass name that is set in this process's environment.
func (p *Policy) EnvPass() map[string]string {
	out := make(map[string]string, len(p.Env)+len(p.EnvPassNames))
	for k, v := range p.Env {
		out[k] = v
	}
	for _, name := range p.EnvPassNames {
		if v, ok := os.LookupEnv(name); ok {
			out[name] = v
		}
	}
	return out
}

// SHA256 returns the hex SHA-256 of CanonicalJSON: the effective policy,
// which is what a verifier needs to know governed a run.
func (p *Policy) SHA256() string {
	sum := sha256.Sum256(p.CanonicalJSON())
	return hex.EncodeToString(sum[:])
}

// CanonicalJSON renders the effective policy as the bytes SHA256 hashes: the
// canonical form C of package canon (the same rules as every other hash in
// Deponent), of one object with these keys —
//
//	allow_executables      sorted, deduplicated
//	allow_git_writes       sorted, deduplicated
//	allow_heads            the effective allowlist (defaults replaced/extended), sorted, deduplicated
//	deny                   the effective denylist, lower case, whitespace collapsed, sorted, deduplicated
//	env                    object
//	env_pass               names only (never values), sorted, deduplicated
//	extra_protected_paths  cleaned, sorted, deduplicated, built-ins (.git, .deponent, .github/…) left out
//	limits                 {cpu_seconds, disk_mb, file_size_mb, memory_mb, tasks, wall_seconds}, defaults filled in
//	python_modules         the effective list (defaults replaced/extended), sorted, deduplicated
//	trusted_path           in search order; the key is absent when the runner's PATH is used
//	version                1
//
// The rendering is itself a valid policy file that parses back to the same
// effective policy (and so the same hash).
func (p *Policy) CanonicalJSON() []byte {
	c := p.clone()
	_ = c.normalize() // policies from ParsePolicy/DefaultPolicy are already normal
	return canon.Canonical(c.value())
}

// MarshalJSON writes the canonical rendering.
func (p *Policy) MarshalJSON() ([]byte, error) { return p.CanonicalJSON(), nil }

func (p *Policy) value() canon.Value {
	strs := func(list []string) canon.Value {
		vs := make([]canon.Value, 0, len(list))
		for _, s := range list {
			vs = append(vs, canon.Str(s))
		}
		return canon.Arr(vs...)
	}
	env := make([]canon.Member, 0, len(p.Env))
	for k, v := range p.Env {
		env = append(env, canon.M(k, canon.Str(v)))
	}
	l := p.ResourceLimits
	ms := []canon.Member{
		canon.M("allow_executables", strs(p.AllowExecutables)),
		canon.M("allow_git_writes", strs(p.GitWrites)),
		canon.M("allow_heads", strs(p.AllowHeads)),
		canon.M("deny", strs(p.Deny)),
		canon.M("env", canon.Obj(env...)),
		canon.M("env_pass", strs(p.EnvPassNames)),
		canon.M("extra_protected_paths", strs(p.ExtraProtectedPaths)),
		canon.M("limits", canon.Obj(
			canon.M("cpu_seconds", canon.Int(int64(l.CPUSeconds))),
			canon.M("file_size_mb", canon.Int(int64(l.FileSizeMB))),
			canon.M("memory_mb", canon.Int(int64(l.MemoryMB))),
			canon.M("wall_seconds", canon.Int(int64(l.WallSeconds))),
			canon.M("tasks", canon.Int(int64(l.Tasks))),
			canon.M("disk_mb", canon.Int(int64(l.DiskMB))),
		)),
		canon.M("python_modules", strs(p.PythonModules)),
		canon.M("version", canon.Int(int64(p.Version))),
	}
	if p.TrustedPath != nil {
		ms = append(ms, canon.M("trusted_path", strs(p.TrustedPath)))
	}
	return canon.Obj(ms...)
}

func (p *Policy) clone() *Policy {
	c := *p
	c.AllowHeads = append([]string(nil), p.AllowHeads...)
	c.Deny = append([]string(nil), p.Deny...)
	c.AllowExecutables = append([]string(nil), p.AllowExecutables...)
	c.ExtraProtectedPaths = append([]string(nil), p.ExtraProtectedPaths...)
	c.EnvPassNames = append([]string(nil), p.EnvPassNames...)
	c.PythonModules = append([]string(nil), p.PythonModules...)
	c.GitWrites = append([]string(nil), p.GitWrites...)
	if p.TrustedPath != nil {
		c.TrustedPath = append([]string{}, p.TrustedPath...)
	}
	c.Env = make(map[string]string, len(p.Env))
	for k, v := range p.Env {
		c.Env[k] = v
	}
	return &c
}

// Validation of individual entries.

// Heads that can never be allowlisted. Launchers and shells run a command
// the gate never parsed; these builtins and keywords change how the rest of
// the script is read (cd moves the base every path was checked against,
// exec/eval reinterpret words).
var (
	refusedLaunchers = wordSet(`sh bash dash zsh ksh mksh yash fish csh tcsh ash rbash busybox toybox
		env xargs nice nohup timeout stdbuf setsid chroot unshare nsenter sudo su doas runuser pkexec
		watch strace ltrace gdb script parallel flock ionice taskset chrt expect kill pkill killall`)
	refusedBuiltins = wordSet(`alias bg break builtin cd command continue declare dirs disown enable
		eval exec exit export fc fg getopts hash jobs let local logout mapfile popd pushd read readarray
		readonly return set shift shopt source suspend time times trap type typeset ulimit umask unalias . :
		unset wait coproc select function`)
)

func wordSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

func checkHeadName(h string) error {
	if h == "" || len(h) > 64 {
		return errors.New("must be a program name of 1 to 64 characters")
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			(i > 0 && (c == '.' || c == '_' || c == '+' || c == '-'))
		if !ok {
			return errors.New("must be a bare program name ([A-Za-z0-9._+-], no slash); in-sandbox programs go in allow_executables")
		}
	}
	if refusedLaunchers[h] {
		return errors.New("is a shell or program launcher: it would run commands the gate never sees")
	}
	if refusedBuiltins[h] {
		return errors.New("is a shell builtin or keyword that changes how the rest of the command is read")
	}
	if programFor(h) == nil {
		return errors.New("has no model in the gate's catalogue, so the gate cannot tell which of its arguments are paths or which " +
			"of its options run other programs; it cannot be allowed (the modelled programs: " + strings.Join(ModelledPrograms(), ", ") +
			"; a project's own tool can run by path through allow_executables)")
	}
	return nil
}

func checkModuleName(m string) error {
	if !isDottedName(m) {
		return errors.New("must be a module name such as pytest or json.tool")
	}
	if programsByModule[m] == nil {
		return errors.New("has no model in the gate's catalogue, so `python -m " + m + "` cannot be checked (the modelled modules: " +
			strings.Join(ModelledModules(), ", ") + ")")
	}
	return nil
}

func normalizeDenyPhrase(d string) (string, error) {
	n := strings.ToLower(strings.Join(strings.Fields(d), " "))
	switch {
	case n == "":
		return "", errors.New("must not be blank")
	case len(n) > 256:
		return "", errors.New("must be at most 256 characters")
	}
	if _, hidden := firstDeceptiveRune(n); hidden {
		return "", errors.New("must not contain control or invisible characters")
	}
	return n, nil
}

func checkExecutablePath(e string) error {
	rest, ok := strings.CutPrefix(e, "./")
	if !ok || rest == "" {
		return errors.New(`must be a path inside the sandbox written as "./path"`)
	}
	if strings.ContainsAny(e, "\x00*?[\\") || strings.HasPrefix(rest, "-") {
		return errors.New("must not contain NUL, glob characters or backslashes, or start with '-'")
	}
	if _, hidden := firstDeceptiveRune(e); hidden {
		return errors.New("must not contain control or invisible characters")
	}
	if "./"+filepath.ToSlash(filepath.Clean(rest)) != e || strings.HasPrefix(rest, "../") || rest == ".." {
		return errors.New(`must be clean ("./dir/tool": no "..", "//" or trailing slash)`)
	}
	return nil
}

// Environment names the jail must control, and secret-bearing names.
var (
	jailEnvNames = map[string]bool{
		"PATH": true, "HOME": true, "TMPDIR": true, "TMP": true, "TEMP": true, "PWD": true,
		"OLDPWD": true, "SHELL": true, "IFS": true, "ENV": true, "BASH_ENV": true, "CDPATH": true,
		"PS4": true, "SHELLOPTS": true, "BASHOPTS": true, "GLOBIGNORE": true, "USER": true,
		"LOGNAME": true, "PYTHONSTARTUP": true, "PYTHONINSPECT": true,
	}
	// optionEnvNames inject options or programs into the programs the gate
	// models, behind the command line it reads.
	optionEnvNames = map[string]bool{
		"POSIXLY_CORRECT": true, "GREP_OPTIONS": true, "PYTEST_ADDOPTS": true, "PYTEST_PLUGINS": true,
		"MAKEFLAGS": true, "GNUMAKEFLAGS": true, "MFLAGS": true, "MAKEFILES": true, "GOFLAGS": true,
		"PAGER": true, "EDITOR": true, "VISUAL": true, "PYTHONSAFEPATH": true,
	}
	optionEnvPrefixes = []string{"GIT_"}
	jailEnvPrefixes   = []string{"LD_", "DYLD_", "BASH_FUNC_"}
	secretEnvPrefixes = []string{"GITHUB_", "ACTIONS_", "RUNNER_", "AWS_", "SSH_", "GH_"}
	secretEnvParts    = []string{"SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "PRIVATE_KEY", "API_KEY", "ACCESS_KEY"}
)

func checkEnvName(name string) error {
	if name == "" || len(name) > 128 {
		return errors.New("must be a variable name of 1 to 128 characters")
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || i > 0 && c >= '0' && c <= '9') {
			return errors.New("must match [A-Za-z_][A-Za-z0-9_]*")
		}
	}
	up := strings.ToUpper(name)
	if jailEnvNames[up] {
		return fmt.Errorf("%s is controlled by the jail and cannot be set by policy", name)
	}
	for _, pre := range jailEnvPrefixes {
		if strings.HasPrefix(up, pre) {
			return fmt.Errorf("%s* variables change how programs load and are controlled by the jail", pre)
		}
	}
	if optionEnvNames[up] {
		return fmt.Errorf("%s changes how the programs the gate models read their arguments or which programs they run (the gate checks the command line only)", name)
	}
	for _, pre := range optionEnvPrefixes {
		if strings.HasPrefix(up, pre) {
			return fmt.Errorf("%s* variables can point git elsewhere or name programs it runs (the gate checks the command line only)", pre)
		}
	}
	for _, pre := range secretEnvPrefixes {
		if strings.HasPrefix(up, pre) {
			return fmt.Errorf("%s* variables belong to the runner or carry credentials; they are never passed to agent commands", pre)
		}
	}
	for _, part := range secretEnvParts {
		if strings.Contains(up, part) {
			return fmt.Errorf("names containing %s look secret-bearing; secrets are never passed to agent commands", part)
		}
	}
	// TOKEN as a word of the name (NPM_TOKEN, AUTHTOKEN), not TOKENIZERS_PARALLELISM.
	for _, part := range strings.Split(up, "_") {
		if strings.HasSuffix(part, "TOKEN") || part == "TOKENS" {
			return errors.New("names with a TOKEN part look secret-bearing; secrets are never passed to agent commands")
		}
	}
	return nil
}

func sortedUnique(s []string) []string {
	if len(s) == 0 {
		return []string{}
	}
	out := append([]string(nil), s...)
	sort.Strings(out)
	w := 1
	for i := 1; i < len(out); i++ {
		if out[i] != out[w-1] {
			out[w] = out[i]
			w++
		}
	}
	return out[:w]
}

func isBuiltinProtected(p string) bool {
	for _, b := range builtinProtected {
		if strings.EqualFold(p, b) {
			return true
		}
	}
	return false
}

func unknownKeyError(key, prefix string, known []string) error {
	best, bestDist := "", 1<<30
	lower := strings.ToLower(key)
	for _, k := range known {
		d := editDistance(lower, k)
		if len(lower) >= 4 && (strings.HasPrefix(k, lower) || strings.HasPrefix(lower, k)) {
			d = min(d, 1) // a truncated or extended key
		}
		if d < bestDist {
			best, bestDist = k, d
		}
	}
	if best != "" && (bestDist <= 2 || bestDist*3 <= len(best)) {
		return fmt.Errorf("policy: unknown key %q (did you mean %q?)", prefix+key, prefix+best)
	}
	return fmt.Errorf("policy: unknown key %q (known keys: %s)", prefix+key, strings.Join(known, ", "))
}

// editDistance is the Levenshtein distance, for "did you mean" hints.
func editDistance(a, b string) int {
	if len(a) > 64 {
		a = a[:64]
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// A minimal JSON tree that keeps object keys in order, so that duplicate
// keys can be reported (encoding/json silently keeps the last one).

func kindName(v canon.Value) string {
	switch v.Kind() {
	case canon.Object:
		return "an object"
	case canon.Array:
		return "an array"
	case canon.String:
		return "a string"
	case canon.Number:
		return "a number"
	case canon.Bool:
		return "a boolean"
	}
	return "null"
}

func policyInt(v canon.Value, key string, lo, hi int) (int, error) {
	if v.Kind() != canon.Number {
		return 0, fmt.Errorf("policy: key %q: expected an integer, got %s", key, kindName(v))
	}
	n, ok := v.AsInt64()
	if !ok {
		text, _ := v.NumberText()
		return 0, fmt.Errorf("policy: key %q: expected an integer, got %s", key, text)
	}
	if n < int64(lo) || n > int64(hi) {
		return 0, fmt.Errorf("policy: key %q: must be between %d and %d, got %d", key, lo, hi, n)
	}
	return int(n), nil
}

func policyStrings(v canon.Value, key string) ([]string, error) {
	if v.Kind() != canon.Array {
		return nil, fmt.Errorf("policy: key %q: expected an array of strings, got %s", key, kindName(v))
	}
	out := make([]string, 0, len(v.Elems()))
	for i, e := range v.Elems() {
		s, ok := e.AsString()
		if !ok {
			return nil, fmt.Errorf("policy: key \"%s[%d]\": expected a string, got %s", key, i, kindName(e))
		}
		out = append(out, s)
	}
	return out, nil
}

func policyStringMap(v canon.Value, key string) (map[string]string, error) {
	if v.Kind() != canon.Object {
		return nil, fmt.Errorf("policy: key %q: expected an object of strings, got %s", key, kindName(v))
	}
	out := make(map[string]string, len(v.Members()))
	for _, f := range v.Members() {
		s, ok := f.Value.AsString()
		if !ok {
			return nil, fmt.Errorf("policy: key \"%s.%s\": expected a string, got %s", key, f.Key, kindName(f.Value))
		}
		out[f.Key] = s
	}
	return out, nil
}

package action

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"unicode"

	"github.com/deponent-dev/deponent-action/pkg/jail"
)

// Input names: the action inputs of action.yml, and the local --flags.
const (
	InSteps              = "steps"
	InPlan               = "plan"
	InSandbox            = "sandbox"
	InPolicy             = "policy"
	InJail               = "jail"
	InAllowUnjailed      = "allow-unjailed"
	InDryRun             = "dry-run"
	InCanaries           = "canaries"
	InVerifyCommand      = "verify-command"
	InOnBlock            = "on-block"
	InFailOnStepErr      = "fail-on-step-error"
	InReceiptsDir        = "receipts-dir"
	InProducer           = "producer"
	InModel              = "model"
	InTask               = "task"
	InAgent              = "agent"
	InAgentCommand       = "agent-command"
	InAgentEnv           = "agent-env"
	InAgentVersion       = "agent-version"
	InAgentTimeout       = "agent-timeout"
	InMaxToolCalls       = "max-tool-calls"
	InAllowUnjailedAgent = "allow-unjailed-agent"
	InSessionID          = "session-id"
	InUploadArtifact     = "upload-artifact"
	InArtifactName       = "artifact-name"
	InAttest             = "attest"
)

// InputSpec documents one input. Inputs is the single list that the flag
// parser, --help, action.yml and docs/action-reference.md are checked
// against.
type InputSpec struct {
	Name    string
	Arg     string // the value's placeholder in --help
	Default string // as action.yml declares it ("" when computed at run time)
	Usage   string // one line
	bool    bool
}

// Inputs lists every input in the order action.yml declares them.
var Inputs = []InputSpec{
	{Name: InSteps, Arg: "LINES", Usage: "build steps, one run_cmd per non-empty line; lines starting with # are comments (exactly one of steps/plan)"},
	{Name: InPlan, Arg: "FILE", Usage: `JSONL file of tool calls, one {"tool", "params", "agent"} object per line (exactly one of steps/plan)`},
	{Name: InSandbox, Arg: "DIR", Usage: "directory the agent may work in (default: GITHUB_WORKSPACE, else the current directory)"},
	{Name: InPolicy, Arg: "FILE", Usage: "policy JSON file (default: the built-in coding-agent policy)"},
	{Name: InJail, Arg: "NAME", Default: "auto", Usage: "auto | bwrap | seatbelt | none; an unavailable jail refuses every command (fail closed), never a silent switch"},
	{Name: InAllowUnjailed, Default: "false", Usage: "required with jail none: run commands gate-only, UNJAILED (recorded in every entry)", bool: true},
	{Name: InDryRun, Default: "false", Usage: "gate and record every action, execute none (outcome GOVERNED_DRY_RUN)", bool: true},
	{Name: InCanaries, Default: "true", Usage: "attempt rogue actions first and require that each is stopped", bool: true},
	{Name: InVerifyCommand, Arg: "CMD", Usage: "command the harness runs itself after the agent's steps, gated and jailed (e.g. the test suite)"},
	{Name: InOnBlock, Arg: "fail|continue", Default: "fail", Usage: "fail | continue: whether a blocked agent step fails the run"},
	{Name: InFailOnStepErr, Default: "false", Usage: "an agent step that failed (non-zero exit, killed, error) fails the run; by default it is counted and shown, and the verify command decides", bool: true},
	{Name: InReceiptsDir, Arg: "DIR", Usage: "where receipts and the ledger go, outside the sandbox (default: $RUNNER_TEMP/deponent-receipts, locally a new temporary directory)"},
	{Name: InProducer, Arg: "NAME", Default: "deponent", Usage: "receipt producer name: a subdirectory of receipts-dir ([A-Za-z0-9._-], 1-128)"},
	{Name: InModel, Arg: "NAME", Usage: "model that drove the agent, recorded in the receipt"},
	{Name: InTask, Arg: "TEXT", Usage: "what the agent was asked to do, recorded in the receipt (first 160 characters); with agent or agent-command, the agent's prompt"},
	{Name: InAgent, Arg: "claude|codex", Usage: "run this agent CLI live, with Deponent's governed MCP tools as its only tools (instead of steps/plan)"},
	{Name: InAgentCommand, Arg: "CMD", Usage: "run this command line as the live agent instead of a preset; it finds the MCP config at $DEPONENT_MCP_CONFIG"},
	{Name: InAgentEnv, Arg: "NAMES", Usage: "names of runner variables the agent process may see (e.g. ANTHROPIC_API_KEY), separated by spaces, commas or lines"},
	{Name: InAgentVersion, Arg: "VERSION", Usage: "CLI version a preset installs with npm into a private prefix when the CLI is not on PATH (default: the tested pin)"},
	{Name: InAgentTimeout, Arg: "DURATION", Default: "30m", Usage: "kill the agent and its processes after this long (Go duration, e.g. 45m); the run then fails"},
	{Name: InMaxToolCalls, Arg: "N", Default: "500", Usage: "tool calls the agent may make; every later call is refused and recorded, and the run fails"},
	{Name: InAllowUnjailedAgent, Default: "false", Usage: "run the agent process without the agent jail where none is available (recorded in the receipt and the summary)", bool: true},
	{Name: InSessionID, Arg: "ID", Usage: "receipt session id (default: RUN_ID-RUN_ATTEMPT-JOB and, in a matrix or where the job's check run id is known, a job key; locally random)"},
	{Name: InUploadArtifact, Default: "true", Usage: "action.yml only: upload receipts-dir as a workflow artifact", bool: true},
	{Name: InArtifactName, Arg: "NAME", Usage: "action.yml only: artifact name (default: deponent-receipts-<job>[-<job key>][-<n>]-<run attempt>, unique per job, matrix leg and attempt)"},
	{Name: InAttest, Default: "false", Usage: "action.yml only: attest the receipt with actions/attest-build-provenance (needs id-token: write, attestations: write)", bool: true},
}

func inputSpec(name string) InputSpec {
	for _, s := range Inputs {
		if s.Name == name {
			return s
		}
	}
	panic("action: unknown input " + name)
}

// InputError is a bad input: it names the input and says how to fix it.
type InputError struct {
	Input string // the input (or "steps/plan")
	Msg   string
}

func (e *InputError) Error() string { return fmt.Sprintf("input %q: %s", e.Input, e.Msg) }

func inputErr(input, format string, args ...any) error {
	return &InputError{Input: input, Msg: fmt.Sprintf(format, args...)}
}

// Config is a validated set of inputs.
type Config struct {
	Steps           string
	PlanPath        string
	Demo            bool
	Sandbox         string // absolute, symlink-resolved, an existing directory
	PolicyPath      string
	Jail            string // auto | bwrap | seatbelt | none
	AllowUnjailed   bool
	DryRun          bool
	Canaries        bool
	VerifyCommand   string
	OnBlockContinue bool
	FailOnStepError bool
	ReceiptsDir     string // as given (resolved later); "" means the default
	Producer        string
	Model           string
	Task            string
	SessionID       string
	// SessionDefaulted: the session id was derived, not given; on a
	// collision with an earlier run's ledger a suffix is added instead of
	// failing.
	SessionDefaulted bool
	UploadArtifact   bool
	ArtifactName     string
	// Attest is read and validated only: action.yml attests the receipt.
	Attest bool
	// Explicit lists the inputs given by a flag or an INPUT_ variable.
	Explicit map[string]bool
	// Live agent (agent.go): the agent to run instead of steps or a plan,
	// and its limits. Serve is the `mcp` subcommand's stdio session.
	Agent AgentConfig
	Serve bool
}

// Getenv reads the environment (os.Getenv, or a map in tests).
type Getenv func(string) string

// inputValue reads an input from the environment the way the runner
// exports it: INPUT_<NAME> upper-cased, hyphens kept (as for JavaScript
// actions); composite actions set the underscore spelling, which is read
// too.
func inputValue(getenv Getenv, name string) (string, bool) {
	up := strings.ToUpper(name)
	for _, k := range []string{"INPUT_" + up, "INPUT_" + strings.ReplaceAll(up, "-", "_")} {
		if v := strings.TrimSpace(getenv(k)); v != "" {
			return v, true
		}
	}
	return "", false
}

// flagValue records whether a flag was given; bool flags accept a bare
// --flag as "true" and keep any other text for validation, so a bad value
// is reported with the input's name.
type flagValue struct {
	val   string
	set   bool
	isBoo bool
}

func (f *flagValue) String() string     { return f.val }
func (f *flagValue) Set(s string) error { f.val, f.set = s, true; return nil }
func (f *flagValue) IsBoolFlag() bool   { return f.isBoo }

// Command-line only switches.
type switches struct {
	Demo    bool
	Version bool
	Help    bool
}

// ErrHelp is returned by ParseArgs for --help.
var ErrHelp = errors.New("help requested")

// ErrVersion is returned by ParseArgs for --version.
var ErrVersion = errors.New("version requested")

// Usage writes the --help text.
func Usage(w io.Writer) {
	fmt.Fprint(w, `deponent-action: run an agent's build steps through the gated pipeline —
deny-by-default gate, OS jail, hash-chained ledger, receipt.

Usage:
  deponent-action --demo                      run the embedded demo in a throwaway sandbox
  deponent-action --steps 'LINES' [flags]     govern shell steps (one run_cmd per line)
  deponent-action --plan FILE.jsonl [flags]   govern an agent's tool calls
  deponent-action --version | --help

Inside GitHub Actions every flag is also read from its INPUT_<NAME> variable
(action.yml sets them); a flag given on the command line wins.

Flags:
`)
	for _, s := range Inputs {
		arg := " " + s.Arg
		if s.bool {
			arg = "[=true|false]"
		}
		def := ""
		if s.Default != "" {
			def = " (default " + s.Default + ")"
		}
		fmt.Fprintf(w, "  --%s%s\n        %s%s\n", s.Name, arg, s.Usage, def)
	}
	fmt.Fprint(w, `  --demo
        run the embedded demo plan (well-behaved steps and a rogue one) in a
        temporary sandbox with the best available jail, then verify the receipt
  --version
        print the version
  --help
        print this help

Exit status: 0 when the outcome is GOVERNED_PASS (for --demo: the demo
behaved as designed); 1 for any other outcome (GOVERNED_FAIL,
GOVERNED_DRY_RUN) or when the run could not be testified (receipt or
ledger could not be written); 2 for a bad input or flag.
`)
}

// ParseArgs reads flags and INPUT_ variables into a Config. Flags win.
func ParseArgs(args []string, getenv Getenv, stderr io.Writer) (*Config, error) {
	raw, explicit, sw, err := parseFlags(args, getenv)
	if err != nil {
		return nil, err
	}
	return buildConfig(raw, explicit, sw.Demo, getenv)
}

// parseFlags reads the flags and the INPUT_ variables (a flag wins) into
// raw values, without validating them.
func parseFlags(args []string, getenv Getenv) (raw map[string]string, explicit map[string]bool, sw switches, err error) {
	fs := flag.NewFlagSet("deponent-action", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	vals := map[string]*flagValue{}
	for _, s := range Inputs {
		v := &flagValue{isBoo: s.bool}
		vals[s.Name] = v
		fs.Var(v, s.Name, s.Usage)
	}
	fs.BoolVar(&sw.Demo, "demo", false, "")
	fs.BoolVar(&sw.Version, "version", false, "")
	fs.BoolVar(&sw.Help, "help", false, "")
	fs.BoolVar(&sw.Help, "h", false, "")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, nil, sw, ErrHelp
		}
		return nil, nil, sw, &InputError{Input: "flags", Msg: err.Error() + " (see --help)"}
	}
	if sw.Help {
		return nil, nil, sw, ErrHelp
	}
	if sw.Version {
		return nil, nil, sw, ErrVersion
	}
	if fs.NArg() > 0 {
		return nil, nil, sw, &InputError{Input: "flags", Msg: fmt.Sprintf("unexpected argument %q: every input is a --flag (see --help)", fs.Arg(0))}
	}
	raw = map[string]string{}
	explicit = map[string]bool{}
	for _, s := range Inputs {
		if v := vals[s.Name]; v.set {
			raw[s.Name], explicit[s.Name] = strings.TrimSpace(v.val), true
		} else if v, ok := inputValue(getenv, s.Name); ok {
			raw[s.Name], explicit[s.Name] = v, true
		}
	}
	return raw, explicit, sw, nil
}

func buildConfig(raw map[string]string, explicit map[string]bool, demo bool, getenv Getenv) (*Config, error) {
	return buildConfigFor(raw, explicit, demo, false, getenv)
}

// buildConfigFor is buildConfig for a mode: serve is the `mcp`
// subcommand, whose actions come from an MCP client on stdio.
func buildConfigFor(raw map[string]string, explicit map[string]bool, demo, serve bool, getenv Getenv) (*Config, error) {
	c := &Config{Demo: demo, Explicit: explicit, Serve: serve}
	get := func(name string) string {
		if v := raw[name]; v != "" {
			return v
		}
		return inputSpec(name).Default
	}
	var err error
	boolIn := func(name string) bool {
		if err != nil {
			return false
		}
		var b bool
		b, err = parseBool(name, get(name))
		return b
	}
	c.AllowUnjailed = boolIn(InAllowUnjailed)
	c.DryRun = boolIn(InDryRun)
	c.Canaries = boolIn(InCanaries)
	c.UploadArtifact = boolIn(InUploadArtifact)
	c.FailOnStepError = boolIn(InFailOnStepErr)
	c.Attest = boolIn(InAttest)
	if err != nil {
		return nil, err
	}
	c.Steps = raw[InSteps]
	c.PlanPath = raw[InPlan]
	c.PolicyPath = raw[InPolicy]
	c.VerifyCommand = raw[InVerifyCommand]
	c.Model = raw[InModel]
	c.Task = raw[InTask]
	c.ArtifactName = raw[InArtifactName]

	if c.Agent, err = parseAgentInputs(raw, explicit, getenv); err != nil {
		return nil, err
	}
	if err := checkSources(c, demo, serve); err != nil {
		return nil, err
	}

	c.Jail = strings.ToLower(get(InJail))
	switch c.Jail {
	case jail.NameAuto, jail.NameBwrap, jail.NameSeatbelt:
	case jail.NameNone:
		if !c.AllowUnjailed {
			return nil, inputErr(InJail, `is "none": commands would run gate-only, UNJAILED (no network, write or secret confinement); `+
				`set allow-unjailed: true to accept that explicitly (it is recorded in every entry), or use jail: auto`)
		}
	default:
		return nil, inputErr(InJail, "is %q: valid values are auto, bwrap, seatbelt, none", get(InJail))
	}

	switch ob := strings.ToLower(get(InOnBlock)); ob {
	case "fail":
	case "continue":
		c.OnBlockContinue = true
	default:
		return nil, inputErr(InOnBlock, "is %q: valid values are fail (a blocked step fails the run) and continue (blocks are recorded, the run may still pass)", get(InOnBlock))
	}

	c.Producer = get(InProducer)
	if !safeName.MatchString(c.Producer) {
		return nil, inputErr(InProducer, "is %q: use 1-128 of [A-Za-z0-9._-], starting with a letter or digit (it names a directory)", c.Producer)
	}
	if s := raw[InSessionID]; s != "" {
		if !safeName.MatchString(s) {
			return nil, inputErr(InSessionID, "is %q: use 1-128 of [A-Za-z0-9._-], starting with a letter or digit (it names files)", s)
		}
		c.SessionID = s
	} else {
		c.SessionID, c.SessionDefaulted = defaultSessionID(getenv, demo), true
	}
	if c.ArtifactName != "" && strings.ContainsAny(c.ArtifactName, "\"<>|*?\\/:\r\n") {
		return nil, inputErr(InArtifactName, `is %q: an artifact name may not contain " : < > | * ? \ / or line breaks`, c.ArtifactName)
	}

	c.ReceiptsDir = raw[InReceiptsDir]
	if hasControl(c.ReceiptsDir) {
		return nil, inputErr(InReceiptsDir, "contains a control character; give a plain directory path")
	}
	if c.Sandbox, err = resolveSandboxInput(raw[InSandbox], getenv); err != nil {
		return nil, err
	}
	if c.PlanPath != "" {
		if hasControl(c.PlanPath) {
			return nil, inputErr(InPlan, "contains a control character; give the path of a JSONL file")
		}
		if fi, err := os.Stat(c.PlanPath); err != nil {
			return nil, inputErr(InPlan, "cannot read plan file %q: %v (relative paths are resolved from %s)", c.PlanPath, unwrapPath(err), cwdOrDot())
		} else if fi.IsDir() {
			return nil, inputErr(InPlan, "%q is a directory; give the path of a JSONL file of tool calls", c.PlanPath)
		}
	}
	if c.PolicyPath != "" {
		if _, err := os.Stat(c.PolicyPath); err != nil {
			return nil, inputErr(InPolicy, "cannot read policy file %q: %v (relative paths are resolved from %s)", c.PolicyPath, unwrapPath(err), cwdOrDot())
		}
	}
	return c, nil
}

// parseBool accepts the spellings of a YAML 1.2 boolean that GitHub's
// toolkit accepts, and nothing else.
func parseBool(name, v string) (bool, error) {
	switch v {
	case "true", "True", "TRUE":
		return true, nil
	case "false", "False", "FALSE":
		return false, nil
	}
	return false, inputErr(name, "is %q: use true or false", v)
}

var safeName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// defaultSessionID is RUN_ID-RUN_ATTEMPT-JOB[-KEY] in Actions (sanitized;
// KEY is the job key of names.go, which tells matrix legs and reusable
// workflow callers apart), else a random local id. The job id is cut, never
// the run id, the attempt or the key, so that the id stays unique and
// leaves room for the -N suffix of a second use in the same job.
func defaultSessionID(getenv Getenv, demo bool) string {
	if getenv("GITHUB_RUN_ID") != "" {
		var head []string
		for _, k := range []string{"GITHUB_RUN_ID", "GITHUB_RUN_ATTEMPT"} {
			if v := getenv(k); v != "" {
				head = append(head, v)
			}
		}
		h := sanitizeName(strings.Join(head, "-"))
		key := jobKey(getenv)
		job := sanitizeName(getenv("GITHUB_JOB"))
		if room := maxDefaultSession - len(h) - len(key) - 2; len(job) > room {
			job = strings.TrimRight(job[:max(room, 0)], "._-")
		}
		s := h
		for _, p := range []string{job, key} {
			if p != "" {
				s += "-" + p
			}
		}
		if s = sanitizeName(s); s != "" {
			return s
		}
	}
	prefix := "local-"
	if demo {
		prefix = "demo-"
	}
	return prefix + randomHex(6)
}

// maxDefaultSession leaves a derived session id room for a "-N" suffix
// within the 128 characters of a session id.
const maxDefaultSession = 110

// sanitizeName maps s into [A-Za-z0-9._-], starting with a letter or digit,
// at most 128 characters; "" when nothing usable is left.
func sanitizeName(s string) string {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '_', c == '-':
			b = append(b, c)
		default:
			b = append(b, '-')
		}
	}
	out := strings.TrimLeft(string(b), "._-")
	if len(out) > 128 {
		out = out[:128]
	}
	return out
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic("action: no randomness: " + err.Error())
	}
	return hex.EncodeToString(b)
}

func hasControl(s string) bool {
	for _, r := range s {
		if unicode.IsControl(r) {
			return true
		}
	}
	return false
}

// resolveSandboxInput returns the sandbox: the input, else GITHUB_WORKSPACE,
// else the current directory; absolute and symlink-resolved.
func resolveSandboxInput(in string, getenv Getenv) (string, error) {
	from := "the input"
	p := in
	if p == "" {
		if p = getenv("GITHUB_WORKSPACE"); p != "" {
			from = "GITHUB_WORKSPACE"
		} else {
			p, from = cwdOrDot(), "the current directory"
		}
	}
	if hasControl(p) {
		return "", inputErr(InSandbox, "%s contains a control character", from)
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", inputErr(InSandbox, "%q (%s): %v", p, from, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", inputErr(InSandbox, "%q (%s) does not exist or cannot be resolved: %v; give an existing directory", p, from, unwrapPath(err))
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", inputErr(InSandbox, "%q (%s): %v", p, from, unwrapPath(err))
	}
	if !fi.IsDir() {
		return "", inputErr(InSandbox, "%q (%s) is not a directory", p, from)
	}
	if real == string(filepath.Separator) {
		return "", inputErr(InSandbox, "is the filesystem root; give the project directory the agent may change")
	}
	return real, nil
}

func cwdOrDot() string {
	if d, err := os.Getwd(); err == nil {
		return d
	}
	return "."
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// resolveExisting resolves symlinks in the longest existing prefix of p and
// appends the rest: where p is, or would be once created.
func resolveExisting(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	rest := ""
	cur := abs
	for {
		if real, err := filepath.EvalSymlinks(cur); err == nil {
			if rest == "" {
				return real, nil
			}
			return filepath.Join(real, rest), nil
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return abs, nil
		}
		if rest == "" {
			rest = filepath.Base(cur)
		} else {
			rest = filepath.Join(filepath.Base(cur), rest)
		}
		cur = parent
	}
}

// within reports whether p is root or lies below it. Paths are compared
// case-insensitively where the usual filesystem is (macOS, Windows).
func within(p, root string) bool {
	if runtime.GOOS == "darwin" || runtime.GOOS == "windows" {
		p, root = strings.ToLower(p), strings.ToLower(root)
	}
	if p == root {
		return true
	}
	sep := string(filepath.Separator)
	return strings.HasPrefix(p, strings.TrimSuffix(root, sep)+sep)
}

// checkReceiptsDir refuses a receipts directory that overlaps the sandbox:
// inside it, the agent could rewrite its own testimony; around it, the
// artifact would carry whatever the agent wrote.
func checkReceiptsDir(dir, sandbox string) error {
	real, err := resolveExisting(dir)
	if err != nil {
		return inputErr(InReceiptsDir, "%q: %v", dir, err)
	}
	if within(real, sandbox) {
		return inputErr(InReceiptsDir, "%q resolves to %s, inside the sandbox %s: the agent could rewrite its own testimony; "+
			"put receipts outside the sandbox (e.g. $RUNNER_TEMP/deponent-receipts)", dir, real, sandbox)
	}
	if within(sandbox, real) {
		return inputErr(InReceiptsDir, "%q resolves to %s, which contains the sandbox %s: the uploaded receipts would carry whatever the agent wrote; "+
			"use a directory beside the sandbox, not around it", dir, real, sandbox)
	}
	return nil
}

package agent

import (
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Preset names a supported agent CLI.
type Preset string

// The presets.
const (
	Claude Preset = "claude"
	Codex  Preset = "codex"
)

// Presets lists every preset, in a stable order.
var Presets = []Preset{Claude, Codex}

// ParsePreset returns the preset named s, or an error naming the choices.
func ParsePreset(s string) (Preset, error) {
	for _, p := range Presets {
		if string(p) == s {
			return p, nil
		}
	}
	return "", fmt.Errorf("agent: unknown preset %q (use %q or %q)", s, Claude, Codex)
}

// The pinned CLI releases: the versions the presets were tested against and
// the ones installed when a preset's CLI is not on PATH.
const (
	ClaudePackage = "@anthropic-ai/claude-code"
	ClaudeVersion = "2.1.332"
	CodexPackage  = "@openai/codex"
	CodexVersion  = "0.171.0"
)

// Command is the executable name of the preset's CLI.
func (p Preset) Command() string { return string(p) }

// Package is the npm package of the preset's CLI.
func (p Preset) Package() string {
	if p == Codex {
		return CodexPackage
	}
	return ClaudePackage
}

// DefaultVersion is the pinned version of the preset's CLI.
func (p Preset) DefaultVersion() string {
	if p == Codex {
		return CodexVersion
	}
	return ClaudeVersion
}

// ServerName is the name of Deponent's MCP server in every generated
// configuration: its tools reach the model as mcp__deponent__NAME.
const ServerName = "deponent"

// MCPConfigEnv names the variable that carries the MCP config path to the
// agent (a custom agent-command reads it; the presets get it too).
const MCPConfigEnv = "DEPONENT_MCP_CONFIG"

// DefaultToolTimeout is how long a CLI waits for one MCP tool call when
// Options.ToolTimeout is zero. Deponent bounds each call itself; this only
// has to be longer than that bound (Codex's own default is 60 s, shorter
// than a jailed test run may take).
const DefaultToolTimeout = 10 * time.Minute

// MaxTaskBytes bounds the task: it travels as one argv string, and Linux
// refuses a single argument longer than 128 KiB.
const MaxTaskBytes = 100 << 10

// DefaultOpenAIBaseURL is Codex's provider base URL when agent-env has no
// OPENAI_BASE_URL.
const DefaultOpenAIBaseURL = "https://api.openai.com/v1"

// Options is everything a preset needs. Paths are absolute.
type Options struct {
	// Task is the prompt; it may hold anything but NUL, up to MaxTaskBytes.
	Task string
	// MCPConfig is where Build's {"mcpServers": ...} JSON is written; it is
	// passed to Claude Code (--mcp-config) and to every agent as
	// $DEPONENT_MCP_CONFIG.
	MCPConfig string
	// Server is how the CLI starts Deponent's MCP server (in the agent
	// jail: the relay to the governed session). Command must be absolute.
	Server MCPServer
	// Home is the agent's private, empty HOME; Codex's CODEX_HOME is
	// Home/.codex.
	Home string
	// TmpDir is the agent's private TMPDIR.
	TmpDir string
	// PATH is the agent's PATH: absolute directories outside the
	// workspace. Codex's launcher needs node on it.
	PATH string
	// AgentEnv holds the values of the agent-env variables, by name.
	AgentEnv map[string]string
	// Model overrides the CLI's default model; "" keeps it.
	Model string
	// ToolTimeout bounds one MCP tool call in the CLI; 0 means
	// DefaultToolTimeout.
	ToolTimeout time.Duration
}

// Invocation is how to start one agent session.
type Invocation struct {
	Preset Preset
	// Argv[0] is Preset.Command(); the caller resolves it on Options.PATH.
	Argv []string
	// Env is the complete environment, sorted KEY=VALUE.
	Env []string
	// Files must be written (WriteFiles) before the CLI starts.
	Files []File
}

// claudeQuiet is the environment the Claude Code preset sets: MCP tools in
// the first request (no tool-search indirection) and no traffic but the
// model API.
var claudeQuiet = map[string]string{
	"ENABLE_TOOL_SEARCH":                       "false",
	"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
	"DISABLE_AUTOUPDATER":                      "1",
	"DISABLE_TELEMETRY":                        "1",
	"DISABLE_ERROR_REPORTING":                  "1",
}

// reservedEnv are names agent-env may not set: the preset's own, those that
// would move the CLI's configuration out of the private HOME, and those that
// load code into the CLI or its launcher.
var reservedEnv = map[string]string{
	"HOME": "set by the preset", "TMPDIR": "set by the preset", "PATH": "set by the preset",
	MCPConfigEnv:        "set by the preset",
	"MCP_TOOL_TIMEOUT":  "set by the preset",
	"CODEX_HOME":        "would move Codex's configuration",
	"CLAUDE_CONFIG_DIR": "would move Claude Code's settings",
	"XDG_CONFIG_HOME":   "would move configuration",
	"NODE_OPTIONS":      "loads code into node",
	"NODE_PATH":         "changes node's module resolution",
	"BASH_ENV":          "runs code in shells",
	"ENV":               "runs code in shells",
}

var reservedPrefixes = map[string]string{
	"LD_":   "loads code into the process",
	"DYLD_": "loads code into the process",
}

func init() {
	for k := range claudeQuiet {
		reservedEnv[k] = "set by the preset"
	}
}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// checkAgentEnv validates agent-env names and values.
func checkAgentEnv(env map[string]string) error {
	for k, v := range env {
		if !envName.MatchString(k) {
			return fmt.Errorf("agent: agent-env name %q is not a valid variable name", k)
		}
		if why, ok := reservedEnv[k]; ok {
			return fmt.Errorf("agent: agent-env may not set %s: %s; remove it from agent-env", k, why)
		}
		for p, why := range reservedPrefixes {
			if strings.HasPrefix(k, p) {
				return fmt.Errorf("agent: agent-env may not set %s: %s*: %s; remove it from agent-env", k, p, why)
			}
		}
		if strings.ContainsRune(v, 0) {
			return fmt.Errorf("agent: agent-env %s holds a NUL byte", k)
		}
	}
	return nil
}

func checkAbs(what, p string) error {
	if p == "" {
		return fmt.Errorf("agent: %s is empty", what)
	}
	if !filepath.IsAbs(p) || filepath.Clean(p) != p {
		return fmt.Errorf("agent: %s %q must be an absolute, clean path", what, p)
	}
	if strings.ContainsRune(p, 0) {
		return fmt.Errorf("agent: %s holds a NUL byte", what)
	}
	return nil
}

// checkBaseURL accepts an http(s) URL with a host and nothing that cannot be
// a base (no query, no fragment, no credentials).
func checkBaseURL(name, s string) error {
	if !utf8.ValidString(s) {
		return fmt.Errorf("agent: agent-env %s is not valid UTF-8", name)
	}
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("agent: agent-env %s %q is not a URL: %v", name, s, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("agent: agent-env %s %q must be an http:// or https:// URL with a host", name, s)
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("agent: agent-env %s %q must not carry credentials, a query or a fragment", name, s)
	}
	return nil
}

func (o Options) validate(p Preset) error {
	if _, err := ParsePreset(string(p)); err != nil {
		return err
	}
	var errs []error
	if strings.TrimSpace(o.Task) == "" {
		errs = append(errs, errors.New("agent: the task is empty"))
	}
	if len(o.Task) > MaxTaskBytes {
		errs = append(errs, fmt.Errorf("agent: the task is %d bytes; at most %d fit in one argument", len(o.Task), MaxTaskBytes))
	}
	if strings.ContainsRune(o.Task, 0) {
		errs = append(errs, errors.New("agent: the task holds a NUL byte"))
	}
	if p == Codex && o.Task == "-" {
		errs = append(errs, errors.New(`agent: the task "-" would make codex read its prompt from stdin`))
	}
	for _, c := range []struct{ what, path string }{
		{"MCP config path", o.MCPConfig}, {"agent HOME", o.Home}, {"agent TMPDIR", o.TmpDir},
	} {
		if err := checkAbs(c.what, c.path); err != nil {
			errs = append(errs, err)
		}
	}
	if o.PATH == "" {
		errs = append(errs, errors.New("agent: PATH is empty"))
	}
	for _, d := range strings.Split(o.PATH, string(filepath.ListSeparator)) {
		if err := checkAbs("PATH entry", d); err != nil {
			errs = append(errs, err)
		}
	}
	if err := o.Server.validate(); err != nil {
		errs = append(errs, err)
	}
	if err := checkAgentEnv(o.AgentEnv); err != nil {
		errs = append(errs, err)
	}
	if strings.ContainsRune(o.Model, 0) || strings.HasPrefix(o.Model, "-") || !utf8.ValidString(o.Model) {
		errs = append(errs, fmt.Errorf("agent: model %q is not a model name", o.Model))
	}
	if o.ToolTimeout < 0 {
		errs = append(errs, fmt.Errorf("agent: negative tool timeout %v", o.ToolTimeout))
	}
	for _, name := range []string{"ANTHROPIC_BASE_URL", "OPENAI_BASE_URL"} {
		if v, ok := o.AgentEnv[name]; ok {
			if err := checkBaseURL(name, v); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if p == Codex {
		if _, ok := o.AgentEnv["OPENAI_API_KEY"]; !ok {
			errs = append(errs, errors.New("agent: the codex preset reads the model API key from OPENAI_API_KEY; add it to agent-env"))
		}
	}
	return errors.Join(errs...)
}

func (o Options) toolTimeout() time.Duration {
	if o.ToolTimeout == 0 {
		return DefaultToolTimeout
	}
	return o.ToolTimeout
}

// CodexHome is Codex's configuration directory for the given agent HOME.
func CodexHome(home string) string { return filepath.Join(home, ".codex") }

// Build returns the Invocation of preset p for o, or every problem with o.
func Build(p Preset, o Options) (*Invocation, error) {
	if err := o.validate(p); err != nil {
		return nil, err
	}
	cfg, err := MCPConfigJSON(map[string]MCPServer{ServerName: o.Server})
	if err != nil {
		return nil, err
	}
	env := map[string]string{}
	for k, v := range o.AgentEnv {
		env[k] = v
	}
	env["HOME"] = o.Home
	env["TMPDIR"] = o.TmpDir
	env["PATH"] = o.PATH
	env[MCPConfigEnv] = o.MCPConfig
	inv := &Invocation{Preset: p, Files: []File{{Path: o.MCPConfig, Data: cfg}}}

	switch p {
	case Claude:
		for k, v := range claudeQuiet {
			env[k] = v
		}
		env["MCP_TOOL_TIMEOUT"] = strconv.FormatInt(o.toolTimeout().Milliseconds(), 10)
		inv.Argv = []string{"claude", "-p",
			"--output-format", "stream-json", "--verbose",
			"--mcp-config", o.MCPConfig, "--strict-mcp-config",
			"--tools", "",
			"--allowedTools", "mcp__" + ServerName + "__*",
			"--setting-sources", "user",
		}
		if o.Model != "" {
			inv.Argv = append(inv.Argv, "--model", o.Model)
		}
		inv.Argv = append(inv.Argv, "--", o.Task)
	case Codex:
		home := CodexHome(o.Home)
		env["CODEX_HOME"] = home
		toml, err := codexConfig(o)
		if err != nil {
			return nil, err
		}
		inv.Files = append(inv.Files, File{Path: filepath.Join(home, "config.toml"), Data: toml})
		inv.Argv = []string{"codex", "exec", "--json", "--strict-config", "--skip-git-repo-check", "--ephemeral", "--", o.Task}
	}
	for k, v := range env {
		inv.Env = append(inv.Env, k+"="+v)
	}
	sort.Strings(inv.Env)
	return inv, nil
}

// CheckEnv validates agent-env names and values as Build does: a valid
// name, none the preset sets or that would move the CLI's configuration or
// load code into it (see reservedEnv), no NUL in a value. The action checks
// agent-env with it before anything runs, for presets and custom commands
// alike.
func CheckEnv(env map[string]string) error { return checkAgentEnv(env) }

package action

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/deponent-dev/deponent-action/pkg/agent"
)

// The kinds of live agent (evidence.Governance.Agent).
const (
	AgentClaude  = "claude"
	AgentCodex   = "codex"
	AgentCommand = "command"
)

// Bounds of the live agent's limits.
const (
	minAgentTimeout = time.Second
	maxAgentTimeout = 6 * time.Hour // GitHub's job limit
	maxToolCallsCap = 100000
)

// AgentConfig is the live agent a run governs.
type AgentConfig struct {
	// Kind is "" (no live agent: steps, a plan, or the mcp subcommand),
	// AgentClaude, AgentCodex or AgentCommand.
	Kind string
	// Preset is the preset of a claude or codex run.
	Preset agent.Preset
	// Command is agent-command's command line.
	Command string
	// EnvNames are agent-env's names, in order, without duplicates.
	EnvNames []string
	// Version is the CLI version a preset installs when the CLI is not on
	// PATH; VersionExplicit when agent-version was given.
	Version         string
	VersionExplicit bool
	Timeout         time.Duration
	MaxToolCalls    int
	// AllowUnjailed runs the agent process without the agent jail when
	// none is available (allow-unjailed-agent).
	AllowUnjailed bool
}

// Live reports whether a live agent runs.
func (a AgentConfig) Live() bool { return a.Kind != "" }

var (
	versionPattern = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$`)
	envNamePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// refusedAgentEnv are runner variables agent-env may not pass: the job's
// token and the runner's own credentials and channels, and the action's
// inputs. The agent jail exists to keep them from the agent.
func refusedAgentEnv(name string) string {
	up := strings.ToUpper(name)
	switch {
	case up == "GITHUB_TOKEN" || up == "GH_TOKEN":
		return "is the job's GitHub token; the agent acts only through Deponent's tools and never gets it"
	case strings.HasPrefix(up, "ACTIONS_"):
		return "belongs to the runner (cache, artifact, OIDC token endpoints)"
	case strings.HasPrefix(up, "INPUT_"):
		return "is an input of this action, not the agent's"
	case up == "DEPONENT_MCP_CONFIG" || up == "DEPONENT_JAIL_RUN" || up == sessionFDEnv || up == sessionDirEnv:
		return "is set by Deponent for the agent"
	}
	return ""
}

// parseAgentInputs reads agent, agent-command, agent-env, agent-version,
// agent-timeout, max-tool-calls and allow-unjailed-agent.
func parseAgentInputs(raw map[string]string, explicit map[string]bool, getenv Getenv) (AgentConfig, error) {
	var a AgentConfig
	get := func(name string) string {
		if v := raw[name]; v != "" {
			return v
		}
		return inputSpec(name).Default
	}
	var err error
	if a.AllowUnjailed, err = parseBool(InAllowUnjailedAgent, get(InAllowUnjailedAgent)); err != nil {
		return a, err
	}
	preset := strings.TrimSpace(raw[InAgent])
	a.Command = raw[InAgentCommand]
	switch {
	case preset != "" && a.Command != "":
		return a, inputErr(InAgentCommand, "is set together with agent %q; give one: a preset (agent: claude or codex) or your own command (agent-command)", preset)
	case preset != "":
		p, perr := agent.ParsePreset(strings.ToLower(preset))
		if perr != nil {
			return a, inputErr(InAgent, "is %q: valid values are claude and codex (or leave it empty and set agent-command)", preset)
		}
		a.Kind, a.Preset = string(p), p
		a.Version = p.DefaultVersion()
	case a.Command != "":
		if strings.ContainsRune(a.Command, 0) || strings.TrimSpace(a.Command) == "" {
			return a, inputErr(InAgentCommand, "is empty or holds a NUL byte; give the command line that starts your agent")
		}
		a.Kind = AgentCommand
	}
	if v := raw[InAgentVersion]; v != "" {
		switch {
		case a.Kind == AgentCommand:
			return a, inputErr(InAgentVersion, "is set with agent-command: Deponent installs only the presets' CLIs; install your agent before this step")
		case !versionPattern.MatchString(v):
			return a, inputErr(InAgentVersion, "is %q: give an exact release such as %s (no ranges or tags: the version is recorded)", v, agent.ClaudeVersion)
		}
		a.Version, a.VersionExplicit = v, true
	}
	t := get(InAgentTimeout)
	d, derr := time.ParseDuration(t)
	if derr != nil || d < minAgentTimeout || d > maxAgentTimeout {
		return a, inputErr(InAgentTimeout, "is %q: give a duration between 1s and 6h, e.g. 30m or 1h30m", t)
	}
	a.Timeout = d
	m := get(InMaxToolCalls)
	n, nerr := strconv.Atoi(m)
	if nerr != nil || n < 1 || n > maxToolCallsCap {
		return a, inputErr(InMaxToolCalls, "is %q: give a whole number from 1 to %d", m, maxToolCallsCap)
	}
	a.MaxToolCalls = n
	seen := map[string]bool{}
	for _, name := range strings.FieldsFunc(raw[InAgentEnv], func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' || r == '\r' }) {
		if seen[name] {
			continue
		}
		seen[name] = true
		switch {
		case !envNamePattern.MatchString(name):
			return a, inputErr(InAgentEnv, "names %q, which is not a variable name; list names only (e.g. ANTHROPIC_API_KEY), never values", name)
		case refusedAgentEnv(name) != "":
			return a, inputErr(InAgentEnv, "names %s, which %s; remove it", name, refusedAgentEnv(name))
		case agent.CheckEnv(map[string]string{name: ""}) != nil:
			return a, inputErr(InAgentEnv, "%s", strings.TrimPrefix(agent.CheckEnv(map[string]string{name: ""}).Error(), "agent: "))
		case getenv(name) == "":
			return a, inputErr(InAgentEnv, "names %s, which is not set (or empty) in this step's environment; set it, e.g. env: %s: ${{ secrets.%s }}", name, name, name)
		}
		a.EnvNames = append(a.EnvNames, name)
	}
	values := map[string]string{}
	for _, name := range a.EnvNames {
		values[name] = getenv(name)
	}
	if err := agent.CheckEnv(values); err != nil {
		return a, inputErr(InAgentEnv, "%s", strings.TrimPrefix(err.Error(), "agent: "))
	}
	if a.Preset == agent.Codex && !slices.Contains(a.EnvNames, "OPENAI_API_KEY") {
		return a, inputErr(InAgentEnv, "must name OPENAI_API_KEY for agent codex: the preset's provider reads the model API key from it (env: OPENAI_API_KEY: ${{ secrets.OPENAI_API_KEY }})")
	}
	if !a.Live() {
		for _, in := range []string{InAgentEnv, InAgentVersion, InAgentTimeout, InAllowUnjailedAgent} {
			if explicit[in] {
				return a, inputErr(in, "is set, but no live agent is: set agent (claude or codex) or agent-command, or drop %s", in)
			}
		}
	}
	return a, nil
}

// checkSources insists on exactly one source of actions: steps, a plan, a
// live agent, the demo's plan, or (the mcp subcommand) an MCP client.
func checkSources(c *Config, demo, serve bool) error {
	live := c.Agent.Live()
	given := 0
	for _, b := range []bool{c.Steps != "", c.PlanPath != "", live} {
		if b {
			given++
		}
	}
	switch {
	case serve && given > 0:
		return inputErr("steps/plan/agent", "the mcp subcommand serves the MCP client on its stdin and stdout; drop steps, plan, agent and agent-command")
	case serve:
		return nil
	case demo && given > 0:
		return inputErr("steps/plan", "--demo runs its own embedded plan; drop steps, plan and agent, or drop --demo")
	case demo:
		return nil
	case c.Steps != "" && c.PlanPath != "":
		return inputErr("steps/plan", `both are set; give exactly one: "steps" (shell lines) or "plan" (a JSONL file of tool calls)`)
	case given > 1:
		return inputErr("steps/plan/agent", `more than one is set; give exactly one: "steps" (shell lines), "plan" (a JSONL file of tool calls), or a live agent ("agent" or "agent-command")`)
	case given == 0:
		return inputErr("steps/plan", `neither is set; give exactly one: "steps" (shell lines, one run_cmd per line), "plan" (a JSONL file of tool calls), or a live agent ("agent" or "agent-command"); or run --demo`)
	case live && strings.TrimSpace(c.Task) == "":
		return inputErr(InTask, "is empty, and with a live agent it is the agent's prompt: say what the agent should do")
	case live && len(c.Task) > agent.MaxTaskBytes:
		return inputErr(InTask, "is %d bytes; a prompt is passed as one argument, at most %d bytes", len(c.Task), agent.MaxTaskBytes)
	}
	return nil
}

// describe is the agent as the log and the summary name it.
func (a AgentConfig) describe() string {
	switch a.Kind {
	case AgentCommand:
		return fmt.Sprintf("command %q", a.Command)
	case "":
		return "none"
	}
	return fmt.Sprintf("%s (%s@%s unless on PATH)", a.Kind, a.Preset.Package(), a.Version)
}

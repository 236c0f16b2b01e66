package agent

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func baseOptions() Options {
	return Options{
		Task:      "fix the failing test",
		MCPConfig: "/run/dep/mcp.json",
		Server:    MCPServer{Command: "/opt/deponent/deponent-action", Args: []string{"mcp", "--connect", "/run/dep/s/mcp.sock"}},
		Home:      "/run/dep/home",
		TmpDir:    "/run/dep/tmp",
		PATH:      "/opt/agents/bin:/usr/bin:/bin",
		AgentEnv:  map[string]string{"ANTHROPIC_API_KEY": "sk-a", "OPENAI_API_KEY": "sk-o"},
	}
}

func envMap(t *testing.T, env []string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, kv := range env {
		k, v, ok := strings.Cut(kv, "=")
		require.True(t, ok, kv)
		_, dup := m[k]
		require.False(t, dup, "duplicate %s", k)
		m[k] = v
	}
	return m
}

func TestBuildClaude(t *testing.T) {
	o := baseOptions()
	o.Model = "claude-x"
	inv, err := Build(Claude, o)
	require.NoError(t, err)
	assert.Equal(t, []string{"claude", "-p",
		"--output-format", "stream-json", "--verbose",
		"--mcp-config", "/run/dep/mcp.json", "--strict-mcp-config",
		"--tools", "",
		"--allowedTools", "mcp__deponent__*",
		"--setting-sources", "user",
		"--model", "claude-x",
		"--", "fix the failing test"}, inv.Argv)
	assert.Equal(t, map[string]string{
		"HOME": "/run/dep/home", "TMPDIR": "/run/dep/tmp", "PATH": "/opt/agents/bin:/usr/bin:/bin",
		"DEPONENT_MCP_CONFIG": "/run/dep/mcp.json",
		"ENABLE_TOOL_SEARCH":  "false", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
		"DISABLE_AUTOUPDATER": "1", "DISABLE_TELEMETRY": "1", "DISABLE_ERROR_REPORTING": "1",
		"MCP_TOOL_TIMEOUT":  "600000",
		"ANTHROPIC_API_KEY": "sk-a", "OPENAI_API_KEY": "sk-o",
	}, envMap(t, inv.Env))
	assert.IsIncreasing(t, inv.Env, "sorted")
	require.Len(t, inv.Files, 1)
	assert.Equal(t, "/run/dep/mcp.json", inv.Files[0].Path)
	assert.JSONEq(t, `{"mcpServers":{"deponent":{"type":"stdio","command":"/opt/deponent/deponent-action","args":["mcp","--connect","/run/dep/s/mcp.sock"]}}}`, string(inv.Files[0].Data))
}

func TestBuildCodex(t *testing.T) {
	o := baseOptions()
	o.AgentEnv["OPENAI_BASE_URL"] = "https://gateway.example/v1"
	o.Server.Env = map[string]string{"B": "2", "A": "x\"y"}
	o.ToolTimeout = 90 * time.Second
	inv, err := Build(Codex, o)
	require.NoError(t, err)
	assert.Equal(t, []string{"codex", "exec", "--json", "--strict-config", "--skip-git-repo-check", "--ephemeral", "--", "fix the failing test"}, inv.Argv)
	env := envMap(t, inv.Env)
	assert.Equal(t, "/run/dep/home/.codex", env["CODEX_HOME"])
	assert.Equal(t, "https://gateway.example/v1", env["OPENAI_BASE_URL"])
	assert.NotContains(t, env, "ENABLE_TOOL_SEARCH", "Claude's variables are Claude's")
	require.Len(t, inv.Files, 2)
	assert.Equal(t, "/run/dep/home/.codex/config.toml", inv.Files[1].Path)
	toml := string(inv.Files[1].Data)
	for _, want := range []string{
		"model_provider = \"deponent\"\n",
		"approval_policy = \"never\"\n",
		"sandbox_mode = \"read-only\"\n",
		"web_search = \"disabled\"\n",
		"[model_providers.deponent]\nname = \"deponent\"\nbase_url = \"https://gateway.example/v1\"\nwire_api = \"responses\"\nenv_key = \"OPENAI_API_KEY\"\n",
		"[analytics]\nenabled = false\n",
		"[agents]\nenabled = false\n",
		"[features.code_mode]\ndirect_only_tool_namespaces = [\"mcp__deponent\"]\n",
		"[mcp_servers.deponent]\ncommand = \"/opt/deponent/deponent-action\"\nargs = [\"mcp\", \"--connect\", \"/run/dep/s/mcp.sock\"]\ndefault_tools_approval_mode = \"approve\"\ntool_timeout_sec = 90\n",
		"[mcp_servers.deponent.env]\n\"A\" = \"x\\\"y\"\n\"B\" = \"2\"\n",
	} {
		assert.Contains(t, toml, want)
	}
	for _, f := range codexFeatures {
		assert.Contains(t, toml, "\n"+f+" = false\n")
	}
	assert.NotContains(t, toml, "model = ", "no model unless asked")
	// Root keys come before the first table, or TOML puts them in it.
	firstTable := strings.Index(toml, "\n[")
	for _, k := range []string{"model_provider", "approval_policy", "sandbox_mode", "web_search"} {
		assert.Less(t, strings.Index(toml, "\n"+k+" = "), firstTable, k)
	}

	o.Model = "gpt-x"
	delete(o.AgentEnv, "OPENAI_BASE_URL")
	inv, err = Build(Codex, o)
	require.NoError(t, err)
	toml = string(inv.Files[1].Data)
	assert.Contains(t, toml, "\nmodel = \"gpt-x\"\n")
	assert.Less(t, strings.Index(toml, "\nmodel = "), strings.Index(toml, "\n["))
	assert.Contains(t, toml, "base_url = \""+DefaultOpenAIBaseURL+"\"\n")
}

func TestBuildKeepsFlagLikeTasksAfterDoubleDash(t *testing.T) {
	for _, p := range Presets {
		o := baseOptions()
		o.Task = "--dangerously-skip-permissions"
		inv, err := Build(p, o)
		require.NoError(t, err)
		n := len(inv.Argv)
		assert.Equal(t, []string{"--", o.Task}, inv.Argv[n-2:])
		assert.Equal(t, 1, strings.Count(strings.Join(inv.Argv, "\x00"), "\x00--\x00"), "one separator")
	}
}

func TestBuildRefuses(t *testing.T) {
	for name, tc := range map[string]struct {
		preset Preset
		mut    func(*Options)
		want   string
	}{
		"unknown preset":       {"gemini", func(*Options) {}, `unknown preset "gemini"`},
		"empty task":           {Claude, func(o *Options) { o.Task = " \n" }, "task is empty"},
		"huge task":            {Claude, func(o *Options) { o.Task = strings.Repeat("x", MaxTaskBytes+1) }, "at most"},
		"NUL task":             {Claude, func(o *Options) { o.Task = "a\x00b" }, "NUL"},
		"stdin task":           {Codex, func(o *Options) { o.Task = "-" }, "read its prompt from stdin"},
		"relative home":        {Claude, func(o *Options) { o.Home = "home" }, "agent HOME"},
		"unclean tmp":          {Claude, func(o *Options) { o.TmpDir = "/run/../tmp" }, "agent TMPDIR"},
		"no config path":       {Claude, func(o *Options) { o.MCPConfig = "" }, "MCP config path is empty"},
		"empty PATH":           {Claude, func(o *Options) { o.PATH = "" }, "PATH is empty"},
		"relative PATH entry":  {Claude, func(o *Options) { o.PATH = "/usr/bin:node_modules/.bin" }, "PATH entry"},
		"empty PATH entry":     {Claude, func(o *Options) { o.PATH = "/usr/bin::/bin" }, "PATH entry is empty"},
		"relative server":      {Claude, func(o *Options) { o.Server.Command = "deponent-action" }, "MCP server command"},
		"NUL server arg":       {Claude, func(o *Options) { o.Server.Args = []string{"a\x00"} }, "argument 0"},
		"bad server env name":  {Claude, func(o *Options) { o.Server.Env = map[string]string{"A-B": "x"} }, "A-B"},
		"agent-env HOME":       {Claude, func(o *Options) { o.AgentEnv["HOME"] = "/x" }, "may not set HOME"},
		"agent-env tool srch":  {Claude, func(o *Options) { o.AgentEnv["ENABLE_TOOL_SEARCH"] = "true" }, "may not set ENABLE_TOOL_SEARCH"},
		"agent-env config dir": {Claude, func(o *Options) { o.AgentEnv["CLAUDE_CONFIG_DIR"] = "/ws/.claude" }, "would move Claude Code's settings"},
		"agent-env codex home": {Codex, func(o *Options) { o.AgentEnv["CODEX_HOME"] = "/ws" }, "would move Codex's configuration"},
		"agent-env preload":    {Claude, func(o *Options) { o.AgentEnv["LD_PRELOAD"] = "/x.so" }, "LD_*"},
		"agent-env dyld":       {Claude, func(o *Options) { o.AgentEnv["DYLD_INSERT_LIBRARIES"] = "/x" }, "DYLD_*"},
		"agent-env node opts":  {Codex, func(o *Options) { o.AgentEnv["NODE_OPTIONS"] = "--require /x" }, "NODE_OPTIONS"},
		"agent-env bad name":   {Claude, func(o *Options) { o.AgentEnv["1X"] = "" }, "not a valid variable name"},
		"agent-env NUL":        {Claude, func(o *Options) { o.AgentEnv["X"] = "a\x00" }, "NUL"},
		"base url scheme":      {Claude, func(o *Options) { o.AgentEnv["ANTHROPIC_BASE_URL"] = "ftp://x" }, "http:// or https://"},
		"base url creds":       {Codex, func(o *Options) { o.AgentEnv["OPENAI_BASE_URL"] = "https://u:p@x/v1" }, "credentials"},
		"base url not utf8":    {Codex, func(o *Options) { o.AgentEnv["OPENAI_BASE_URL"] = "https://x/\xff" }, "UTF-8"},
		"codex without key":    {Codex, func(o *Options) { delete(o.AgentEnv, "OPENAI_API_KEY") }, "OPENAI_API_KEY"},
		"flag model":           {Claude, func(o *Options) { o.Model = "--tools=default" }, "not a model name"},
		"negative timeout":     {Claude, func(o *Options) { o.ToolTimeout = -time.Second }, "negative tool timeout"},
	} {
		t.Run(name, func(t *testing.T) {
			o := baseOptions()
			tc.mut(&o)
			inv, err := Build(tc.preset, o)
			require.Error(t, err)
			assert.Nil(t, inv)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestBuildReportsEveryProblem(t *testing.T) {
	o := baseOptions()
	o.Task = ""
	o.Home = "rel"
	_, err := Build(Claude, o)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "task is empty")
	assert.Contains(t, err.Error(), "agent HOME")
}

func TestClaudeWithoutKeyIsAllowed(t *testing.T) {
	// Claude Code has several ways to authenticate (API key, auth token,
	// Bedrock, Vertex); the preset does not guess which one is meant.
	o := baseOptions()
	o.AgentEnv = nil
	_, err := Build(Claude, o)
	assert.NoError(t, err)
}

func TestMCPConfigJSON(t *testing.T) {
	data, err := MCPConfigJSON(map[string]MCPServer{
		"deponent": {Command: "/bin/dep", Env: map[string]string{"K": "<v&>"}},
		"other":    {Command: "/bin/o", Args: []string{"a b"}},
	})
	require.NoError(t, err)
	assert.Equal(t, `{
  "mcpServers": {
    "deponent": {
      "type": "stdio",
      "command": "/bin/dep",
      "args": [],
      "env": {
        "K": "<v&>"
      }
    },
    "other": {
      "type": "stdio",
      "command": "/bin/o",
      "args": [
        "a b"
      ]
    }
  }
}
`, string(data))
	var back map[string]map[string]map[string]any
	require.NoError(t, json.Unmarshal(data, &back))

	for name, servers := range map[string]map[string]MCPServer{
		"none":          {},
		"bad name":      {"a b": {Command: "/x"}},
		"relative cmd":  {"x": {Command: "x"}},
		"bad env value": {"x": {Command: "/x", Env: map[string]string{"A": "\xff"}}},
	} {
		_, err := MCPConfigJSON(servers)
		assert.Error(t, err, name)
	}
}

func TestWriteFiles(t *testing.T) {
	dir := t.TempDir()
	o := baseOptions()
	o.MCPConfig = filepath.Join(dir, "cfg", "mcp.json")
	o.Home = filepath.Join(dir, "home")
	inv, err := Build(Codex, o)
	require.NoError(t, err)
	require.NoError(t, inv.WriteFiles())
	for _, f := range inv.Files {
		got, err := os.ReadFile(f.Path)
		require.NoError(t, err)
		assert.Equal(t, f.Data, got)
		fi, err := os.Stat(f.Path)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
		di, err := os.Stat(filepath.Dir(f.Path))
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o700), di.Mode().Perm())
	}
	// A second write never replaces what is there.
	err = inv.WriteFiles()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "already exists")
	got, _ := os.ReadFile(inv.Files[0].Path)
	assert.Equal(t, inv.Files[0].Data, got, "the existing file is untouched")

	require.Error(t, WriteMCPConfig(inv.Files[0].Path, map[string]MCPServer{"x": {Command: "/x"}}))
	require.Error(t, WriteMCPConfig("rel.json", map[string]MCPServer{"x": {Command: "/x"}}))
	p := filepath.Join(dir, "new.json")
	require.NoError(t, WriteMCPConfig(p, map[string]MCPServer{"x": {Command: "/x"}}))
	require.FileExists(t, p)
}

func TestTomlString(t *testing.T) {
	for in, want := range map[string]string{
		"plain":          `"plain"`,
		`q"b\`:           `"q\"b\\"`,
		"nl\nr\rt\t":     `"nl\nr\rt\t"`,
		"\x01\x1f\x7f":   `"\u0001\u001f\u007f"`,
		"ünï ✓":          `"ünï ✓"`,
		"\u2028 \u0085":  "\"\u2028 \u0085\"",
		"":               `""`,
		"$HOME `x` 'y'":  "\"$HOME `x` 'y'\"",
		"[table]\nk = 1": `"[table]\nk = 1"`,
	} {
		assert.Equal(t, want, tomlString(in), "%q", in)
	}
	// Whatever goes in, a basic string never spans a line or ends early.
	re := regexp.MustCompile(`^"([^"\\\x00-\x1f\x7f]|\\["\\nrt]|\\u[0-9a-f]{4})*"$`)
	for _, in := range []string{"a\"\"\"b", "\\\"", "x\x00y", "\"\n[mcp_servers.evil]\ncommand = \"/bin/sh\""} {
		assert.Regexp(t, re, tomlString(in), "%q", in)
	}
}

func TestPresetData(t *testing.T) {
	for _, p := range Presets {
		got, err := ParsePreset(string(p))
		require.NoError(t, err)
		assert.Equal(t, p, got)
		assert.Equal(t, []string{string(p), "--version"}, p.VersionArgv())
	}
	assert.Equal(t, "@anthropic-ai/claude-code", Claude.Package())
	assert.Equal(t, "@openai/codex", Codex.Package())
	assert.Equal(t, ClaudeVersion, Claude.DefaultVersion())
	assert.Equal(t, CodexVersion, Codex.DefaultVersion())
	_, err := ParsePreset("")
	assert.Error(t, err)
}

// Package agent configures the real agent CLIs (Claude Code, Codex) so that
// their only tools are Deponent's governed MCP tools, and reads back what
// they say they did.
//
// It is data and pure functions: Build turns a preset and Options (the task,
// the MCP server entry, the private HOME/TMPDIR, the trusted PATH and the
// agent-env values) into an Invocation — argv, the complete environment and
// the files to write (the MCP config JSON, Codex's config.toml). It starts
// nothing and decides nothing about jails; the caller runs the Invocation in
// the agent jail with stdin empty (Codex appends piped stdin to the prompt).
//
// The presets are tested against the pinned releases (ClaudeVersion,
// CodexVersion) end to end, offline, against internal/fakemodel, in this
// package's e2e tests; each refusal below has a positive control there that
// shows the same request succeeding once the preset's setting is undone.
//
// # What a preset guarantees (pinned versions, tested)
//
//   - The model is offered the tools of the MCP server named ServerName,
//     directly, from the first request, and no built-in tool that runs
//     commands or writes files.
//     Claude Code: `--tools ""`, `--strict-mcp-config`, `--allowedTools
//     mcp__deponent__*` and ENABLE_TOOL_SEARCH=false; a call of Bash is
//     answered "No such tool available".
//     Codex: `[features] shell_tool = false` (and the rest of
//     codexFeatures), `[agents] enabled = false`, `sandbox_mode =
//     "read-only"`, and `[features.code_mode] direct_only_tool_namespaces =
//     ["mcp__deponent"]`, all checked by `--strict-config` (an unknown key
//     fails the run instead of being ignored). A call of exec_command is
//     answered "unsupported call". Codex's tool surface depends on the
//     model's entry in its bundled catalog: the pinned release's default
//     model runs in code mode, where a JavaScript `exec` tool nests
//     apply_patch (file edits), MCP resource reads and a clock — apply_patch
//     is refused by the read-only sandbox ("patch rejected: writing is
//     blocked by read-only sandbox"); without direct_only_tool_namespaces
//     Deponent's tools would be deferred behind a search, and without
//     `[agents] enabled = false` sub-agent tools would be offered. A model
//     the catalog does not know gets plain function tools. Both surfaces
//     are tested. Besides Deponent's tools Codex still offers, depending on
//     the surface: exec and wait (code mode), list_mcp_resources,
//     list_mcp_resource_templates, read_mcp_resource (Deponent's server is
//     the only one configured), request_user_input(_async) and
//     send_message_to_user_async (no user answers in exec mode), and sleep.
//   - The repository cannot reconfigure the CLI. Claude Code in -p mode
//     skips the workspace trust dialog and would load the repository's
//     .claude/settings.json — its hooks run commands, its "env" can point
//     ANTHROPIC_BASE_URL (and so the API key) anywhere. The preset adds
//     `--setting-sources user`, and HOME is the caller's private directory,
//     so only Deponent's (empty) user settings load (tested; the issue's
//     bare preset is the control that runs the hook and follows the
//     endpoint). Codex skips an untrusted project's .codex/config.toml,
//     whose MCP servers would be commands it runs (tested; `exec --trust`
//     is the control). CLAUDE.md, AGENTS.md, skills and agent definitions
//     in the repository are still read: they are text for the model, not
//     tools or configuration.
//   - A task that looks like a flag stays the task: it follows "--"
//     (tested with a task starting with "--").
//   - The environment is built only from Options: HOME, TMPDIR, PATH, the
//     preset's quiet-mode variables, DEPONENT_MCP_CONFIG and the agent-env
//     values. agent-env may not set a variable the preset sets, nor one that
//     would move the CLI's configuration (CLAUDE_CONFIG_DIR, CODEX_HOME,
//     XDG_CONFIG_HOME) or load code into it (LD_*, DYLD_*, NODE_OPTIONS,
//     NODE_PATH): see reservedEnv. Every PATH entry must be absolute, so no
//     entry resolves inside the workspace. (Tested: a variable of the
//     caller's environment never reaches the model API.) Codex starts MCP
//     servers with its own fixed environment plus MCPServer.Env, not with
//     its own; Claude Code passes its environment on.
//   - Quiet: no telemetry, error reporting, auto-update or non-essential
//     traffic (Claude: CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC,
//     DISABLE_TELEMETRY, DISABLE_ERROR_REPORTING, DISABLE_AUTOUPDATER;
//     Codex: analytics off, web_search disabled, plugins/apps/updates off,
//     no login-shell snapshot). Measured with strace against the fake (not a
//     test): neither CLI connected anywhere but the model endpoint and the
//     MCP relay's socket, and neither made a DNS query for a literal IP.
//
// # Endpoints
//
// Claude Code reads ANTHROPIC_BASE_URL and its key from agent-env as is.
// Codex cannot be pointed at a gateway by OPENAI_BASE_URL alone (its
// built-in provider tries a WebSocket first), so the preset always declares
// a custom Responses-API provider: base_url from agent-env's
// OPENAI_BASE_URL (default https://api.openai.com/v1) and its key from
// OPENAI_API_KEY, which agent-env must hold.
//
// # Reading the event stream
//
// ParseClaude and ParseCodex read `--output-format stream-json` and
// `exec --json` output into a Report: CLI version and model when the CLI
// reported them, tool calls it reported (all, and those of ServerName),
// and the final status. They are tolerant of event types they do not know
// (counted in Report.UnknownEvents) and strict about those they read: a
// known event with a field of the wrong type, a line that is not JSON, or
// a second terminal event is an error naming the line. A last line cut off
// without its newline (the CLI was killed mid-write) is reported as
// Truncated, not as an error. The report is the agent's own account:
// Deponent records it and never treats it as evidence. Codex reports
// neither its version nor its model in the stream (ParseVersion reads
// `--version` output instead), nor a call it refused as unsupported, nor a
// code-mode exec call; Claude Code reports every tool_use, refused or not.
//
// # Not covered
//
// The CLIs' behaviour beyond the pinned versions and the flags above (a
// future version may add a tool the preset does not switch off;
// --strict-config catches renamed Codex keys, nothing catches a new
// default), what the model does with the tools it has, and the agent jail
// itself (the caller's): the preset is one layer, the agent jail (workspace
// read-only, private HOME/TMPDIR, environment from agent-env only) the
// other.
package agent

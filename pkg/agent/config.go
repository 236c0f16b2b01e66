package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MCPServer is one stdio MCP server: the command a client starts.
type MCPServer struct {
	Command string            // absolute path
	Args    []string          // may be empty
	Env     map[string]string // extra variables for the server process; may be empty
}

func (s MCPServer) validate() error {
	if err := checkAbs("MCP server command", s.Command); err != nil {
		return err
	}
	for i, a := range s.Args {
		if strings.ContainsRune(a, 0) || !utf8.ValidString(a) {
			return fmt.Errorf("agent: MCP server argument %d is not valid UTF-8 without NUL", i)
		}
	}
	for k, v := range s.Env {
		if !envName.MatchString(k) {
			return fmt.Errorf("agent: MCP server variable name %q is not a valid variable name", k)
		}
		if strings.ContainsRune(v, 0) || !utf8.ValidString(v) {
			return fmt.Errorf("agent: MCP server variable %s is not valid UTF-8 without NUL", k)
		}
	}
	return nil
}

// MCPConfigJSON renders servers in the common {"mcpServers": {NAME:
// {"type": "stdio", "command": ..., "args": [...], "env": {...}}}} form that
// Claude Code's --mcp-config and project .mcp.json files read. Output is
// deterministic (sorted keys) and ends with a newline.
func MCPConfigJSON(servers map[string]MCPServer) ([]byte, error) {
	if len(servers) == 0 {
		return nil, errors.New("agent: an MCP config needs at least one server")
	}
	type entry struct {
		Type    string            `json:"type"`
		Command string            `json:"command"`
		Args    []string          `json:"args"`
		Env     map[string]string `json:"env,omitempty"`
	}
	out := struct {
		MCPServers map[string]entry `json:"mcpServers"`
	}{MCPServers: map[string]entry{}}
	for name, s := range servers {
		if !serverName.MatchString(name) {
			return nil, fmt.Errorf("agent: MCP server name %q: use letters, digits, '_' and '-'", name)
		}
		if err := s.validate(); err != nil {
			return nil, err
		}
		args := s.Args
		if args == nil {
			args = []string{}
		}
		out.MCPServers[name] = entry{Type: "stdio", Command: s.Command, Args: args, Env: s.Env}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return nil, fmt.Errorf("agent: MCP config: %w", err)
	}
	return buf.Bytes(), nil
}

// File is one file an Invocation needs.
type File struct {
	Path string
	Data []byte
}

// WriteFiles writes every file of inv with mode 0600, creating missing
// parent directories with mode 0700. A file that already exists is an
// error, never overwritten; a file whose write fails is removed, so nothing
// half-written is left for the CLI to read.
func (inv *Invocation) WriteFiles() error {
	for _, f := range inv.Files {
		if err := writeNew(f.Path, f.Data); err != nil {
			return err
		}
	}
	return nil
}

// WriteMCPConfig writes MCPConfigJSON(servers) to path as WriteFiles does.
func WriteMCPConfig(path string, servers map[string]MCPServer) error {
	if err := checkAbs("MCP config path", path); err != nil {
		return err
	}
	data, err := MCPConfigJSON(servers)
	if err != nil {
		return err
	}
	return writeNew(path, data)
}

func writeNew(path string, data []byte) (err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("agent: %s already exists; the agent's files are written fresh, never over another", path)
		}
		return fmt.Errorf("agent: %w", err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("agent: %w", cerr)
		}
		if err != nil {
			_ = os.Remove(path)
		}
	}()
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	return nil
}

// codexFeatures are switched off in Codex's config: the shell tool (its
// exec_command), image viewing (reads files outside MCP), the login-shell
// snapshot it takes at start (runs bash -lc, sourcing /etc/profile), and
// everything that reaches the vendor's services or GitHub (plugins, apps,
// multi-agent, goals, image generation, in-app updates).
var codexFeatures = []string{
	"shell_tool", "view_image", "plugins", "remote_plugin", "apps",
	"multi_agent", "goals", "image_generation", "in_app_updates", "shell_snapshot",
}

// codexConfig renders Codex's config.toml for o. Every key it writes is
// checked by the CLI under --strict-config.
func codexConfig(o Options) ([]byte, error) {
	base := DefaultOpenAIBaseURL
	if v, ok := o.AgentEnv["OPENAI_BASE_URL"]; ok {
		base = v
	}
	var b strings.Builder
	b.WriteString("# Written by Deponent for one agent session: Deponent's MCP tools are the\n")
	b.WriteString("# agent's only tools. Not read again after the session.\n")
	if o.Model != "" {
		fmt.Fprintf(&b, "model = %s\n", tomlString(o.Model))
	}
	fmt.Fprintf(&b, "model_provider = %s\n", tomlString(ServerName))
	b.WriteString("approval_policy = \"never\"\n")
	// Codex's own sandbox: its apply_patch (nested in code mode's exec
	// for the current models) is refused instead of writing the workspace.
	b.WriteString("sandbox_mode = \"read-only\"\n")
	b.WriteString("web_search = \"disabled\"\n")
	fmt.Fprintf(&b, "\n[model_providers.%s]\n", ServerName)
	fmt.Fprintf(&b, "name = %s\n", tomlString(ServerName))
	fmt.Fprintf(&b, "base_url = %s\n", tomlString(base))
	b.WriteString("wire_api = \"responses\"\n")
	b.WriteString("env_key = \"OPENAI_API_KEY\"\n")
	b.WriteString("\n[analytics]\nenabled = false\n")
	// No sub-agents, even for a model whose catalog entry selects them.
	b.WriteString("\n[agents]\nenabled = false\n")
	b.WriteString("\n[features]\n")
	for _, f := range codexFeatures {
		fmt.Fprintf(&b, "%s = false\n", f)
	}
	// Models whose catalog entry says code_mode_only get their tools
	// nested in a JavaScript exec tool, with MCP tools deferred behind a
	// search; this keeps Deponent's tools direct, as a namespace.
	fmt.Fprintf(&b, "\n[features.code_mode]\ndirect_only_tool_namespaces = [%s]\n", tomlString("mcp__"+ServerName))
	fmt.Fprintf(&b, "\n[mcp_servers.%s]\n", ServerName)
	fmt.Fprintf(&b, "command = %s\n", tomlString(o.Server.Command))
	b.WriteString("args = [")
	for i, a := range o.Server.Args {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(tomlString(a))
	}
	b.WriteString("]\n")
	b.WriteString("default_tools_approval_mode = \"approve\"\n")
	fmt.Fprintf(&b, "tool_timeout_sec = %d\n", int64(o.toolTimeout().Seconds()+0.5))
	if len(o.Server.Env) > 0 {
		fmt.Fprintf(&b, "\n[mcp_servers.%s.env]\n", ServerName)
		keys := make([]string, 0, len(o.Server.Env))
		for k := range o.Server.Env {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "%s = %s\n", tomlString(k), tomlString(o.Server.Env[k]))
		}
	}
	return []byte(b.String()), nil
}

// tomlString is s as a TOML basic string: quotes, backslashes and control
// characters escaped; s must be valid UTF-8 (checked by the callers).
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if r < 0x20 || r == 0x7f {
				b.WriteString(`\u` + leftPad(strconv.FormatInt(int64(r), 16), 4))
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

func leftPad(s string, n int) string {
	for len(s) < n {
		s = "0" + s
	}
	return s
}

var serverName = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

package agent

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
)

// Status is how the agent's session ended, as the CLI reported it.
type Status string

// The statuses.
const (
	// StatusCompleted: the CLI reported a successful end (Claude: result
	// success without is_error; Codex: turn.completed).
	StatusCompleted Status = "completed"
	// StatusFailed: the CLI reported a failed end (Claude: a result that is
	// an error; Codex: turn.failed).
	StatusFailed Status = "failed"
	// StatusIncomplete: the stream ended without a terminal event (the CLI
	// crashed, was killed, or never started a session).
	StatusIncomplete Status = "incomplete"
)

// Report is what a CLI's event stream says about the session. It is the
// agent's own account, recorded beside the chain, never evidence.
type Report struct {
	Preset     Preset `json:"preset"`
	CLIVersion string `json:"cli_version,omitempty"` // as reported in the stream; "" when not
	Model      string `json:"model,omitempty"`       // the first model reported; "" when none
	// Models lists every distinct model reported, in order.
	Models []string `json:"models,omitempty"`
	// ToolCalls counts the distinct tool calls the stream reports, of any
	// tool; GovernedCalls those of ServerName's tools. OtherTools names
	// the tools of the rest, in order of first call.
	ToolCalls     int      `json:"tool_calls"`
	GovernedCalls int      `json:"governed_calls"`
	OtherTools    []string `json:"other_tools,omitempty"`
	// MCPServers is the status of each MCP server the CLI reported at
	// start (Claude Code only), e.g. {"deponent": "connected"}.
	MCPServers map[string]string `json:"mcp_servers,omitempty"`
	Status     Status            `json:"status"`
	// Detail is the CLI's own words for a failed end, one line, clipped.
	Detail string `json:"detail,omitempty"`
	// Events counts the events read; UnknownEvents those of a type (or
	// item type) the parser does not know; Warnings the warnings the CLI
	// reported as events (Codex's error items).
	Events        int `json:"events"`
	UnknownEvents int `json:"unknown_events"`
	Warnings      int `json:"warnings"`
	// Truncated: the last line had no newline and was not JSON — the CLI
	// was cut off while writing it; it is not counted.
	Truncated bool `json:"truncated,omitempty"`
}

// MaxEventBytes bounds one event line.
const MaxEventBytes = 16 << 20

// maxDetail bounds Report.Detail.
const maxDetail = 500

// Parse reads the event stream of preset p's CLI.
func Parse(p Preset, r io.Reader) (Report, error) {
	switch p {
	case Claude:
		return ParseClaude(r)
	case Codex:
		return ParseCodex(r)
	}
	_, err := ParsePreset(string(p))
	return Report{}, err
}

// ParseClaude reads Claude Code's `--output-format stream-json --verbose`
// output.
func ParseClaude(r io.Reader) (Report, error) {
	p := &claudeParser{rep: newReport(Claude), seen: map[string]bool{}}
	err := readLines(r, &p.rep, p.line)
	return p.rep, err
}

// ParseCodex reads Codex's `exec --json` output.
func ParseCodex(r io.Reader) (Report, error) {
	p := &codexParser{rep: newReport(Codex), seen: map[string]bool{}}
	err := readLines(r, &p.rep, p.line)
	return p.rep, err
}

func newReport(p Preset) Report { return Report{Preset: p, Status: StatusIncomplete} }

// readLines feeds each non-blank line to fn with its 1-based number.
func readLines(r io.Reader, rep *Report, fn func(n int, line []byte) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	for n := 1; ; n++ {
		line, err := readLine(br)
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("agent: event line %d: %w", n, err)
		}
		last := errors.Is(err, io.EOF)
		trimmed := bytes.TrimSpace(line)
		if len(trimmed) > 0 {
			if last && !json.Valid(trimmed) {
				// No newline and not JSON: cut off mid-write.
				rep.Truncated = true
				return nil
			}
			if ferr := fn(n, trimmed); ferr != nil {
				return fmt.Errorf("agent: %s event line %d: %w", rep.Preset, n, ferr)
			}
		}
		if last {
			return nil
		}
	}
}

// readLine returns the next line without its newline; io.EOF with the
// last, unterminated line (possibly empty).
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > MaxEventBytes {
			return nil, fmt.Errorf("longer than %d bytes", MaxEventBytes)
		}
		switch {
		case err == nil:
			return line[:len(line)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return line, err
		}
	}
}

// decodeEvent unmarshals one line into v strictly about the fields v
// declares: a field of the wrong type is an error.
func decodeEvent(line []byte, v any) error {
	if err := json.Unmarshal(line, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return fmt.Errorf("field %q: %s where %s was expected", te.Field, te.Value, te.Type)
		}
		return fmt.Errorf("not a JSON object: %v", err)
	}
	return nil
}

func (r *Report) addModel(m string) {
	// Claude Code labels messages it made up itself (an API error's text)
	// "<synthetic>": no model said them.
	if m == "" || strings.HasPrefix(m, "<") {
		return
	}
	if r.Model == "" {
		r.Model = m
	}
	for _, x := range r.Models {
		if x == m {
			return
		}
	}
	r.Models = append(r.Models, m)
}

func (r *Report) addCall(tool string, governed bool) {
	r.ToolCalls++
	if governed {
		r.GovernedCalls++
		return
	}
	for _, x := range r.OtherTools {
		if x == tool {
			return
		}
	}
	r.OtherTools = append(r.OtherTools, tool)
}

func (r *Report) end(st Status, detail string) error {
	if r.Status != StatusIncomplete {
		return fmt.Errorf("a second terminal event (%s after %s)", st, r.Status)
	}
	r.Status = st
	r.Detail = clipLine(detail, maxDetail)
	return nil
}

// clipLine is s on one line (control characters as spaces), at most n
// bytes, cut on a rune boundary and marked with "…".
func clipLine(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == '\u2028' || r == '\u2029' {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !runeStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func runeStart(b byte) bool { return b&0xC0 != 0x80 }

type claudeParser struct {
	rep  Report
	seen map[string]bool // tool_use ids
}

var governedPrefix = "mcp__" + ServerName + "__"

func (p *claudeParser) line(_ int, line []byte) error {
	var head struct {
		Type    string `json:"type"`
		Subtype string `json:"subtype"`
	}
	if err := decodeEvent(line, &head); err != nil {
		return err
	}
	p.rep.Events++
	switch head.Type {
	case "system":
		if head.Subtype != "init" {
			return nil // status, hooks, compaction, ...: nothing the report claims
		}
		var ev struct {
			Version    string `json:"claude_code_version"`
			Model      string `json:"model"`
			MCPServers []struct {
				Name   string `json:"name"`
				Status string `json:"status"`
			} `json:"mcp_servers"`
		}
		if err := decodeEvent(line, &ev); err != nil {
			return err
		}
		if ev.Version != "" {
			if p.rep.CLIVersion != "" && p.rep.CLIVersion != ev.Version {
				return fmt.Errorf("init reports version %q after %q", ev.Version, p.rep.CLIVersion)
			}
			p.rep.CLIVersion = ev.Version
		}
		p.rep.addModel(ev.Model)
		for _, s := range ev.MCPServers {
			if p.rep.MCPServers == nil {
				p.rep.MCPServers = map[string]string{}
			}
			p.rep.MCPServers[s.Name] = s.Status
		}
	case "assistant":
		var ev struct {
			Message struct {
				Model   string `json:"model"`
				Content []struct {
					Type string `json:"type"`
					ID   string `json:"id"`
					Name string `json:"name"`
				} `json:"content"`
			} `json:"message"`
		}
		if err := decodeEvent(line, &ev); err != nil {
			return err
		}
		p.rep.addModel(ev.Message.Model)
		for _, c := range ev.Message.Content {
			if c.Type != "tool_use" {
				continue
			}
			if c.ID == "" || c.Name == "" {
				return errors.New("a tool_use block without id or name")
			}
			if p.seen[c.ID] {
				continue
			}
			p.seen[c.ID] = true
			p.rep.addCall(c.Name, strings.HasPrefix(c.Name, governedPrefix))
		}
	case "user":
		// Tool results: the chain records them; nothing to claim here.
	case "result":
		var ev struct {
			Subtype string `json:"subtype"`
			IsError *bool  `json:"is_error"`
			Result  string `json:"result"`
		}
		if err := decodeEvent(line, &ev); err != nil {
			return err
		}
		if ev.IsError == nil || ev.Subtype == "" {
			return errors.New("a result event without subtype or is_error")
		}
		if ev.Subtype == "success" && !*ev.IsError {
			return p.rep.end(StatusCompleted, "")
		}
		detail := ev.Subtype
		if ev.Result != "" {
			detail += ": " + ev.Result
		}
		return p.rep.end(StatusFailed, detail)
	default:
		p.rep.UnknownEvents++
	}
	return nil
}

type codexParser struct {
	rep  Report
	seen map[string]bool // tool item ids
}

// codexToolItems are the item types that are tool calls; the value is the
// name other_tools records (mcp_tool_call is named by server and tool).
var codexToolItems = map[string]string{
	"mcp_tool_call":     "",
	"command_execution": "command_execution",
	"file_change":       "file_change",
	"web_search":        "web_search",
	"collab_tool_call":  "collab_tool_call",
	"image_generation":  "image_generation",
}

// codexOtherItems are item types the parser knows and that claim nothing.
var codexOtherItems = map[string]bool{"agent_message": true, "reasoning": true, "todo_list": true}

func (p *codexParser) line(_ int, line []byte) error {
	var ev struct {
		Type string `json:"type"`
		Item *struct {
			ID     string `json:"id"`
			Type   string `json:"type"`
			Server string `json:"server"`
			Tool   string `json:"tool"`
		} `json:"item"`
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
		Message string `json:"message"`
	}
	if err := decodeEvent(line, &ev); err != nil {
		return err
	}
	p.rep.Events++
	switch ev.Type {
	case "thread.started", "turn.started":
	case "item.started", "item.updated", "item.completed":
		if ev.Item == nil || ev.Item.Type == "" {
			return fmt.Errorf("an %s event without an item type", ev.Type)
		}
		it := ev.Item
		if it.Type == "error" {
			if ev.Type == "item.completed" {
				p.rep.Warnings++
			}
			return nil
		}
		name, isTool := codexToolItems[it.Type]
		if !isTool {
			if !codexOtherItems[it.Type] {
				p.rep.UnknownEvents++
			}
			return nil
		}
		if it.ID == "" {
			return fmt.Errorf("a %s item without an id", it.Type)
		}
		if p.seen[it.ID] {
			return nil
		}
		p.seen[it.ID] = true
		if it.Type == "mcp_tool_call" {
			if it.Server == "" || it.Tool == "" {
				return errors.New("an mcp_tool_call item without server or tool")
			}
			p.rep.addCall("mcp__"+it.Server+"__"+it.Tool, it.Server == ServerName)
			return nil
		}
		p.rep.addCall(name, false)
	case "turn.completed":
		return p.rep.end(StatusCompleted, "")
	case "turn.failed":
		msg := ""
		if ev.Error != nil {
			msg = ev.Error.Message
		}
		return p.rep.end(StatusFailed, msg)
	case "error":
		// A stream error (Codex retries some); the turn's end says how it
		// ended. Counted as a warning.
		p.rep.Warnings++
	default:
		p.rep.UnknownEvents++
	}
	return nil
}

var versionRE = map[Preset]*regexp.Regexp{
	Claude: regexp.MustCompile(`^(\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.-]+)?) \(Claude Code\)$`),
	Codex:  regexp.MustCompile(`^codex-cli (\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.-]+)?)$`),
}

// VersionArgv is the command that prints the preset CLI's version.
func (p Preset) VersionArgv() []string { return []string{p.Command(), "--version"} }

// ParseVersion reads the output of VersionArgv: "2.1.332 (Claude Code)" or
// "codex-cli 0.171.0". Anything else is an error.
func ParseVersion(p Preset, out string) (string, error) {
	re, ok := versionRE[p]
	if !ok {
		_, err := ParsePreset(string(p))
		return "", err
	}
	m := re.FindStringSubmatch(strings.TrimSpace(out))
	if m == nil {
		return "", fmt.Errorf("agent: %s --version printed %q, not a version this preset knows", p, clipLine(out, 200))
	}
	return m[1], nil
}

package agent

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func readTranscript(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile("testdata/transcripts/" + name + ".jsonl")
	require.NoError(t, err)
	return data
}

// The transcripts are real output of the pinned CLIs, kept by the e2e test
// (AGENT_E2E_TRANSCRIPTS) and from runs against an endpoint that answers 404.
func TestParseRealTranscripts(t *testing.T) {
	for name, want := range map[string]Report{
		"claude": {Preset: Claude, CLIVersion: "2.1.332", Model: "claude-opus-5-5", Models: []string{"claude-opus-5-5"},
			ToolCalls: 2, GovernedCalls: 1, OtherTools: []string{"Bash"}, MCPServers: map[string]string{"deponent": "connected"},
			Status: StatusCompleted, Events: 8},
		"claude-api-error": {Preset: Claude, CLIVersion: "2.1.332", Model: "claude-opus-5-5", Models: []string{"claude-opus-5-5"},
			MCPServers: map[string]string{"deponent": "connected"}, Status: StatusFailed,
			Detail: "success: There's an issue with the selected model (claude-opus-5-5). It may not exist or you may not have access to it. Run --model to pick a different model.",
			Events: 3},
		"codex-code-mode": {Preset: Codex, ToolCalls: 1, GovernedCalls: 1, Status: StatusCompleted, Events: 9, Warnings: 2},
		"codex-classic":   {Preset: Codex, ToolCalls: 1, GovernedCalls: 1, Status: StatusCompleted, Events: 10, Warnings: 3},
		"codex-api-error": {Preset: Codex, Status: StatusFailed, Events: 11, Warnings: 8,
			Detail: "unexpected status 404 Not Found: fakemodel: no such endpoint, url: http://127.0.0.1:46763/nope/v1/responses"},
	} {
		t.Run(name, func(t *testing.T) {
			p := Claude
			if strings.HasPrefix(name, "codex") {
				p = Codex
			}
			got, err := Parse(p, bytes.NewReader(readTranscript(t, name)))
			require.NoError(t, err)
			assert.Equal(t, want, got)
		})
	}
}

const (
	cInit    = `{"type":"system","subtype":"init","claude_code_version":"2.1.332","model":"m1","mcp_servers":[{"name":"deponent","status":"failed"}]}`
	cToolUse = `{"type":"assistant","message":{"model":"m1","content":[{"type":"text","text":"x"},{"type":"tool_use","id":"t1","name":"mcp__deponent__run_cmd","input":{}}]}}`
	cOK      = `{"type":"result","subtype":"success","is_error":false,"result":"done"}`
)

func TestParseClaude(t *testing.T) {
	for name, tc := range map[string]struct {
		in   string
		want Report
		err  string
	}{
		"empty": {in: "", want: Report{Preset: Claude, Status: StatusIncomplete}},
		"no result: incomplete": {in: cInit + "\n" + cToolUse + "\n",
			want: Report{Preset: Claude, CLIVersion: "2.1.332", Model: "m1", Models: []string{"m1"}, ToolCalls: 1, GovernedCalls: 1,
				MCPServers: map[string]string{"deponent": "failed"}, Status: StatusIncomplete, Events: 2}},
		"repeated tool_use id counts once, other servers are other": {
			in: cToolUse + "\n" + cToolUse + "\n" +
				`{"type":"assistant","message":{"model":"m2","content":[{"type":"tool_use","id":"t2","name":"mcp__deponent2__x"},{"type":"tool_use","id":"t3","name":"Write"},{"type":"tool_use","id":"t4","name":"Write"}]}}` + "\n" + cOK,
			want: Report{Preset: Claude, Model: "m1", Models: []string{"m1", "m2"}, ToolCalls: 4, GovernedCalls: 1,
				OtherTools: []string{"mcp__deponent2__x", "Write"}, Status: StatusCompleted, Events: 4}},
		"unknown events and system subtypes are counted, not fatal": {
			in:   `{"type":"stream_event","event":{}}` + "\n" + `{"type":"system","subtype":"api_retry","attempt":"1"}` + "\n" + `{"type":"rate_limit_event"}` + "\n" + cOK,
			want: Report{Preset: Claude, Status: StatusCompleted, Events: 4, UnknownEvents: 2}},
		"error result": {in: `{"type":"result","subtype":"error_max_turns","is_error":true}`,
			want: Report{Preset: Claude, Status: StatusFailed, Detail: "error_max_turns", Events: 1}},
		"success flagged as error": {in: `{"type":"result","subtype":"success","is_error":true,"result":"API Error: 401\n{\"x\":1}"}`,
			want: Report{Preset: Claude, Status: StatusFailed, Detail: `success: API Error: 401 {"x":1}`, Events: 1}},
		"synthetic model is no model": {in: `{"type":"assistant","message":{"model":"<synthetic>","content":[]}}`,
			want: Report{Preset: Claude, Status: StatusIncomplete, Events: 1}},
		"blank lines and CRLF": {in: "\n\r\n" + cOK + "\r\n\n",
			want: Report{Preset: Claude, Status: StatusCompleted, Events: 1}},
		"cut off mid-line": {in: cToolUse + "\n" + `{"type":"result","subt`,
			want: Report{Preset: Claude, Model: "m1", Models: []string{"m1"}, ToolCalls: 1, GovernedCalls: 1, Status: StatusIncomplete, Events: 1, Truncated: true}},
		"last line without newline is still read": {in: cOK,
			want: Report{Preset: Claude, Status: StatusCompleted, Events: 1}},

		"not JSON":            {in: "hello\n" + cOK, err: "line 1: not a JSON object"},
		"JSON but no object":  {in: "[1]\n", err: "line 1: not a JSON object"},
		"wrong type":          {in: `{"type":7}` + "\n", err: `line 1: field "type"`},
		"bad is_error":        {in: `{"type":"result","subtype":"success","is_error":"no"}` + "\n", err: `field "is_error"`},
		"result lacks fields": {in: `{"type":"result","subtype":"success"}` + "\n", err: "without subtype or is_error"},
		"bad content":         {in: `{"type":"assistant","message":{"content":"text"}}` + "\n", err: `field "message.content"`},
		"nameless tool_use":   {in: `{"type":"assistant","message":{"content":[{"type":"tool_use","id":"x"}]}}` + "\n", err: "without id or name"},
		"second result":       {in: cOK + "\n" + cOK + "\n", err: "line 2: a second terminal event"},
		"version changes":     {in: cInit + "\n" + strings.Replace(cInit, "2.1.332", "9.9.9", 1) + "\n", err: "line 2: init reports version"},
		"bad mcp_servers":     {in: `{"type":"system","subtype":"init","mcp_servers":{}}` + "\n", err: `field "mcp_servers"`},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := ParseClaude(strings.NewReader(tc.in))
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				assert.Contains(t, err.Error(), "claude event line")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestParseCodex(t *testing.T) {
	mcp := func(id, server string) string {
		return `{"type":"item.completed","item":{"id":"` + id + `","type":"mcp_tool_call","server":"` + server + `","tool":"run_cmd","arguments":{},"status":"completed"}}`
	}
	for name, tc := range map[string]struct {
		in   string
		want Report
		err  string
	}{
		"calls by id, started and completed once": {
			in: `{"type":"thread.started","thread_id":"x"}` + "\n" + `{"type":"turn.started"}` + "\n" +
				strings.Replace(mcp("i1", "deponent"), "item.completed", "item.started", 1) + "\n" + mcp("i1", "deponent") + "\n" +
				mcp("i2", "other") + "\n" +
				`{"type":"item.completed","item":{"id":"i3","type":"command_execution","command":"ls"}}` + "\n" +
				`{"type":"item.updated","item":{"id":"i4","type":"todo_list","items":[]}}` + "\n" +
				`{"type":"item.completed","item":{"id":"i5","type":"agent_message","text":"done"}}` + "\n" +
				`{"type":"turn.completed","usage":{}}` + "\n",
			want: Report{Preset: Codex, ToolCalls: 3, GovernedCalls: 1, OtherTools: []string{"mcp__other__run_cmd", "command_execution"},
				Status: StatusCompleted, Events: 9}},
		"warnings": {in: `{"type":"item.completed","item":{"id":"w","type":"error","message":"deprecated"}}` + "\n" + `{"type":"error","message":"Reconnecting"}` + "\n",
			want: Report{Preset: Codex, Status: StatusIncomplete, Events: 2, Warnings: 2}},
		"failed turn": {in: `{"type":"turn.failed","error":{"message":"quota\nexceeded"}}` + "\n",
			want: Report{Preset: Codex, Status: StatusFailed, Detail: "quota exceeded", Events: 1}},
		"unknown event and item": {in: `{"type":"thread.compacted"}` + "\n" + `{"type":"item.completed","item":{"id":"z","type":"hologram"}}` + "\n",
			want: Report{Preset: Codex, Status: StatusIncomplete, Events: 2, UnknownEvents: 2}},

		"item without type":  {in: `{"type":"item.completed","item":{"id":"z"}}` + "\n", err: "without an item type"},
		"tool without id":    {in: `{"type":"item.completed","item":{"type":"mcp_tool_call","server":"deponent","tool":"x"}}` + "\n", err: "without an id"},
		"mcp without server": {in: `{"type":"item.completed","item":{"id":"a","type":"mcp_tool_call","tool":"x"}}` + "\n", err: "without server or tool"},
		"bad item":           {in: `{"type":"item.completed","item":"x"}` + "\n", err: `field "item"`},
		"bad error":          {in: `{"type":"turn.failed","error":"x"}` + "\n", err: `field "error"`},
		"two ends":           {in: `{"type":"turn.completed"}` + "\n" + `{"type":"turn.failed","error":{"message":"x"}}` + "\n", err: "a second terminal event (failed after completed)"},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := ParseCodex(strings.NewReader(tc.in))
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				assert.Contains(t, err.Error(), "codex event line")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestParseBounds(t *testing.T) {
	long := `{"type":"x","pad":"` + strings.Repeat("a", MaxEventBytes) + `"}` + "\n"
	_, err := ParseCodex(strings.NewReader(long))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "longer than")

	detail := strings.Repeat("é", maxDetail)
	rep, err := ParseCodex(strings.NewReader(`{"type":"turn.failed","error":{"message":"` + detail + `"}}`))
	require.NoError(t, err)
	assert.LessOrEqual(t, len(rep.Detail), maxDetail)
	assert.True(t, strings.HasSuffix(rep.Detail, "…"))
	assert.True(t, strings.HasPrefix(detail, strings.TrimSuffix(rep.Detail, "…")), "cut on a rune boundary")

	_, err = Parse("gemini", strings.NewReader(""))
	assert.Error(t, err)
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, assert.AnError }

func TestParseReadError(t *testing.T) {
	_, err := ParseClaude(failingReader{})
	assert.ErrorIs(t, err, assert.AnError)
}

func TestParseVersion(t *testing.T) {
	for _, tc := range []struct {
		p         Preset
		out, want string
	}{
		{Claude, "2.1.332 (Claude Code)\n", "2.1.332"},
		{Codex, "codex-cli 0.171.0\n", "0.171.0"},
		{Codex, "codex-cli 0.172.0-alpha.3", "0.172.0-alpha.3"},
	} {
		got, err := ParseVersion(tc.p, tc.out)
		require.NoError(t, err)
		assert.Equal(t, tc.want, got)
	}
	for _, tc := range []struct {
		p   Preset
		out string
	}{
		{Claude, "codex-cli 0.171.0"}, {Codex, "2.1.332 (Claude Code)"}, {Claude, ""},
		{Claude, "2.1 (Claude Code)"}, {Codex, "codex-cli 0.171.0\nextra"}, {"gemini", "1.0.0"},
	} {
		_, err := ParseVersion(tc.p, tc.out)
		assert.Error(t, err, "%s %q", tc.p, tc.out)
	}
}

// FuzzParse: whatever a CLI (or something pretending to be one) prints, the
// parsers return a report or an error, never panic, and never claim more
// governed calls than calls.
func FuzzParse(f *testing.F) {
	for _, name := range []string{"claude", "claude-api-error", "codex-code-mode", "codex-api-error"} {
		data, err := os.ReadFile("testdata/transcripts/" + name + ".jsonl")
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(cInit + "\n" + cToolUse + "\n" + cOK))
	f.Add([]byte(`{"type":"item.completed","item":{"id":"i","type":"mcp_tool_call","server":"deponent","tool":"t"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, p := range Presets {
			rep, err := Parse(p, bytes.NewReader(data))
			if err != nil {
				continue
			}
			if rep.GovernedCalls > rep.ToolCalls || rep.UnknownEvents > rep.Events {
				t.Fatalf("%s: inconsistent report %+v", p, rep)
			}
			switch rep.Status {
			case StatusCompleted, StatusFailed, StatusIncomplete:
			default:
				t.Fatalf("%s: status %q", p, rep.Status)
			}
			if len(rep.Detail) > maxDetail {
				t.Fatalf("%s: detail of %d bytes", p, len(rep.Detail))
			}
		}
	})
}

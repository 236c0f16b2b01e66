package fakemodel

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type event struct {
	Name string
	Data map[string]any
}

// post sends body to the fake and returns the response; SSE responses are
// parsed into events.
func post(t *testing.T, url string, body any, hdr map[string]string) (int, []event, []byte) {
	t.Helper()
	b, err := json.Marshal(body)
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(b))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		raw, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, nil, raw
	}
	var evs []event
	sc := bufio.NewScanner(resp.Body)
	var name string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			var d map[string]any
			require.NoError(t, json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &d), line)
			require.Equal(t, name, d["type"], "event name and data type agree")
			evs = append(evs, event{Name: name, Data: d})
		case line == "":
		default:
			t.Fatalf("unexpected SSE line %q", line)
		}
	}
	require.NoError(t, sc.Err())
	return resp.StatusCode, evs, nil
}

func start(t *testing.T, sc Scenario) *Server {
	t.Helper()
	s, err := Start(sc)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func names(evs []event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.Name)
	}
	return out
}

// anthropicStream reassembles the blocks of a streamed Messages response.
type anthBlockOut struct {
	Type, ID, Name, Text string
	Input                map[string]any
}

func anthropicStream(t *testing.T, evs []event) (blocks []anthBlockOut, stop string) {
	t.Helper()
	require.NotEmpty(t, evs)
	assert.Equal(t, "message_start", evs[0].Name)
	assert.Equal(t, "message_stop", evs[len(evs)-1].Name)
	var partial []string
	for _, e := range evs {
		switch e.Name {
		case "content_block_start":
			cb := e.Data["content_block"].(map[string]any)
			require.EqualValues(t, len(blocks), e.Data["index"])
			b := anthBlockOut{Type: cb["type"].(string)}
			if b.Type == "tool_use" {
				b.ID, b.Name = cb["id"].(string), cb["name"].(string)
			}
			blocks = append(blocks, b)
			partial = append(partial, "")
		case "content_block_delta":
			i := int(e.Data["index"].(float64))
			d := e.Data["delta"].(map[string]any)
			switch d["type"] {
			case "text_delta":
				blocks[i].Text += d["text"].(string)
			case "input_json_delta":
				partial[i] += d["partial_json"].(string)
			default:
				t.Fatalf("delta type %v", d["type"])
			}
		case "content_block_stop":
			i := int(e.Data["index"].(float64))
			if blocks[i].Type == "tool_use" {
				require.NoError(t, json.Unmarshal([]byte(partial[i]), &blocks[i].Input))
			}
		case "message_delta":
			stop = e.Data["delta"].(map[string]any)["stop_reason"].(string)
		}
	}
	return blocks, stop
}

func anthTools(names ...string) []map[string]any {
	var out []map[string]any
	for _, n := range names {
		out = append(out, map[string]any{"name": n, "description": "d", "input_schema": map[string]any{"type": "object"}})
	}
	return out
}

func TestStartRejectsBadScenarios(t *testing.T) {
	for name, sc := range map[string]Scenario{
		"no turns":             {},
		"last turn calls":      {Turns: []Turn{{Calls: []ToolCall{MCP("d", "x", map[string]any{})}}}},
		"middle turn no calls": {Turns: []Turn{{Text: "a"}, {Text: "b"}}},
		"nameless call":        {Turns: []Turn{{Calls: []ToolCall{{Input: map[string]any{}}}}, {Text: "b"}}},
		"input not object":     {Turns: []Turn{{Calls: []ToolCall{MCP("d", "x", []int{1})}}, {Text: "b"}}},
		"input nil":            {Turns: []Turn{{Calls: []ToolCall{MCP("d", "x", nil)}}, {Text: "b"}}},
		"input unmarshalable":  {Turns: []Turn{{Calls: []ToolCall{MCP("d", "x", map[string]any{"c": make(chan int)})}}, {Text: "b"}}},
	} {
		t.Run(name, func(t *testing.T) {
			s, err := Start(sc)
			if s != nil {
				_ = s.Close()
			}
			require.Error(t, err)
		})
	}
}

func TestAnthropicToolLoop(t *testing.T) {
	var sawResult []ToolResult
	s := start(t, Scenario{Turns: []Turn{
		{Text: "let me look", Calls: []ToolCall{MCP("deponent", "read_file", map[string]any{"path": "a.go"})}},
		{Check: func(r *Request) error { sawResult = r.Results; return nil }, Text: "all done ✓"},
	}})
	url := s.URL() + "/v1/messages?beta=true"
	user := map[string]any{"role": "user", "content": "fix it"}
	code, evs, _ := post(t, url, map[string]any{
		"model": "claude-x", "stream": true, "max_tokens": 10,
		"messages": []any{user}, "tools": anthTools("mcp__deponent__read_file", "mcp__deponent__run_cmd"),
	}, map[string]string{"x-api-key": "sk-SECRET"})
	require.Equal(t, 200, code)
	assert.Equal(t, []string{"message_start", "ping",
		"content_block_start", "content_block_delta", "content_block_delta", "content_block_delta", "content_block_stop",
		"content_block_start", "content_block_delta", "content_block_delta", "content_block_delta", "content_block_stop",
		"message_delta", "message_stop"}, names(evs))
	assert.Equal(t, "claude-x", evs[0].Data["message"].(map[string]any)["model"])
	blocks, stop := anthropicStream(t, evs)
	assert.Equal(t, "tool_use", stop)
	require.Len(t, blocks, 2)
	assert.Equal(t, "let me look", blocks[0].Text)
	assert.Equal(t, "mcp__deponent__read_file", blocks[1].Name)
	assert.Equal(t, map[string]any{"path": "a.go"}, blocks[1].Input)

	assistant := map[string]any{"role": "assistant", "content": []any{
		map[string]any{"type": "text", "text": "let me look"},
		map[string]any{"type": "tool_use", "id": blocks[1].ID, "name": blocks[1].Name, "input": blocks[1].Input},
	}}
	result := map[string]any{"role": "user", "content": []any{map[string]any{
		"type": "tool_result", "tool_use_id": blocks[1].ID, "is_error": true,
		"content": []any{map[string]any{"type": "text", "text": "BLOCK: no"}, map[string]any{"type": "text", "text": "reason"}},
	}}}
	code, evs, _ = post(t, url, map[string]any{
		"model": "claude-x", "stream": true,
		"messages": []any{user, map[string]any{"role": "system", "content": "sys"}, assistant, result},
		"tools":    anthTools("mcp__deponent__read_file"),
	}, nil)
	require.Equal(t, 200, code)
	blocks, stop = anthropicStream(t, evs)
	assert.Equal(t, "end_turn", stop)
	require.Len(t, blocks, 1)
	assert.Equal(t, "all done ✓", blocks[0].Text)

	require.Len(t, sawResult, 1)
	assert.Equal(t, "BLOCK: no\nreason", sawResult[0].Text)
	assert.True(t, sawResult[0].IsError)
	assert.Equal(t, "read_file", sawResult[0].Call.Name)

	require.NoError(t, s.Finished())
	reqs := s.Requests()
	require.Len(t, reqs, 2)
	assert.Equal(t, 0, reqs[0].Turn)
	assert.Equal(t, 1, reqs[1].Turn)
	assert.Equal(t, Anthropic, reqs[0].API)
	assert.Equal(t, "beta=true", reqs[0].RawQuery)
	assert.Equal(t, []string{"mcp__deponent__read_file", "mcp__deponent__run_cmd"}, reqs[0].Tools)
	assert.Len(t, s.Containing("sk-SECRET"), 1, "a header value is searched")
	assert.Len(t, s.Containing("fix it"), 2, "the body is searched")
	assert.Empty(t, s.Containing("never-sent"))
	assert.Len(t, s.MainRequests(), 2)
}

func TestAnthropicRetryGetsTheSameTurn(t *testing.T) {
	s := start(t, Scenario{Turns: []Turn{
		{Calls: []ToolCall{MCP("deponent", "run_cmd", map[string]any{"cmd": "go test"})}},
		{Text: "done"},
	}})
	body := map[string]any{"model": "m", "stream": true, "messages": []any{map[string]any{"role": "user", "content": "x"}},
		"tools": anthTools("mcp__deponent__run_cmd")}
	_, evs1, _ := post(t, s.URL()+"/v1/messages", body, nil)
	_, evs2, _ := post(t, s.URL()+"/v1/messages", body, nil)
	b1, _ := anthropicStream(t, evs1)
	b2, _ := anthropicStream(t, evs2)
	assert.Equal(t, b1, b2)
	require.NoError(t, s.Err())
	assert.Error(t, s.Finished(), "turn 1 was never answered")
}

func TestAnthropicSideRequestAndNonStreaming(t *testing.T) {
	s := start(t, Scenario{SideText: "Title", Turns: []Turn{{Text: "final"}}})
	code, evs, raw := post(t, s.URL()+"/v1/messages", map[string]any{"model": "haiku", "max_tokens": 5,
		"messages": []any{map[string]any{"role": "user", "content": "name this"}}}, nil)
	require.Equal(t, 200, code)
	require.Nil(t, evs)
	var msg struct {
		Content []struct{ Type, Text string }
		Stop    string `json:"stop_reason"`
		Model   string
	}
	require.NoError(t, json.Unmarshal(raw, &msg))
	assert.Equal(t, "Title", msg.Content[0].Text)
	assert.Equal(t, "end_turn", msg.Stop)
	assert.Equal(t, "haiku", msg.Model)
	r := s.Requests()[0]
	assert.True(t, r.Side)
	assert.Equal(t, -1, r.Turn)
	require.NoError(t, s.Err())
	assert.Error(t, s.Finished(), "a side request answers no turn")
	assert.Empty(t, s.MainRequests())
}

func TestScenarioErrorsEndTheConversation(t *testing.T) {
	call := MCP("deponent", "run_cmd", map[string]any{"cmd": "curl x"})
	for name, tc := range map[string]struct {
		sc      Scenario
		history bool // send a second request holding turn 0's call
		result  bool // ... and its result
		want    string
	}{
		"check fails": {
			sc: Scenario{Turns: []Turn{{Calls: []ToolCall{call}},
				{Check: func(r *Request) error { return assertErr("refusal reason missing") }, Text: "ok"}}},
			history: true, result: true, want: "refusal reason missing",
		},
		"missing result": {
			sc:      Scenario{Turns: []Turn{{Calls: []ToolCall{call}}, {Text: "ok"}}},
			history: true, want: "no result for call toolu_fake_T0_0",
		},
		"unoffered tool": {
			sc:   Scenario{Turns: []Turn{{Calls: []ToolCall{MCP("deponent", "write_file", map[string]any{})}}, {Text: "ok"}}},
			want: "did not offer",
		},
	} {
		t.Run(name, func(t *testing.T) {
			s := start(t, tc.sc)
			msgs := []any{map[string]any{"role": "user", "content": "go"}}
			if tc.history {
				msgs = append(msgs, map[string]any{"role": "assistant", "content": []any{map[string]any{
					"type": "tool_use", "id": "toolu_fake_T0_0", "name": "mcp__deponent__run_cmd", "input": map[string]any{}}}})
				if tc.result {
					msgs = append(msgs, map[string]any{"role": "user", "content": []any{map[string]any{
						"type": "tool_result", "tool_use_id": "toolu_fake_T0_0", "content": "x"}}})
				}
			}
			_, evs, _ := post(t, s.URL()+"/v1/messages", map[string]any{"model": "m", "stream": true,
				"messages": msgs, "tools": anthTools("mcp__deponent__run_cmd")}, nil)
			blocks, stop := anthropicStream(t, evs)
			assert.Equal(t, "end_turn", stop, "the fake stops the client")
			require.Len(t, blocks, 1)
			assert.Contains(t, blocks[0].Text, tc.want)
			require.Error(t, s.Err())
			assert.Contains(t, s.Err().Error(), tc.want)
		})
	}
}

type assertErr string

func (e assertErr) Error() string { return string(e) }

func TestBuiltinCallNeedsNoOffer(t *testing.T) {
	s := start(t, Scenario{Turns: []Turn{{Calls: []ToolCall{Builtin("Bash", map[string]any{"command": "id"})}}, {Text: "ok"}}})
	_, evs, _ := post(t, s.URL()+"/v1/messages", map[string]any{"model": "m", "stream": true,
		"messages": []any{map[string]any{"role": "user", "content": "go"}}, "tools": anthTools("mcp__deponent__run_cmd")}, nil)
	blocks, stop := anthropicStream(t, evs)
	assert.Equal(t, "tool_use", stop)
	assert.Equal(t, "Bash", blocks[0].Name)
	require.NoError(t, s.Err())
}

func TestConversationBeyondScriptIsAnError(t *testing.T) {
	s := start(t, Scenario{Turns: []Turn{{Text: "done"}}})
	_, evs, _ := post(t, s.URL()+"/v1/messages", map[string]any{"model": "m", "stream": true,
		"messages": []any{map[string]any{"role": "user", "content": "go"},
			map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "id": "toolu_fake_T3_0", "name": "x", "input": map[string]any{}}}}},
		"tools": anthTools("x")}, nil)
	blocks, _ := anthropicStream(t, evs)
	assert.Contains(t, blocks[0].Text, "turn 3")
	assert.Error(t, s.Err())
}

func TestMalformedAndUnknownRequests(t *testing.T) {
	s := start(t, Scenario{Turns: []Turn{{Text: "done"}}})
	resp, err := http.Post(s.URL()+"/v1/messages", "application/json", strings.NewReader("{not json"))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 400, resp.StatusCode)
	resp, err = http.Post(s.URL()+"/v1/messages", "application/json", strings.NewReader(`{"messages":[{"role":"user","content":7}],"tools":[{"name":"x"}]}`))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 400, resp.StatusCode)
	resp, err = http.Post(s.URL()+"/v1/responses", "application/json", strings.NewReader(`{"input":[1]}`))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 400, resp.StatusCode)
	resp, err = http.Get(s.URL() + "/api/hello")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 404, resp.StatusCode)
	err = s.Err()
	require.Error(t, err)
	for _, want := range []string{"request 0: Messages API body", "request 1: message 0", "request 2: Responses API input", "request 3: unexpected GET /api/hello"} {
		assert.Contains(t, err.Error(), want)
	}
	reqs := s.Requests()
	require.Len(t, reqs, 4)
	assert.Equal(t, Other, reqs[3].API)
}

func oaTools() []any {
	return []any{
		map[string]any{"type": "function", "name": "view_image", "parameters": map[string]any{}},
		map[string]any{"type": "web_search"},
		map[string]any{"type": "namespace", "name": "mcp__deponent", "tools": []any{
			map[string]any{"type": "function", "name": "run_cmd"}, map[string]any{"type": "function", "name": "read_file"}}},
	}
}

func TestOpenAIToolLoop(t *testing.T) {
	var got []ToolResult
	s := start(t, Scenario{Model: "gpt-fake", Turns: []Turn{
		{Calls: []ToolCall{
			MCP("deponent", "run_cmd", map[string]any{"cmd": "go test ./..."}),
			MCP("deponent", "read_file", map[string]any{"path": "x"}),
		}},
		{Check: func(r *Request) error { got = r.Results; return nil }, Text: "fixed"},
	}})
	url := s.OpenAIBaseURL() + "/responses"
	input := []any{map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": "fix"}}}}
	code, evs, _ := post(t, url, map[string]any{"model": "asked", "stream": true, "input": input, "tools": oaTools()}, nil)
	require.Equal(t, 200, code)
	require.Equal(t, "response.created", evs[0].Name)
	last := evs[len(evs)-1]
	require.Equal(t, "response.completed", last.Name)
	resp := last.Data["response"].(map[string]any)
	assert.Equal(t, "gpt-fake", resp["model"])
	assert.Equal(t, "completed", resp["status"])
	assert.NotNil(t, resp["usage"])
	out := resp["output"].([]any)
	require.Len(t, out, 2)
	var doneItems []map[string]any
	args := map[string]string{}
	for i, e := range evs {
		assert.EqualValues(t, i, e.Data["sequence_number"])
		switch e.Name {
		case "response.output_item.done":
			doneItems = append(doneItems, e.Data["item"].(map[string]any))
		case "response.function_call_arguments.delta":
			args[e.Data["item_id"].(string)] += e.Data["delta"].(string)
		}
	}
	require.Len(t, doneItems, 2)
	for i, it := range doneItems {
		assert.Equal(t, out[i], any(it))
		assert.Equal(t, "function_call", it["type"])
		assert.Equal(t, "mcp__deponent", it["namespace"])
		assert.Equal(t, it["arguments"], args[it["id"].(string)], "deltas reassemble the arguments")
	}
	assert.Equal(t, "run_cmd", doneItems[0]["name"])
	assert.JSONEq(t, `{"cmd":"go test ./..."}`, doneItems[0]["arguments"].(string))
	assert.Equal(t, "call_fake_T0_0", doneItems[0]["call_id"])
	assert.Equal(t, "call_fake_T0_1", doneItems[1]["call_id"])

	// Results come back as a string and as content parts.
	input = append(input, doneItems[0], doneItems[1],
		map[string]any{"type": "function_call_output", "call_id": "call_fake_T0_0", "output": "Wall time: 1s\nOutput:\nFAIL"},
		map[string]any{"type": "function_call_output", "call_id": "call_fake_T0_1", "output": []any{
			map[string]any{"type": "input_text", "text": "line1"}, map[string]any{"type": "input_text", "text": "line2"}}})
	_, evs, _ = post(t, url, map[string]any{"model": "asked", "stream": true, "input": input, "tools": oaTools()}, nil)
	resp = evs[len(evs)-1].Data["response"].(map[string]any)
	out = resp["output"].([]any)
	require.Len(t, out, 1)
	msg := out[0].(map[string]any)
	assert.Equal(t, "message", msg["type"])
	assert.Equal(t, "fixed", msg["content"].([]any)[0].(map[string]any)["text"])
	var text string
	for _, e := range evs {
		if e.Name == "response.output_text.delta" {
			text += e.Data["delta"].(string)
		}
	}
	assert.Equal(t, "fixed", text)

	require.Len(t, got, 2)
	assert.Equal(t, "Wall time: 1s\nOutput:\nFAIL", got[0].Text)
	assert.Equal(t, "line1\nline2", got[1].Text)
	assert.False(t, got[0].IsError)
	require.NoError(t, s.Finished())
	r := s.Requests()[0]
	assert.Equal(t, OpenAI, r.API)
	assert.Equal(t, "asked", r.Model)
	assert.Equal(t, []string{"view_image", "web_search", "mcp__deponent__run_cmd", "mcp__deponent__read_file"}, r.Tools)
}

func TestOpenAIBuiltinCallAndNoStream(t *testing.T) {
	s := start(t, Scenario{Turns: []Turn{{Calls: []ToolCall{Builtin("exec_command", map[string]any{"cmd": "id"})}}, {Text: "ok"}}})
	url := s.OpenAIBaseURL() + "/responses"
	_, evs, _ := post(t, url, map[string]any{"model": "m", "stream": true, "input": "hello", "tools": oaTools()}, nil)
	it := evs[len(evs)-1].Data["response"].(map[string]any)["output"].([]any)[0].(map[string]any)
	assert.Equal(t, "exec_command", it["name"])
	_, hasNS := it["namespace"]
	assert.False(t, hasNS, "a built-in call carries no namespace")
	require.NoError(t, s.Err())
	code, _, _ := post(t, url, map[string]any{"model": "m", "input": "hello", "tools": oaTools()}, nil)
	assert.Equal(t, 400, code)
	assert.ErrorContains(t, s.Err(), "without stream")
}

func TestHoldDelaysTheAnswer(t *testing.T) {
	hold := make(chan struct{})
	s := start(t, Scenario{Turns: []Turn{{Text: "late", Hold: hold}}})
	body := map[string]any{"model": "m", "stream": true, "messages": []any{map[string]any{"role": "user", "content": "x"}}, "tools": anthTools("t")}

	// A client that gives up while the turn is held gets no answer.
	b, _ := json.Marshal(body)
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.URL()+"/v1/messages", bytes.NewReader(b))
	errc := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	require.Eventually(t, func() bool { return len(s.Requests()) == 1 && s.Requests()[0].Turn == 0 }, 10*time.Second, 5*time.Millisecond)
	cancel()
	assert.Error(t, <-errc)

	// Released, the held turn answers.
	done := make(chan []event, 1)
	go func() {
		_, evs, _ := post(t, s.URL()+"/v1/messages", body, nil)
		done <- evs
	}()
	require.Eventually(t, func() bool { return len(s.Requests()) == 2 && s.Requests()[1].Turn == 0 }, 10*time.Second, 5*time.Millisecond)
	select {
	case <-done:
		t.Fatal("answered while held")
	default:
	}
	close(hold)
	blocks, _ := anthropicStream(t, <-done)
	assert.Equal(t, "late", blocks[0].Text)
}

func TestChunksKeepUTF8(t *testing.T) {
	for _, s := range []string{"", "a", "héllo wörld ✓✓✓", strings.Repeat("✓", 7)} {
		for n := 1; n < 5; n++ {
			parts := chunks(s, n)
			assert.Equal(t, s, strings.Join(parts, ""))
			for _, p := range parts {
				assert.True(t, p == "" || isValid(p), "%q", p)
			}
		}
	}
}

func isValid(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }

func TestParseCallID(t *testing.T) {
	turn, j, ok := parseCallID("toolu", callID("toolu", 12, 3))
	assert.True(t, ok)
	assert.Equal(t, 12, turn)
	assert.Equal(t, 3, j)
	for _, bad := range []string{"toolu_01abc", "toolu_fake_T", "toolu_fake_Tx_1", "toolu_fake_T1", "toolu_fake_T-1_0", "call_fake_T1_0"} {
		_, _, ok := parseCallID("toolu", bad)
		assert.False(t, ok, bad)
	}
}

// The fake is test support: no binary may link it.
func TestNotLinkedIntoBinaries(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "../../cmd/...").CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "github.com/deponent-dev/deponent-action/pkg/", "the listing names the module's packages")
	assert.NotContains(t, string(out), "internal/fakemodel")
}

func TestOpenAICodeModeToolsAndFreeformCalls(t *testing.T) {
	js := "const r = await tools.apply_patch(\"x\");\ntext(r);"
	var got []ToolResult
	s := start(t, Scenario{Turns: []Turn{
		{Calls: []ToolCall{Freeform("exec", js), MCP("deponent", "run_cmd", map[string]any{"cmd": "ls"})}},
		{Check: func(r *Request) error { got = r.Results; return nil }, Text: "ok"},
	}})
	url := s.OpenAIBaseURL() + "/responses"
	input := []any{
		map[string]any{"type": "additional_tools", "role": "developer", "tools": []any{
			map[string]any{"type": "namespace", "name": "functions", "tools": []any{map[string]any{"type": "custom", "name": "exec"}, map[string]any{"type": "function", "name": "wait"}}},
			map[string]any{"type": "namespace", "name": "mcp__deponent", "tools": []any{map[string]any{"type": "function", "name": "run_cmd"}}},
		}},
		map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": "go"}}},
	}
	_, evs, _ := post(t, url, map[string]any{"model": "m", "stream": true, "input": input}, nil)
	require.NoError(t, s.Err())
	assert.Equal(t, []string{"exec", "wait", "mcp__deponent__run_cmd"}, s.Requests()[0].Tools)
	out := evs[len(evs)-1].Data["response"].(map[string]any)["output"].([]any)
	require.Len(t, out, 2)
	custom := out[0].(map[string]any)
	assert.Equal(t, "custom_tool_call", custom["type"])
	assert.Equal(t, "exec", custom["name"])
	assert.Equal(t, js, custom["input"])
	var streamed string
	for _, e := range evs {
		if e.Name == "response.custom_tool_call_input.delta" {
			streamed += e.Data["delta"].(string)
		}
	}
	assert.Equal(t, js, streamed)

	input = append(input, out[0], out[1],
		map[string]any{"type": "custom_tool_call_output", "call_id": custom["call_id"], "output": "Script failed"},
		map[string]any{"type": "function_call_output", "call_id": out[1].(map[string]any)["call_id"], "output": "listing"})
	post(t, url, map[string]any{"model": "m", "stream": true, "input": input}, nil)
	require.NoError(t, s.Finished())
	require.Len(t, got, 2)
	assert.Equal(t, "Script failed", got[0].Text)
	assert.True(t, got[0].Call.Freeform)
	assert.Equal(t, "listing", got[1].Text)
}

func TestFreeformCallsHaveNoAnthropicForm(t *testing.T) {
	s := start(t, Scenario{Turns: []Turn{{Calls: []ToolCall{Freeform("exec", "x")}}, {Text: "ok"}}})
	_, evs, _ := post(t, s.URL()+"/v1/messages", map[string]any{"model": "m", "stream": true,
		"messages": []any{map[string]any{"role": "user", "content": "go"}}, "tools": anthTools("exec")}, nil)
	blocks, stop := anthropicStream(t, evs)
	assert.Equal(t, "end_turn", stop)
	assert.Contains(t, blocks[0].Text, "freeform")
	assert.ErrorContains(t, s.Err(), "no Messages API form")

	_, err := Start(Scenario{Turns: []Turn{{Calls: []ToolCall{{Name: "exec", Freeform: true, Input: map[string]any{}}}}, {Text: "ok"}}})
	assert.ErrorContains(t, err, "freeform and has a JSON input")
}

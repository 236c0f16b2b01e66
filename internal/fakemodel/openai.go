package fakemodel

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// oaRequest is the part of a Responses API request the fake reads.
type oaRequest struct {
	Model  string          `json:"model"`
	Stream bool            `json:"stream"`
	Input  json.RawMessage `json:"input"`
	Tools  []oaTool        `json:"tools"`
}

type oaTool struct {
	Type  string   `json:"type"`
	Name  string   `json:"name"`
	Tools []oaTool `json:"tools"` // a namespace's tools
}

type oaItem struct {
	Type      string          `json:"type"`
	Tools     []oaTool        `json:"tools"` // additional_tools items
	Role      string          `json:"role"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Namespace string          `json:"namespace"`
	Output    json.RawMessage `json:"output"`
}

// oaOutputText reads a function_call_output's output: a string or an array
// of content parts whose text is joined.
func oaOutputText(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", fmt.Errorf("output is neither a string nor an array of parts: %w", err)
	}
	var texts []string
	for _, p := range parts {
		if p.Text != "" || p.Type == "input_text" || p.Type == "output_text" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n"), nil
}

// oaToolNames flattens the offered tools: a function by its name, a
// namespace's tools as NAMESPACE__NAME (the default namespace "functions"
// adds no prefix), any other tool by its name or, without one, its type.
func oaToolNames(tools []oaTool) []string {
	var out []string
	for _, t := range tools {
		switch {
		case t.Type == "namespace":
			for _, in := range t.Tools {
				if t.Name == "functions" {
					out = append(out, in.Name)
				} else {
					out = append(out, t.Name+"__"+in.Name)
				}
			}
		case t.Name != "":
			out = append(out, t.Name)
		default:
			out = append(out, t.Type)
		}
	}
	return out
}

const oaIDPrefix = "call"

func (s *Server) openai(w http.ResponseWriter, hr *http.Request, req *Request) {
	defer s.commit(req)
	var or oaRequest
	if err := json.Unmarshal(req.Body, &or); err != nil {
		s.fail("request %d: Responses API body: %v", req.Seq, err)
		writeJSONError(w, http.StatusBadRequest, "invalid_request_error", "fakemodel: body is not a Responses API request")
		return
	}
	req.Model, req.Stream = or.Model, or.Stream
	req.Tools = oaToolNames(or.Tools)
	var items []oaItem
	if len(or.Input) > 0 && or.Input[0] == '[' {
		if err := json.Unmarshal(or.Input, &items); err != nil {
			s.fail("request %d: Responses API input: %v", req.Seq, err)
			writeJSONError(w, http.StatusBadRequest, "invalid_request_error", "fakemodel: malformed input items")
			return
		}
	}
	var seen []int
	results := map[string]ToolResult{}
	for _, it := range items {
		switch it.Type {
		case "additional_tools":
			// Codex in code mode offers tools as an input item.
			req.Tools = append(req.Tools, oaToolNames(it.Tools)...)
		case "function_call", "custom_tool_call":
			if t, _, ok := parseCallID(oaIDPrefix, it.CallID); ok {
				seen = append(seen, t)
			}
		case "function_call_output", "custom_tool_call_output":
			text, err := oaOutputText(it.Output)
			if err != nil {
				s.fail("request %d: %s %s: %v", req.Seq, it.Type, it.CallID, err)
			}
			results[it.CallID] = ToolResult{CallID: it.CallID, Text: text}
		}
	}
	var p plan
	if len(req.Tools) == 0 {
		req.Side = true
		p = plan{turn: -1, text: s.sideText()}
	} else {
		p = s.decide(req, seen, results, oaIDPrefix)
	}
	s.commit(req)
	if !s.wait(hr, p.hold) {
		return
	}
	if !or.Stream {
		s.fail("request %d: Responses API request without stream: true; the fake only streams", req.Seq)
		writeJSONError(w, http.StatusBadRequest, "invalid_request_error", "fakemodel: only streaming is supported")
		return
	}

	n := req.Seq
	respID := fmt.Sprintf("resp_fake_%d", n)
	model := s.model(req)
	e := startSSE(w)
	seq := 0
	ev := func(name string, data map[string]any) {
		data["type"] = name
		data["sequence_number"] = seq
		seq++
		e.event(name, data)
	}
	resp := func(status string, output []any) map[string]any {
		r := map[string]any{"id": respID, "object": "response", "created_at": time.Now().Unix(),
			"status": status, "model": model, "output": output}
		if status == "completed" {
			r["usage"] = map[string]any{
				"input_tokens": 1, "input_tokens_details": map[string]int{"cached_tokens": 0},
				"output_tokens": 1, "output_tokens_details": map[string]int{"reasoning_tokens": 0},
				"total_tokens": 2,
			}
		}
		return r
	}
	ev("response.created", map[string]any{"response": resp("in_progress", []any{})})
	ev("response.in_progress", map[string]any{"response": resp("in_progress", []any{})})

	var output []any
	idx := 0
	if p.text != "" || len(p.calls) == 0 {
		itemID := fmt.Sprintf("msg_fake_%d", n)
		ev("response.output_item.added", map[string]any{"output_index": idx, "item": map[string]any{
			"id": itemID, "type": "message", "status": "in_progress", "role": "assistant", "content": []any{}}})
		ev("response.content_part.added", map[string]any{"item_id": itemID, "output_index": idx, "content_index": 0,
			"part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}})
		for _, part := range chunks(p.text, 3) {
			ev("response.output_text.delta", map[string]any{"item_id": itemID, "output_index": idx, "content_index": 0, "delta": part})
		}
		ev("response.output_text.done", map[string]any{"item_id": itemID, "output_index": idx, "content_index": 0, "text": p.text})
		partDone := map[string]any{"type": "output_text", "text": p.text, "annotations": []any{}}
		ev("response.content_part.done", map[string]any{"item_id": itemID, "output_index": idx, "content_index": 0, "part": partDone})
		item := map[string]any{"id": itemID, "type": "message", "status": "completed", "role": "assistant", "content": []any{partDone}}
		ev("response.output_item.done", map[string]any{"output_index": idx, "item": item})
		output = append(output, item)
		idx++
	}
	for j, c := range p.calls {
		itemID := fmt.Sprintf("fc_fake_%d_%d", n, j)
		if c.Freeform {
			item := func(status, input string) map[string]any {
				m := map[string]any{"id": itemID, "type": "custom_tool_call", "status": status,
					"call_id": p.ids[j], "name": c.Name, "input": input}
				if c.Namespace != "" {
					m["namespace"] = c.Namespace
				}
				return m
			}
			ev("response.output_item.added", map[string]any{"output_index": idx, "item": item("in_progress", "")})
			for _, part := range chunks(c.Text, 3) {
				ev("response.custom_tool_call_input.delta", map[string]any{"item_id": itemID, "output_index": idx, "delta": part})
			}
			ev("response.custom_tool_call_input.done", map[string]any{"item_id": itemID, "output_index": idx, "input": c.Text})
			done := item("completed", c.Text)
			ev("response.output_item.done", map[string]any{"output_index": idx, "item": done})
			output = append(output, done)
			idx++
			continue
		}
		args := mustJSON(c.Input)
		item := func(status, arguments string) map[string]any {
			m := map[string]any{"id": itemID, "type": "function_call", "status": status,
				"call_id": p.ids[j], "name": c.Name, "arguments": arguments}
			if c.Namespace != "" {
				m["namespace"] = c.Namespace
			}
			return m
		}
		ev("response.output_item.added", map[string]any{"output_index": idx, "item": item("in_progress", "")})
		for _, part := range chunks(args, 3) {
			ev("response.function_call_arguments.delta", map[string]any{"item_id": itemID, "output_index": idx, "delta": part})
		}
		ev("response.function_call_arguments.done", map[string]any{"item_id": itemID, "output_index": idx, "arguments": args})
		done := item("completed", args)
		ev("response.output_item.done", map[string]any{"output_index": idx, "item": done})
		output = append(output, done)
		idx++
	}
	ev("response.completed", map[string]any{"response": resp("completed", output)})
}

package fakemodel

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// anthRequest is the part of a Messages API request the fake reads.
type anthRequest struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Name string `json:"name"`
		Type string `json:"type"`
	} `json:"tools"`
}

type anthBlock struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Text      string          `json:"text"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

// anthBlocks decodes a message's content: a string (one text block) or an
// array of blocks.
func anthBlocks(raw json.RawMessage) ([]anthBlock, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return []anthBlock{{Type: "text", Text: s}}, nil
	}
	var bs []anthBlock
	if err := json.Unmarshal(raw, &bs); err != nil {
		return nil, fmt.Errorf("content is neither a string nor an array of blocks: %w", err)
	}
	return bs, nil
}

// textOf joins the text of a tool result's content (a string or blocks).
func textOf(raw json.RawMessage) (string, error) {
	bs, err := anthBlocks(raw)
	if err != nil {
		return "", err
	}
	var parts []string
	for _, b := range bs {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n"), nil
}

const anthIDPrefix = "toolu"

func (s *Server) anthropic(w http.ResponseWriter, hr *http.Request, req *Request) {
	defer s.commit(req)
	var ar anthRequest
	if err := json.Unmarshal(req.Body, &ar); err != nil {
		s.fail("request %d: Messages API body: %v", req.Seq, err)
		writeJSONError(w, http.StatusBadRequest, "invalid_request_error", "fakemodel: body is not a Messages API request")
		return
	}
	req.Model, req.Stream = ar.Model, ar.Stream
	for _, t := range ar.Tools {
		req.Tools = append(req.Tools, t.Name)
	}
	var seen []int
	results := map[string]ToolResult{}
	for i, m := range ar.Messages {
		bs, err := anthBlocks(m.Content)
		if err != nil {
			s.fail("request %d: message %d: %v", req.Seq, i, err)
			writeJSONError(w, http.StatusBadRequest, "invalid_request_error", "fakemodel: malformed message content")
			return
		}
		for _, b := range bs {
			switch {
			case m.Role == "assistant" && b.Type == "tool_use":
				if t, _, ok := parseCallID(anthIDPrefix, b.ID); ok {
					seen = append(seen, t)
				}
			case m.Role == "user" && b.Type == "tool_result":
				text, err := textOf(b.Content)
				if err != nil {
					s.fail("request %d: tool_result %s: %v", req.Seq, b.ToolUseID, err)
				}
				results[b.ToolUseID] = ToolResult{CallID: b.ToolUseID, Text: text, IsError: b.IsError}
			}
		}
	}
	var p plan
	if len(req.Tools) == 0 {
		req.Side = true
		p = plan{turn: -1, text: s.sideText()}
	} else {
		p = s.decide(req, seen, results, anthIDPrefix)
		for _, c := range p.calls {
			if c.Freeform {
				err := s.fail("request %d (turn %d): a freeform call (%s) has no Messages API form", req.Seq, p.turn, c.Name)
				p = plan{turn: -1, text: err.Error()}
				break
			}
		}
	}
	s.commit(req)
	if !s.wait(hr, p.hold) {
		return
	}
	msgID := fmt.Sprintf("msg_fake_%d", req.Seq)
	stop := "end_turn"
	if len(p.calls) > 0 {
		stop = "tool_use"
	}
	usage := map[string]int{"input_tokens": 1, "output_tokens": 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}

	if !ar.Stream {
		var content []map[string]any
		if p.text != "" || len(p.calls) == 0 {
			content = append(content, map[string]any{"type": "text", "text": p.text})
		}
		for j, c := range p.calls {
			content = append(content, map[string]any{"type": "tool_use", "id": p.ids[j], "name": c.QualifiedName(), "input": c.Input})
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"id": msgID, "type": "message", "role": "assistant", "model": s.model(req),
			"content": content, "stop_reason": stop, "stop_sequence": nil, "usage": usage,
		})
		return
	}

	e := startSSE(w)
	e.event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": msgID, "type": "message", "role": "assistant", "model": s.model(req),
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": usage,
	}})
	e.event("ping", map[string]any{"type": "ping"})
	idx := 0
	if p.text != "" || len(p.calls) == 0 {
		e.event("content_block_start", map[string]any{"type": "content_block_start", "index": idx,
			"content_block": map[string]any{"type": "text", "text": ""}})
		for _, part := range chunks(p.text, 3) {
			e.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": idx,
				"delta": map[string]any{"type": "text_delta", "text": part}})
		}
		e.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": idx})
		idx++
	}
	for j, c := range p.calls {
		e.event("content_block_start", map[string]any{"type": "content_block_start", "index": idx,
			"content_block": map[string]any{"type": "tool_use", "id": p.ids[j], "name": c.QualifiedName(), "input": map[string]any{}}})
		for _, part := range chunks(mustJSON(c.Input), 3) {
			e.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": idx,
				"delta": map[string]any{"type": "input_json_delta", "partial_json": part}})
		}
		e.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": idx})
		idx++
	}
	e.event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]int{"output_tokens": 1}})
	e.event("message_stop", map[string]any{"type": "message_stop"})
}

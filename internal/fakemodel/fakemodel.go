// Package fakemodel is a scripted stand-in for a model API, started by tests
// on 127.0.0.1 so that the real agent CLIs (Claude Code, Codex) run end to
// end without the internet. It is test support only: nothing under cmd/ or
// pkg/ may import it.
//
// It speaks two wire formats:
//
//   - the Anthropic Messages API, POST /v1/messages (Claude Code adds
//     ?beta=true), streamed as server-sent events (message_start,
//     content_block_start, content_block_delta with text_delta or
//     input_json_delta, content_block_stop, message_delta with stop_reason
//     tool_use or end_turn, message_stop), or one JSON message when the
//     request does not ask for a stream;
//   - the OpenAI Responses API, POST /v1/responses, streamed as server-sent
//     events (response.created, response.output_item.added/.done,
//     response.output_text.delta, response.function_call_arguments.delta,
//     response.completed). MCP tools offered as a namespace (Codex offers
//     {"type":"namespace","name":"mcp__NAME","tools":[...]}) are called by
//     their inner name plus "namespace". Tools offered in an
//     "additional_tools" input item (Codex in code mode) count as offered;
//     a Freeform call is a custom_tool_call with raw text input (code
//     mode's JavaScript exec).
//
// A Scenario is a script of turns. A request that offers tools is part of
// the agent's main loop; the turn that answers it is worked out from the
// conversation the request carries (how many of the fake's own calls it
// already holds), not from a counter, so a client that retries a request
// gets the same turn again. Before a turn answers, the fake collects the
// client's results for the previous turn's calls (matched by call id; a
// missing result is a scenario error) and runs the turn's Check on them, so
// a test can assert, for example, that the refusal reason reached the
// model. A request without tools (Claude Code sends side requests, e.g. for
// a title) is answered with a short harmless text and takes no turn.
//
// Every request is recorded whole — method, path, headers, body — for
// assertions such as "this secret never reached the model API". Anything
// the script did not foresee (a failed Check, a call to a tool the request
// did not offer, an unknown path, a malformed body) is recorded as an error
// that Err reports; where the fake still has to answer, it answers with a
// final text so the client stops instead of looping.
//
// Not covered: token counting, prompt caching, images, reasoning items, the
// Chat Completions API, WebSocket transports, authentication (any key is
// accepted and recorded).
package fakemodel

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// API names the wire format of a recorded request.
type API string

// The wire formats the fake recognises.
const (
	Anthropic API = "anthropic" // POST /v1/messages
	OpenAI    API = "openai"    // POST /v1/responses
	Other     API = "other"     // anything else: answered 404 and recorded as an error
)

// Scenario is the script the fake model follows in the main loop.
type Scenario struct {
	// Model is reported as the model in every response; "" echoes the
	// model the request named.
	Model string
	// Turns are answered in order. Every turn but the last must call at
	// least one tool; the last must not (it is the final answer).
	Turns []Turn
	// SideText answers requests that offer no tools; "" means "OK".
	SideText string
}

// Turn is one answer of the fake model in the main loop.
type Turn struct {
	// Check, when set, inspects the request this turn answers: its
	// Results are the client's results for the previous turn's calls. An
	// error is recorded and the fake ends the conversation with a final
	// text naming it instead of playing the turn.
	Check func(*Request) error
	// Text is said before the calls, or is the final answer when Calls is
	// empty.
	Text string
	// Calls are the tool calls of this turn, emitted in order.
	Calls []ToolCall
	// Hold, when non-nil, delays the answer until it is closed or the
	// client goes away: a model that hangs.
	Hold <-chan struct{}
}

// ToolCall is one tool call the fake model makes.
type ToolCall struct {
	// Namespace is "" for a plain tool (a CLI built-in such as Bash or
	// exec_command) or "mcp__SERVER" for an MCP server's tool. The
	// Anthropic name of the call is Namespace+"__"+Name; the OpenAI call
	// carries Name and Namespace separately.
	Namespace string
	Name      string
	// Input is the call's arguments; it must marshal to a JSON object.
	Input any
	// Freeform makes the call a custom (freeform) tool call whose input is
	// Text, not JSON (Codex's code-mode exec and apply_patch are such
	// tools). Responses API only: the Anthropic side refuses it.
	Freeform bool
	Text     string
	// Unoffered allows a call to a tool the request did not offer (to
	// test that the CLI refuses it). Without it such a call is a scenario
	// error.
	Unoffered bool
}

// MCP is a call of tool on the MCP server named server.
func MCP(server, tool string, input any) ToolCall {
	return ToolCall{Namespace: "mcp__" + server, Name: tool, Input: input}
}

// Builtin is a call of a CLI's own tool (Bash, exec_command, ...) that the
// preset is expected not to offer.
func Builtin(name string, input any) ToolCall {
	return ToolCall{Name: name, Input: input, Unoffered: true}
}

// Freeform is a call of a custom (freeform) tool with raw text input, e.g.
// Codex's code-mode exec.
func Freeform(name, text string) ToolCall {
	return ToolCall{Name: name, Freeform: true, Text: text}
}

// QualifiedName is the call's name as the Anthropic API spells it and as
// Request.Tools lists it: Namespace+"__"+Name, or Name.
func (c ToolCall) QualifiedName() string {
	if c.Namespace == "" {
		return c.Name
	}
	return c.Namespace + "__" + c.Name
}

// Request is one recorded HTTP request and what the fake made of it.
type Request struct {
	Seq      int // 0-based arrival order
	API      API
	Method   string
	Path     string
	RawQuery string
	Header   http.Header
	Body     []byte

	Model  string // the model the request named
	Stream bool
	// Tools are the tools the request offered, qualified as in
	// ToolCall.QualifiedName, in the request's order.
	Tools []string
	// Side is true for a request without tools, answered with SideText.
	Side bool
	// Turn is the index of the scenario turn that answered, or -1.
	Turn int
	// Results are the client's results for the previous turn's calls, in
	// call order (empty for turn 0 and for side requests).
	Results []ToolResult
}

// ToolResult is what the client sent back for one of the fake's calls.
type ToolResult struct {
	CallID  string
	Call    ToolCall
	Text    string // the result's text parts, joined with "\n"
	IsError bool   // Anthropic's is_error; OpenAI results carry no flag
}

// Contains reports whether s occurs in the request's body, path, query or
// any header value.
func (r *Request) Contains(s string) bool {
	if s == "" {
		return false
	}
	if bytes.Contains(r.Body, []byte(s)) || strings.Contains(r.Path, s) || strings.Contains(r.RawQuery, s) {
		return true
	}
	for _, vs := range r.Header {
		for _, v := range vs {
			if strings.Contains(v, s) {
				return true
			}
		}
	}
	return false
}

// Offers reports whether the request offered the tool qualified as name.
func (r *Request) Offers(name string) bool {
	for _, t := range r.Tools {
		if t == name {
			return true
		}
	}
	return false
}

// Server is a running fake model API.
type Server struct {
	sc  Scenario
	ln  net.Listener
	srv *http.Server

	mu       sync.Mutex
	requests []Request
	errs     []error
	served   map[int]bool // turns answered at least once
	done     chan struct{}
	closed   bool
}

// Start validates sc and serves it on 127.0.0.1 at a free port.
func Start(sc Scenario) (*Server, error) {
	if err := sc.validate(); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("fakemodel: listen: %w", err)
	}
	s := &Server{sc: sc, ln: ln, served: map[int]bool{}, done: make(chan struct{})}
	s.srv = &http.Server{Handler: http.HandlerFunc(s.handle)}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

func (sc Scenario) validate() error {
	if len(sc.Turns) == 0 {
		return errors.New("fakemodel: scenario has no turns")
	}
	for i, t := range sc.Turns {
		last := i == len(sc.Turns)-1
		if last && len(t.Calls) > 0 {
			return fmt.Errorf("fakemodel: turn %d is the last and calls tools; the last turn is the final answer", i)
		}
		if !last && len(t.Calls) == 0 {
			return fmt.Errorf("fakemodel: turn %d calls no tool but is not the last", i)
		}
		for j, c := range t.Calls {
			if c.Name == "" {
				return fmt.Errorf("fakemodel: turn %d call %d has no name", i, j)
			}
			if c.Freeform {
				if c.Input != nil {
					return fmt.Errorf("fakemodel: turn %d call %d is freeform and has a JSON input", i, j)
				}
				continue
			}
			in, err := json.Marshal(c.Input)
			if err != nil {
				return fmt.Errorf("fakemodel: turn %d call %d input: %w", i, j, err)
			}
			if len(in) == 0 || in[0] != '{' {
				return fmt.Errorf("fakemodel: turn %d call %d input is not a JSON object: %s", i, j, in)
			}
		}
	}
	return nil
}

// URL is the server's root, http://127.0.0.1:PORT: Claude Code's
// ANTHROPIC_BASE_URL.
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() }

// OpenAIBaseURL is URL()+"/v1": a Responses API provider's base_url.
func (s *Server) OpenAIBaseURL() string { return s.URL() + "/v1" }

// Close stops the server; it also releases every held turn.
func (s *Server) Close() error {
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		close(s.done)
	}
	s.mu.Unlock()
	return s.srv.Close()
}

// Requests returns the recorded requests in arrival order. The records are
// copies; changing them does not change the server's.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// MainRequests returns the recorded requests that a scenario turn answered.
func (s *Server) MainRequests() []Request {
	var out []Request
	for _, r := range s.Requests() {
		if r.Turn >= 0 {
			out = append(out, r)
		}
	}
	return out
}

// Containing returns the recorded requests in which s occurs (see
// Request.Contains).
func (s *Server) Containing(str string) []Request {
	var out []Request
	for _, r := range s.Requests() {
		if r.Contains(str) {
			out = append(out, r)
		}
	}
	return out
}

// Err reports every scenario error recorded so far, joined, or nil.
func (s *Server) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return errors.Join(s.errs...)
}

// Finished reports nil when every turn of the scenario was answered and no
// error was recorded; otherwise what went wrong.
func (s *Server) Finished() error {
	s.mu.Lock()
	var missing []string
	for i := range s.sc.Turns {
		if !s.served[i] {
			missing = append(missing, strconv.Itoa(i))
		}
	}
	s.mu.Unlock()
	err := s.Err()
	if len(missing) > 0 {
		err = errors.Join(err, fmt.Errorf("fakemodel: turns never answered: %s of %d", strings.Join(missing, ","), len(s.sc.Turns)))
	}
	return err
}

func (s *Server) fail(format string, a ...any) error {
	err := fmt.Errorf("fakemodel: "+format, a...)
	s.mu.Lock()
	s.errs = append(s.errs, err)
	s.mu.Unlock()
	return err
}

// maxBody bounds a request body; agent CLIs send well under this.
const maxBody = 32 << 20

func (s *Server) handle(w http.ResponseWriter, hr *http.Request) {
	body, err := readAll(hr, maxBody)
	req := &Request{
		Method: hr.Method, Path: hr.URL.Path, RawQuery: hr.URL.RawQuery,
		Header: hr.Header.Clone(), Body: body, Turn: -1, API: Other,
	}
	s.mu.Lock()
	req.Seq = len(s.requests)
	s.requests = append(s.requests, *req)
	s.mu.Unlock()
	if err != nil {
		s.fail("request %d %s %s: reading body: %v", req.Seq, hr.Method, hr.URL.Path, err)
		http.Error(w, "bad body", http.StatusBadRequest)
		return
	}
	switch {
	case hr.Method == http.MethodPost && hr.URL.Path == "/v1/messages":
		req.API = Anthropic
		s.anthropic(w, hr, req)
	case hr.Method == http.MethodPost && hr.URL.Path == "/v1/responses":
		req.API = OpenAI
		s.openai(w, hr, req)
	default:
		s.fail("request %d: unexpected %s %s", req.Seq, hr.Method, hr.URL.Path)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"error":{"type":"not_found_error","message":"fakemodel: no such endpoint"}}`))
	}
}

// commit stores what the handler has learnt about req so far.
func (s *Server) commit(req *Request) {
	s.mu.Lock()
	s.requests[req.Seq] = *req
	s.mu.Unlock()
}

func readAll(hr *http.Request, limit int64) ([]byte, error) {
	var buf bytes.Buffer
	_, err := buf.ReadFrom(http.MaxBytesReader(nil, hr.Body, limit))
	return buf.Bytes(), err
}

// plan is what the fake decided to answer with.
type plan struct {
	turn  int // -1 for a side or error answer
	text  string
	calls []ToolCall
	ids   []string
	hold  <-chan struct{}
}

// callID is the id of call j of turn i; parseCallID is its inverse.
func callID(prefix string, turn, j int) string {
	return fmt.Sprintf("%s_fake_T%d_%d", prefix, turn, j)
}

func parseCallID(prefix, id string) (turn, j int, ok bool) {
	rest, found := strings.CutPrefix(id, prefix+"_fake_T")
	if !found {
		return 0, 0, false
	}
	a, b, found := strings.Cut(rest, "_")
	if !found {
		return 0, 0, false
	}
	t, err1 := strconv.Atoi(a)
	k, err2 := strconv.Atoi(b)
	if err1 != nil || err2 != nil || t < 0 || k < 0 {
		return 0, 0, false
	}
	return t, k, true
}

// decide picks the answer for a main-loop request. seen holds the turn
// numbers of the fake's calls found in the conversation; results maps call
// id to the client's result.
func (s *Server) decide(req *Request, seen []int, results map[string]ToolResult, idPrefix string) plan {
	next := 0
	for _, t := range seen {
		if t+1 > next {
			next = t + 1
		}
	}
	if next >= len(s.sc.Turns) {
		err := s.fail("request %d: conversation already holds calls of turn %d; the script has %d turns", req.Seq, next-1, len(s.sc.Turns))
		return plan{turn: -1, text: err.Error()}
	}
	if next > 0 {
		prev := s.sc.Turns[next-1]
		for j, c := range prev.Calls {
			id := callID(idPrefix, next-1, j)
			r, ok := results[id]
			if !ok {
				err := s.fail("request %d (turn %d): no result for call %s (%s)", req.Seq, next, id, c.QualifiedName())
				return plan{turn: -1, text: err.Error()}
			}
			r.Call = c
			req.Results = append(req.Results, r)
		}
	}
	t := s.sc.Turns[next]
	req.Turn = next
	s.mu.Lock()
	s.served[next] = true
	s.mu.Unlock()
	if t.Check != nil {
		if err := t.Check(req); err != nil {
			err = s.fail("request %d (turn %d): check: %v", req.Seq, next, err)
			return plan{turn: -1, text: err.Error()}
		}
	}
	for _, c := range t.Calls {
		if !c.Unoffered && !req.Offers(c.QualifiedName()) {
			err := s.fail("request %d (turn %d): calls %s, which the request did not offer (offered: %s)", req.Seq, next, c.QualifiedName(), strings.Join(req.Tools, ", "))
			return plan{turn: -1, text: err.Error()}
		}
	}
	p := plan{turn: next, text: t.Text, calls: t.Calls, hold: t.Hold}
	for j := range t.Calls {
		p.ids = append(p.ids, callID(idPrefix, next, j))
	}
	return p
}

func (s *Server) sideText() string {
	if s.sc.SideText != "" {
		return s.sc.SideText
	}
	return "OK"
}

func (s *Server) model(req *Request) string {
	if s.sc.Model != "" {
		return s.sc.Model
	}
	if req.Model != "" {
		return req.Model
	}
	return "fakemodel"
}

// wait blocks until hold is closed, the client goes away or the server
// closes. It reports whether to go on answering.
func (s *Server) wait(hr *http.Request, hold <-chan struct{}) bool {
	if hold == nil {
		return true
	}
	select {
	case <-hold:
		return true
	case <-hr.Context().Done():
		return false
	case <-s.done:
		return false
	}
}

// sse writes server-sent events, flushing each.
type sse struct {
	w http.ResponseWriter
	f http.Flusher
}

func startSSE(w http.ResponseWriter) *sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	return &sse{w: w, f: f}
}

func (e *sse) event(name string, data any) {
	b, err := json.Marshal(data)
	if err != nil {
		panic("fakemodel: marshal event: " + err.Error()) // our own values only
	}
	fmt.Fprintf(e.w, "event: %s\ndata: %s\n\n", name, b)
	if e.f != nil {
		e.f.Flush()
	}
}

func writeJSONError(w http.ResponseWriter, code int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	b, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]string{"type": typ, "message": msg}})
	_, _ = w.Write(b)
}

// chunks splits s into n roughly equal pieces (at least one), so streamed
// deltas exercise the client's reassembly.
func chunks(s string, n int) []string {
	if len(s) == 0 {
		return []string{""}
	}
	if n < 1 {
		n = 1
	}
	size := (len(s) + n - 1) / n
	var out []string
	for len(s) > 0 {
		k := min(size, len(s))
		// do not split a UTF-8 sequence
		for k < len(s) && s[k]&0xC0 == 0x80 {
			k++
		}
		out = append(out, s[:k])
		s = s[k:]
	}
	return out
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic("fakemodel: " + err.Error()) // validated in Start
	}
	return string(b)
}

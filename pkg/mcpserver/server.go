package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deponent-dev/deponent-action/internal/version"
	"github.com/deponent-dev/deponent-action/pkg/canon"
	"github.com/deponent-dev/deponent-action/pkg/evidence"
	"github.com/deponent-dev/deponent-action/pkg/kernel"
)

// Name is the server's name in the MCP handshake and in generated client
// configurations: its tools reach a model as mcp__deponent__TOOL.
const Name = "deponent"

// DefaultMaxToolCalls is the tool-call limit when Options.MaxToolCalls is 0.
const DefaultMaxToolCalls = 500

// DefaultTailBytes is how much of a command's output a result carries when
// Options.TailBytes is 0: the last 30 KiB.
const DefaultTailBytes = 30 << 10

// MaxArgumentBytes bounds one call's arguments (the go-sdk already bounds a
// whole message at 16 MiB by default).
const MaxArgumentBytes = 16 << 20

// Options wire a Server.
type Options struct {
	// Cell executes and records every call. Required.
	Cell *kernel.Cell
	// Agent is recorded as every entry's agent: the harness's name for the
	// client (a preset's name, "command", "mcp-client"), never a name the
	// client chose and never the harness's own names.
	Agent string
	// MaxToolCalls is how many tool calls run; every later call is refused
	// and recorded (class tool-call-limit). 0 means DefaultMaxToolCalls.
	MaxToolCalls int
	// TailBytes bounds the command output a result carries; 0 means
	// DefaultTailBytes.
	TailBytes int
	// DryRun says, in the tool descriptions, that nothing is executed.
	DryRun bool
	// OnCall, when set, is told of every call once it is recorded, before
	// its result is returned (n is the call's number, from 1). It runs on
	// the call's goroutine: keep it short.
	OnCall func(n int64, call kernel.Call, res kernel.ActResult)
	// Output, when set, says what the Cell does with a command's output
	// (kernel.Call.Output: where to keep it in full) for call n.
	Output func(n int64, call kernel.Call) kernel.Output
}

// Server is Deponent's governed MCP server: five tools, each call through
// the Cell. One Server may serve several sessions (each connection of the
// relay); they share the Cell, the count and the limit.
type Server struct {
	opt     Options
	srv     *mcp.Server
	calls   atomic.Int64 // tool calls received, counted on arrival
	limited atomic.Int64 // calls refused for the limit
	handled sync.WaitGroup

	mu       sync.Mutex
	ledgerEr error // the first call whose entry could not be written
}

// New checks the wiring and builds the server.
func New(o Options) (*Server, error) {
	if o.Cell == nil {
		return nil, errors.New("mcpserver: a Cell is required")
	}
	if err := CheckAgentName(o.Agent); err != nil {
		return nil, err
	}
	if o.MaxToolCalls < 0 {
		return nil, fmt.Errorf("mcpserver: negative tool-call limit %d", o.MaxToolCalls)
	}
	if o.MaxToolCalls == 0 {
		o.MaxToolCalls = DefaultMaxToolCalls
	}
	if o.TailBytes < 0 {
		return nil, fmt.Errorf("mcpserver: negative tail %d", o.TailBytes)
	}
	if o.TailBytes == 0 {
		o.TailBytes = DefaultTailBytes
	}
	s := &Server{opt: o}
	s.srv = mcp.NewServer(&mcp.Implementation{Name: Name, Title: "Deponent governed tools", Version: version.Version},
		&mcp.ServerOptions{Instructions: s.instructions(), Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}}})
	for _, t := range s.tools() {
		s.srv.AddTool(t, s.handle)
	}
	// Every tools/call is counted and recorded, also one naming a tool
	// that does not exist (the SDK would answer it with a protocol error
	// before any handler ran).
	s.srv.AddReceivingMiddleware(s.unknownTools)
	return s, nil
}

// CheckAgentName refuses an agent name an entry may not carry for a
// client: empty, the harness's own names (their entries are judged by
// other rules), or a name with control characters.
func CheckAgentName(a string) error {
	switch {
	case a == "":
		return errors.New("mcpserver: the agent name recorded in entries is empty")
	case a == evidence.AgentCanary || a == evidence.AgentHarness:
		return fmt.Errorf("mcpserver: agent name %q is the harness's own; a client's calls may not be recorded as the harness", a)
	case len(a) > 128 || strings.ContainsFunc(a, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return fmt.Errorf("mcpserver: agent name %q is not a short printable name", a)
	}
	return nil
}

// MCP is the underlying go-sdk server, for Connect or Run on a transport.
func (s *Server) MCP() *mcp.Server { return s.srv }

// Serve runs one session on t until the client ends it (or ctx ends), then
// waits until every call of the session has been recorded.
func (s *Server) Serve(ctx context.Context, t mcp.Transport) error {
	ss, err := s.srv.Connect(ctx, t, nil)
	if err != nil {
		return fmt.Errorf("mcpserver: %w", err)
	}
	stop := context.AfterFunc(ctx, func() { _ = ss.Close() })
	defer stop()
	werr := ss.Wait()
	s.Drain()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return werr
}

// Drain waits until every call that has started has been recorded: the
// SDK cancels the calls in flight when a session ends, and their handlers
// still write their entries.
func (s *Server) Drain() { s.handled.Wait() }

// Calls is how many tool calls were received (refused ones included).
func (s *Server) Calls() int64 { return s.calls.Load() }

// LimitRefusals is how many calls were refused for the tool-call limit.
func (s *Server) LimitRefusals() int64 { return s.limited.Load() }

// MaxToolCalls is the effective limit.
func (s *Server) MaxToolCalls() int { return s.opt.MaxToolCalls }

// LedgerErr is the first failure to record a call, or nil.
func (s *Server) LedgerErr() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ledgerEr
}

// handle serves a call of one of the five tools.
func (s *Server) handle(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return s.call(ctx, req.Params.Name, req.Params.Arguments), nil
}

// unknownTools answers tools/call of a tool this server does not have with
// a recorded BLOCK (class unknown-tool, decided by the gate) as a tool
// error, instead of the SDK's protocol error that nothing would record.
func (s *Server) unknownTools(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != "tools/call" {
			return next(ctx, method, req)
		}
		cr, ok := req.(*mcp.CallToolRequest)
		if !ok || cr.Params == nil || isTool(cr.Params.Name) {
			return next(ctx, method, req)
		}
		return s.call(ctx, cr.Params.Name, cr.Params.Arguments), nil
	}
}

// call counts, checks the limit, parses the arguments strictly, and sends
// the call through the Cell: exactly one entry, before the result returns.
func (s *Server) call(ctx context.Context, tool string, raw []byte) *mcp.CallToolResult {
	s.handled.Add(1)
	defer s.handled.Done()
	n := s.calls.Add(1)
	params, perr := parseArguments(raw)
	call := kernel.Call{Tool: tool, Params: params, Agent: s.opt.Agent}
	var res kernel.ActResult
	switch {
	case n > int64(s.opt.MaxToolCalls):
		s.limited.Add(1)
		res = s.opt.Cell.Refuse(call, evidence.ClassToolCallLimit, fmt.Sprintf(
			"tool call %d is past this session's limit of %d tool calls (max-tool-calls): it was not executed, and no further call will be",
			n, s.opt.MaxToolCalls))
	case perr != nil:
		res = s.opt.Cell.Refuse(call, evidence.ClassMalformed, perr.Error())
	default:
		if s.opt.Output != nil && tool == evidence.ToolRunCmd {
			call.Output = s.opt.Output(n, call)
		}
		res = s.opt.Cell.Do(ctx, call)
	}
	if s.opt.OnCall != nil {
		s.opt.OnCall(n, call, res)
	}
	if res.Entry.Kind() != canon.Object {
		s.mu.Lock()
		if s.ledgerEr == nil {
			s.ledgerEr = fmt.Errorf("call %d (%s) could not be recorded: %v", n, tool, res.Err)
		}
		s.mu.Unlock()
		return errorResult("Deponent could not record this call in its ledger, so its result is withheld and " +
			"no further call will run. Stop and report that the governed session failed.")
	}
	return s.result(tool, res)
}

// parseArguments reads a call's arguments strictly: a JSON object (or
// nothing, read as {}), no duplicate key, valid UTF-8, bounded. What is
// not such an object is refused, and the raw text is kept for the record.
func parseArguments(raw []byte) (map[string]any, error) {
	trimmed := strings.Trim(string(raw), " \t\r\n")
	if trimmed == "" || trimmed == "null" {
		return map[string]any{}, nil
	}
	if len(raw) > MaxArgumentBytes {
		return map[string]any{"arguments": trimmed}, fmt.Errorf("the arguments are %d bytes, over the %d-byte cap", len(raw), MaxArgumentBytes)
	}
	v, err := canon.Parse(raw, canon.Limits{MaxBytes: MaxArgumentBytes, MaxDepth: 32})
	if err != nil {
		return map[string]any{"arguments": trimmed}, fmt.Errorf("the arguments are not strict JSON (%v); send one JSON object with the tool's keys", err)
	}
	if v.Kind() != canon.Object {
		return map[string]any{"arguments": trimmed}, fmt.Errorf("the arguments are a JSON %s; send one JSON object with the tool's keys", v.Kind())
	}
	return kernel.ParamsOf(v), nil
}

package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/deponent-dev/deponent-action/pkg/canon"
	"github.com/deponent-dev/deponent-action/pkg/evidence"
	"github.com/deponent-dev/deponent-action/pkg/gate"
	"github.com/deponent-dev/deponent-action/pkg/jail"
	"github.com/deponent-dev/deponent-action/pkg/kernel"
	"github.com/deponent-dev/deponent-action/pkg/mcprelay"
)

// waitLong bounds waits that only fail when something hangs; no test's
// pass depends on how fast it is.
const waitLong = 60 * time.Second

// fakeJail answers every command with a fixed result, recording the order
// of the scripts it ran and whether two ran at once. A command whose
// script contains "BLOCKME" waits until released or cancelled.
type fakeJail struct {
	mu      sync.Mutex
	order   []string
	running int
	overlap bool
	output  []byte
	started chan string
	release chan struct{}
}

func newFakeJail() *fakeJail {
	return &fakeJail{started: make(chan string, 64), release: make(chan struct{})}
}

func (f *fakeJail) Name() string     { return "bwrap" } // entries must name the run's jail
func (f *fakeJail) Available() error { return nil }
func (f *fakeJail) Run(ctx context.Context, s jail.Spec) (jail.Result, error) {
	f.mu.Lock()
	f.running++
	if f.running > 1 {
		f.overlap = true
	}
	f.order = append(f.order, s.Script)
	out := f.output
	f.mu.Unlock()
	defer func() { f.mu.Lock(); f.running--; f.mu.Unlock() }()
	f.started <- s.Script
	if strings.Contains(s.Script, "BLOCKME") {
		select {
		case <-f.release:
		case <-ctx.Done():
			return jail.Result{Backend: "bwrap", ExitCode: -1, Killed: jail.KilledCanceled, OutputSHA256: evidence.HashOutcome(nil)}, nil
		}
	}
	// Give a concurrent call every chance to overlap this one (the
	// Cell's lock must prevent it; no assertion depends on the timing).
	time.Sleep(2 * time.Millisecond)
	if out == nil {
		out = []byte("ran: " + s.Script + "\n")
	}
	return jail.Result{Backend: "bwrap", ExitCode: 0, Output: out, OutputBytes: int64(len(out)), OutputSHA256: evidence.HashOutcome(out)}, nil
}

func (f *fakeJail) scripts() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.order...)
}

type rig struct {
	sandbox string
	gate    *gate.Gate
	ledger  *evidence.Ledger
	jail    *fakeJail
	server  *Server
	client  *mcp.ClientSession
	conn    net.Conn // the client's end of the connection
	served  chan error
}

func newRig(t *testing.T, o Options) *rig {
	t.Helper()
	sb, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(sb, ".git", "hooks"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(sb, "calc.py"), []byte("def add(a, b):\n    return a - b\n"), 0o644))
	g, err := gate.NewGate(sb, nil)
	require.NoError(t, err)
	l, err := evidence.OpenLedger(evidence.LedgerOptions{})
	require.NoError(t, err)
	fj := newFakeJail()
	c, err := kernel.NewCell(kernel.CellOptions{Gate: g, Ledger: l, Jail: fj})
	require.NoError(t, err)
	o.Cell = c
	if o.Agent == "" {
		o.Agent = "test-agent"
	}
	s, err := New(o)
	require.NoError(t, err)
	r := &rig{sandbox: sb, gate: g, ledger: l, jail: fj, server: s, served: make(chan error, 1)}
	sc, cc := net.Pipe()
	r.conn = cc
	go func() { r.served <- s.Serve(context.Background(), mcprelay.Transport(sc)) }()
	cl := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "0"}, nil)
	r.client, err = cl.Connect(context.Background(), mcprelay.Transport(cc), nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = r.client.Close() })
	return r
}

// call calls tool with args (marshalled as given) and returns the result's
// text and whether it is a tool error.
func (r *rig) call(t *testing.T, tool string, args any) (string, bool) {
	t.Helper()
	res, err := r.client.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	require.NoError(t, err, "a governed call never fails at the protocol level")
	return text(t, res), res.IsError
}

func text(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	var b strings.Builder
	for _, c := range res.Content {
		tc, ok := c.(*mcp.TextContent)
		require.True(t, ok, "content is text: %T", c)
		b.WriteString(tc.Text)
	}
	return b.String()
}

// end closes the client and waits for the server to have recorded every
// call.
func (r *rig) end(t *testing.T) {
	t.Helper()
	require.NoError(t, r.client.Close())
	r.waitServed(t)
}

// disconnect drops the connection under the client, as a client that
// crashes or is killed does, and waits for the server.
func (r *rig) disconnect(t *testing.T) {
	t.Helper()
	require.NoError(t, r.conn.Close())
	r.waitServed(t)
}

func (r *rig) waitServed(t *testing.T) {
	t.Helper()
	select {
	case <-r.served:
	case <-time.After(waitLong):
		t.Fatal("the server did not end after the client closed")
	}
}

func entryField(e canon.Value, k string) string {
	v, ok := e.Get(k)
	if !ok {
		return ""
	}
	if s, isStr := v.AsString(); isStr {
		return s
	}
	return v.String()
}

func param(e canon.Value, k string) string {
	p, _ := e.Get(evidence.FieldParams)
	return evidence.EntryString(p, k)
}

func TestToolsListed(t *testing.T) {
	r := newRig(t, Options{MaxToolCalls: 7})
	res, err := r.client.ListTools(context.Background(), nil)
	require.NoError(t, err)
	var names []string
	byName := map[string]*mcp.Tool{}
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		byName[tool.Name] = tool
		assert.Contains(t, tool.Description, "relative to the workspace root", "%s states the path rule", tool.Name)
		assert.Contains(t, tool.Description, "At most 7 tool calls", "%s states the limit", tool.Name)
		b, err := json.Marshal(tool.InputSchema)
		require.NoError(t, err)
		assert.Contains(t, string(b), `"additionalProperties":false`)
	}
	assert.ElementsMatch(t, Tools, names)
	run := byName["run_cmd"]
	assert.Contains(t, run.Description, "NO network")
	assert.Contains(t, run.Description, "pytest", "the allowlist is named")
	assert.Contains(t, byName["edit_file"].Description, "exactly once")
	assert.Contains(t, byName["write_file"].Description, "use edit_file instead")
	init := r.client.InitializeResult()
	require.NotNil(t, init)
	assert.Equal(t, Name, init.ServerInfo.Name)
	assert.Contains(t, init.Instructions, "hash-chained ledger")
}

// TestAllowedCalls: every tool, allowed, through the official client; one
// entry each, in call order, with the outcome of what was returned.
func TestAllowedCalls(t *testing.T) {
	r := newRig(t, Options{})
	out, isErr := r.call(t, "write_file", map[string]any{"path": "notes/todo.txt", "content": "fix add\n"})
	require.False(t, isErr, out)
	assert.Contains(t, out, "notes/todo.txt written")
	assert.FileExists(t, filepath.Join(r.sandbox, "notes", "todo.txt"))

	out, isErr = r.call(t, "read_file", map[string]any{"path": "calc.py"})
	require.False(t, isErr, out)
	assert.Equal(t, "def add(a, b):\n    return a - b\n", out)

	out, isErr = r.call(t, "run_cmd", map[string]any{"cmd": "python3 -m pytest -q"})
	require.False(t, isErr, out)
	assert.Contains(t, out, "exit code: 0\n")
	assert.Contains(t, out, "output:\nran: ")

	r.end(t)
	es := r.ledger.Entries()
	require.Len(t, es, 3, "exactly one entry per call")
	for i, tool := range []string{"write_file", "read_file", "run_cmd"} {
		assert.Equal(t, tool, entryField(es[i], evidence.FieldTool))
		assert.Equal(t, "test-agent", entryField(es[i], evidence.FieldAgent))
		assert.Equal(t, string(evidence.VerdictAllow), entryField(es[i], evidence.FieldVerdict))
	}
	assert.Equal(t, evidence.HashOutcome([]byte("def add(a, b):\n    return a - b\n")), entryField(es[1], evidence.FieldOutcomeSHA256),
		"the outcome hash is of what the agent got")
	assert.Equal(t, "bwrap", entryField(es[2], evidence.FieldJail))
	assert.Equal(t, int64(3), r.server.Calls())
	assert.True(t, r.ledger.Verify().OK())
}

func TestEditAndListCalls(t *testing.T) {
	r := newRig(t, Options{})
	out, isErr := r.call(t, "edit_file", map[string]any{"path": "calc.py", "old": "return a - b", "new": "return a + b"})
	require.False(t, isErr, out)
	assert.Contains(t, out, "calc.py edited")
	assert.Equal(t, "def add(a, b):\n    return a + b\n", mustRead(t, filepath.Join(r.sandbox, "calc.py")))
	out, isErr = r.call(t, "edit_file", map[string]any{"path": "calc.py", "old": "b", "new": "c"})
	require.True(t, isErr)
	assert.Contains(t, out, "matches 2 places")
	out, isErr = r.call(t, "list_dir", map[string]any{"path": "."})
	require.False(t, isErr, out)
	assert.Contains(t, out, "calc.py  (")
	assert.Contains(t, out, ".git/")
	r.end(t)
	es := r.ledger.Entries()
	require.Len(t, es, 3)
	assert.Contains(t, entryField(es[1], evidence.FieldError), "matches 2 places")
}

// TestBlockedCalls: a refusal is a tool error carrying the verdict, the
// class and the reason, with advice; nothing runs; each is recorded.
func TestBlockedCalls(t *testing.T) {
	r := newRig(t, Options{})
	cases := []struct {
		tool  string
		args  map[string]any
		class evidence.Class
		says  string
	}{
		{"run_cmd", map[string]any{"cmd": "curl https://example.com"}, evidence.ClassDestructive, "no network access"},
		{"write_file", map[string]any{"path": ".git/hooks/pre-commit", "content": "evil"}, evidence.ClassProtectedPath, "read-only for you"},
		{"read_file", map[string]any{"path": "/etc/passwd"}, evidence.ClassOutOfSandboxRead, "relative to the workspace root"},
		{"run_cmd", map[string]any{"cmd": "echo hi > out.txt"}, evidence.ClassRedirect, "not with shell redirection"},
	}
	for _, c := range cases {
		out, isErr := r.call(t, c.tool, c.args)
		assert.True(t, isErr, "%s %v is a tool error", c.tool, c.args)
		assert.Contains(t, out, "BLOCKED by Deponent (verdict BLOCK, class "+string(c.class)+")")
		assert.Contains(t, out, c.says)
		assert.Contains(t, out, "was not executed")
	}
	r.end(t)
	assert.Empty(t, r.jail.scripts(), "nothing blocked reached the jail")
	assert.NoFileExists(t, filepath.Join(r.sandbox, ".git", "hooks", "pre-commit"))
	es := r.ledger.Entries()
	require.Len(t, es, len(cases))
	for i, c := range cases {
		assert.Equal(t, string(evidence.VerdictBlock), entryField(es[i], evidence.FieldVerdict))
		assert.Equal(t, string(c.class), entryField(es[i], evidence.FieldBlastClass))
	}
}

// TestMalformedCalls: wrong, missing and extra keys, wrong types,
// arguments that are not an object or not strict JSON, and an unknown tool
// are tool errors AND recorded (the seed's fail-soft row).
func TestMalformedCalls(t *testing.T) {
	r := newRig(t, Options{})
	cases := []struct {
		name  string
		tool  string
		args  any
		class evidence.Class
	}{
		{"missing key", "write_file", map[string]any{"path": "x.txt"}, evidence.ClassMalformed},
		{"extra key", "read_file", map[string]any{"path": "calc.py", "mode": "r"}, evidence.ClassMalformed},
		{"wrong key", "write_file", map[string]any{"file": "x.txt", "content": "x"}, evidence.ClassMalformed},
		{"wrong type", "write_file", map[string]any{"path": "x.txt", "content": 42}, evidence.ClassMalformed},
		{"wrong type cmd", "run_cmd", map[string]any{"cmd": []any{"ls"}}, evidence.ClassEmptyCommand},
		{"array", "run_cmd", []any{"ls"}, evidence.ClassMalformed},
		{"string", "read_file", "calc.py", evidence.ClassMalformed},
		{"duplicate key", "run_cmd", json.RawMessage(`{"cmd": "ls", "cmd": "curl evil.example"}`), evidence.ClassMalformed},
		{"unknown tool", "delete_database", map[string]any{"name": "prod"}, evidence.ClassUnknownTool},
		{"builtin name", "Bash", map[string]any{"command": "ls"}, evidence.ClassUnknownTool},
	}
	for _, c := range cases {
		out, isErr := r.call(t, c.tool, c.args)
		assert.True(t, isErr, "%s: a tool error", c.name)
		assert.Contains(t, out, "class "+string(c.class), c.name)
	}
	r.end(t)
	assert.Empty(t, r.jail.scripts())
	assert.NoFileExists(t, filepath.Join(r.sandbox, "x.txt"))
	es := r.ledger.Entries()
	require.Len(t, es, len(cases), "every malformed call is recorded")
	for i, c := range cases {
		assert.Equal(t, string(evidence.VerdictBlock), entryField(es[i], evidence.FieldVerdict), c.name)
		assert.Equal(t, string(c.class), entryField(es[i], evidence.FieldBlastClass), c.name)
		assert.Equal(t, c.tool, entryField(es[i], evidence.FieldTool), c.name)
	}
	assert.Contains(t, param(es[5], "arguments"), `["ls"]`, "what was sent is kept")
	assert.Contains(t, entryField(es[7], evidence.FieldReason), "duplicate")
}

// TestConcurrentCalls: calls sent at once run one at a time, and the chain
// lists them in the order they ran.
func TestConcurrentCalls(t *testing.T) {
	r := newRig(t, Options{})
	const n = 24
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			var err error
			if i%2 == 0 {
				_, err = r.client.CallTool(context.Background(), &mcp.CallToolParams{Name: "run_cmd", Arguments: map[string]any{"cmd": fmt.Sprintf("echo %d", i)}})
			} else {
				_, err = r.client.CallTool(context.Background(), &mcp.CallToolParams{Name: "write_file", Arguments: map[string]any{"path": fmt.Sprintf("f%d.txt", i), "content": "x"}})
			}
			assert.NoError(t, err)
		}(i)
	}
	wg.Wait()
	r.end(t)
	assert.False(t, r.jail.overlap, "two commands ran at once")
	var chainOrder []string
	for _, e := range r.ledger.Entries() {
		if entryField(e, evidence.FieldTool) == "run_cmd" {
			chainOrder = append(chainOrder, r.gate.Decide("run_cmd", map[string]any{"cmd": param(e, "cmd")}).Script)
		}
	}
	assert.Equal(t, r.jail.scripts(), chainOrder, "the chain's order is the execution order")
	assert.Len(t, chainOrder, n/2)
	assert.Equal(t, int64(n), r.ledger.Len())
	assert.True(t, r.ledger.Verify().OK())
}

// TestToolCallLimit: past the limit every call is refused, recorded with
// class tool-call-limit, and not executed; the refusal tells the agent to
// stop.
func TestToolCallLimit(t *testing.T) {
	r := newRig(t, Options{MaxToolCalls: 3})
	for i := 0; i < 3; i++ {
		out, isErr := r.call(t, "run_cmd", map[string]any{"cmd": fmt.Sprintf("echo %d", i)})
		require.False(t, isErr, out)
	}
	for i := 0; i < 3; i++ {
		out, isErr := r.call(t, "read_file", map[string]any{"path": "calc.py"})
		require.True(t, isErr)
		assert.Contains(t, out, "class tool-call-limit")
		assert.Contains(t, out, "Stop now and give your final answer")
		assert.NotContains(t, out, "def add", "nothing past the limit is executed")
	}
	out, isErr := r.call(t, "nonsense", nil)
	require.True(t, isErr)
	assert.Contains(t, out, "class tool-call-limit", "an unknown tool past the limit is refused for the limit too")
	r.end(t)
	assert.Len(t, r.jail.scripts(), 3)
	es := r.ledger.Entries()
	require.Len(t, es, 7)
	for _, e := range es[3:] {
		assert.Equal(t, string(evidence.ClassToolCallLimit), entryField(e, evidence.FieldBlastClass))
	}
	assert.Equal(t, int64(4), r.server.LimitRefusals())
	a := evidence.Assess(es, evidence.Governance{Jail: "bwrap"})
	assert.Equal(t, evidence.OutcomeFail, a.Outcome, "a run past its tool-call limit fails closed")
}

// TestCancelMidCall: a call the client cancels while it runs, and one in
// flight when the client disconnects, still write their entries; the
// session goes on after the first.
func TestCancelMidCall(t *testing.T) {
	r := newRig(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := r.client.CallTool(ctx, &mcp.CallToolParams{Name: "run_cmd", Arguments: map[string]any{"cmd": "echo BLOCKME"}})
		done <- err
	}()
	waitStarted(t, r.jail)
	cancel()
	require.Error(t, <-done, "the client's call was cancelled")
	// The session goes on.
	out, isErr := r.call(t, "read_file", map[string]any{"path": "calc.py"})
	require.False(t, isErr, out)

	// A call in flight when the client goes away.
	go func() {
		_, err := r.client.CallTool(context.Background(), &mcp.CallToolParams{Name: "run_cmd", Arguments: map[string]any{"cmd": "echo BLOCKME again"}})
		done <- err
	}()
	waitStarted(t, r.jail)
	r.disconnect(t)
	<-done
	es := r.ledger.Entries()
	require.Len(t, es, 3, "both cancelled calls are recorded")
	assert.Equal(t, "run_cmd", entryField(es[0], evidence.FieldTool))
	assert.Equal(t, jail.KilledCanceled, entryField(es[0], evidence.FieldKilled))
	assert.Equal(t, "read_file", entryField(es[1], evidence.FieldTool))
	assert.Equal(t, jail.KilledCanceled, entryField(es[2], evidence.FieldKilled))
	assert.True(t, r.ledger.Verify().OK())
}

func waitStarted(t *testing.T, fj *fakeJail) {
	t.Helper()
	select {
	case <-fj.started:
	case <-time.After(waitLong):
		t.Fatal("the command did not start")
	}
}

// TestLedgerFailureRefuses: once an entry cannot be written, the call's
// result is withheld and nothing more runs.
func TestLedgerFailureRefuses(t *testing.T) {
	sb := t.TempDir()
	g, err := gate.NewGate(sb, nil)
	require.NoError(t, err)
	l, err := evidence.OpenLedger(evidence.LedgerOptions{Path: filepath.Join(t.TempDir(), "l.jsonl"), NoSync: true})
	require.NoError(t, err)
	fj := newFakeJail()
	c, err := kernel.NewCell(kernel.CellOptions{Gate: g, Ledger: l, Jail: fj})
	require.NoError(t, err)
	s, err := New(Options{Cell: c, Agent: "test-agent"})
	require.NoError(t, err)
	sc, cc := net.Pipe()
	go func() { _ = s.Serve(context.Background(), mcprelay.Transport(sc)) }()
	ct := mcprelay.Transport(cc)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "0"}, nil).Connect(context.Background(), ct, nil)
	require.NoError(t, err)
	defer cs.Close()
	require.NoError(t, l.Close()) // the ledger can no longer be written
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "write_file", Arguments: map[string]any{"path": "a.txt", "content": "x"}})
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Contains(t, text(t, res), "could not record this call")
	assert.NoFileExists(t, filepath.Join(sb, "a.txt"))
	res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "run_cmd", Arguments: map[string]any{"cmd": "ls"}})
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Empty(t, fj.scripts(), "nothing runs that cannot be recorded")
	assert.Error(t, s.LedgerErr())
}

func TestOutputTail(t *testing.T) {
	r := newRig(t, Options{TailBytes: 1024})
	big := strings.Repeat("x", 5000) + "END\n"
	r.jail.output = []byte(big)
	out, isErr := r.call(t, "run_cmd", map[string]any{"cmd": "python3 -m pytest"})
	require.False(t, isErr)
	assert.Contains(t, out, "the last 1024 of 5004 bytes")
	assert.True(t, strings.HasSuffix(out, "END\n"))
	assert.Less(t, len(out), 1400)
	r.end(t)
	e := r.ledger.Entries()[0]
	assert.Equal(t, evidence.HashOutcome([]byte(big)), entryField(e, evidence.FieldOutcomeSHA256), "the ledger hashes the full output")
}

func TestOptions(t *testing.T) {
	_, err := New(Options{})
	assert.Error(t, err)
	sb := t.TempDir()
	g, _ := gate.NewGate(sb, nil)
	l, _ := evidence.OpenLedger(evidence.LedgerOptions{})
	c, _ := kernel.NewCell(kernel.CellOptions{Gate: g, Ledger: l})
	for _, a := range []string{"", evidence.AgentHarness, evidence.AgentCanary, "a\nb"} {
		_, err := New(Options{Cell: c, Agent: a})
		assert.Error(t, err, "agent %q", a)
	}
	_, err = New(Options{Cell: c, Agent: "x", MaxToolCalls: -1})
	assert.Error(t, err)
	s, err := New(Options{Cell: c, Agent: "x"})
	require.NoError(t, err)
	assert.Equal(t, DefaultMaxToolCalls, s.MaxToolCalls())
}

func mustRead(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return string(b)
}

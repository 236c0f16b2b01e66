package action

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/deponent-dev/deponent-action/internal/agenttest"
	"github.com/deponent-dev/deponent-action/internal/fakemodel"
	"github.com/deponent-dev/deponent-action/pkg/agent"
	"github.com/deponent-dev/deponent-action/pkg/evidence"
	"github.com/deponent-dev/deponent-action/pkg/gate"
)

// mcpProject is a workspace with the failing test and a receipts directory
// beside it.
func mcpProject(t *testing.T) (ws, receipts string) {
	t.Helper()
	requireJail(t)
	root := resolvedTemp(t)
	ws, receipts = filepath.Join(root, "ws"), filepath.Join(root, "receipts")
	require.NoError(t, os.MkdirAll(ws, 0o755))
	for name, content := range map[string]string{"calc.py": calcBroken, "test_calc.py": calcTest} {
		require.NoError(t, os.WriteFile(filepath.Join(ws, name), []byte(content), 0o644))
	}
	return ws, receipts
}

// localEnv is a developer's environment: no GITHUB_* variables.
func localEnv() []string {
	return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "LANG=C.UTF-8"}
}

// TestMCPSubcommand: `deponent-action mcp` as a stdio MCP server driven by
// the official go-sdk client: the canaries run first, every call is gated,
// confined and recorded, and when the client disconnects the verify-command
// runs and the receipt is persisted, verified, and accepted by
// deponent-verify.
func TestMCPSubcommand(t *testing.T) {
	t.Parallel()
	ws, receipts := mcpProject(t)
	cmd := exec.Command(actionBin, "mcp", "--sandbox", ws, "--receipts-dir", receipts, "--verify-command", testCmd,
		"--on-block", "continue", "--max-tool-calls", "10")
	cmd.Env = localEnv()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "local-client", Version: "0"}, nil).
		Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 3 * time.Minute}, nil)
	require.NoError(t, err)
	call := func(tool string, args map[string]any) (string, bool) {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		require.NoError(t, err)
		var b strings.Builder
		for _, c := range res.Content {
			b.WriteString(c.(*mcp.TextContent).Text)
		}
		return b.String(), res.IsError
	}
	out, isErr := call("run_cmd", map[string]any{"cmd": testCmd})
	require.False(t, isErr, out)
	assert.Contains(t, out, "exit code: 1")
	out, isErr = call("write_file", map[string]any{"path": "calc.py", "content": calcFixed})
	require.False(t, isErr, out)
	out, isErr = call("run_cmd", map[string]any{"cmd": "curl https://example.com"})
	require.True(t, isErr)
	assert.Contains(t, out, "BLOCKED by Deponent")
	require.NoError(t, cs.Close(), "the relay ends with the session; stderr:\n%s", stderr.String())
	require.True(t, cmd.ProcessState.Success(), "stderr:\n%s", stderr.String())

	// The detached session server finishes the run after the client is
	// gone: the receipt follows.
	serverLog := logPath(t, stderr.String())
	paths := waitReceipt(t, receipts, serverLog)
	log := logOf(serverLog)
	assert.Contains(t, log, "GOVERNED_PASS")
	v := verifyReceipt(t, paths[0])
	assert.Equal(t, evidence.OutcomePass, v.R.Outcome)
	assert.Equal(t, "", v.Gov.Agent, "a standalone session runs no agent itself")
	var tools []string
	for _, e := range v.R.Entries {
		if entryField(e, evidence.FieldAgent) == serveClient {
			tools = append(tools, entryField(e, evidence.FieldTool)+" "+entryField(e, evidence.FieldVerdict))
		}
	}
	assert.Equal(t, []string{"run_cmd ALLOW", "write_file ALLOW", "run_cmd BLOCK"}, tools)
	assert.Equal(t, 6, v.A.CanariesRun, "the canaries ran first")
	assert.True(t, v.A.VerifyPassed)
	assert.Empty(t, dirEntriesMatching(t, receipts, "ledger-"), "the working ledger was retired")
	verifierPasses(t, paths[0], "--require-outcome", string(evidence.OutcomePass), "--require-jailed",
		"--expect-policy-sha256", gate.DefaultPolicy().SHA256())
}

func dirEntriesMatching(t *testing.T, dir, sub string) []string {
	var out []string
	for _, p := range dirEntries(t, dir) {
		if strings.Contains(filepath.Base(p), sub) {
			out = append(out, p)
		}
	}
	return out
}

// TestMCPSubcommandFromMCPJSON: a local Claude Code started with a
// .mcp.json whose server is `deponent-action mcp` uses the governed tools,
// and the receipt is on disk when it exits.
func TestMCPSubcommandFromMCPJSON(t *testing.T) {
	t.Parallel()
	cli := agenttest.CLI(t, agent.Claude)
	ws, receipts := mcpProject(t)
	fm, err := fakemodel.Start(fakemodel.Scenario{Turns: []fakemodel.Turn{
		{Calls: []fakemodel.ToolCall{fakemodel.MCP(agent.ServerName, "write_file", map[string]any{"path": "calc.py", "content": calcFixed})}},
		{Check: resultHas("OK: calc.py written"), Calls: []fakemodel.ToolCall{fakemodel.MCP(agent.ServerName, "run_cmd", map[string]any{"cmd": testCmd})}},
		{Check: resultHas("exit code: 0"), Text: "Done."},
	}})
	require.NoError(t, err)
	defer fm.Close()
	home, tmp := filepath.Join(filepath.Dir(ws), "home"), filepath.Join(filepath.Dir(ws), "tmp")
	require.NoError(t, os.Mkdir(home, 0o700))
	require.NoError(t, os.Mkdir(tmp, 0o700))
	token := agenttest.Token()
	// The server's log (its stderr, which Claude Code would swallow) goes
	// to a file for the failure message.
	serverLog := filepath.Join(filepath.Dir(ws), "server.log")
	server := agent.MCPServer{Command: "/bin/sh", Args: []string{"-c", `exec "$0" "$@" 2>>` + serverLog,
		actionBin, "mcp", "--sandbox", ws, "--receipts-dir", receipts, "--verify-command", testCmd},
		Env: map[string]string{agenttest.TokenEnv: token}}
	inv, err := agent.Build(agent.Claude, agent.Options{Task: "fix calc.py", MCPConfig: filepath.Join(filepath.Dir(ws), "cfg", ".mcp.json"),
		Server: server, Home: home, TmpDir: tmp, PATH: strings.Join([]string{filepath.Dir(cli), "/usr/local/bin", "/usr/bin", "/bin"}, ":"),
		AgentEnv: map[string]string{"ANTHROPIC_BASE_URL": fm.URL(), "ANTHROPIC_API_KEY": "sk-ant-fake", agenttest.TokenEnv: token}})
	require.NoError(t, err)
	require.NoError(t, inv.WriteFiles())
	// Run as a developer would (agenttest.Run would count the server that
	// is still writing the receipt as a leftover: it carries the token).
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, cli, inv.Argv[1:]...)
	cmd.Env, cmd.Dir = inv.Env, ws
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "stderr:\n%s", stderr.String())
	require.NoError(t, fm.Finished(), "stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	assert.Equal(t, calcFixed, readText(t, filepath.Join(ws, "calc.py")))
	// Claude Code ends its server as it exits (SIGTERM, then SIGKILL): the
	// detached session server finishes the run and writes the receipt.
	paths := waitReceipt(t, receipts, logPath(t, logOf(serverLog)))
	require.Eventually(t, func() bool { return len(agenttest.Leftovers(token)) == 0 }, time.Minute, 100*time.Millisecond,
		"the server exits once the receipt is written")
	v := verifyReceipt(t, paths[0])
	assert.Equal(t, evidence.OutcomePass, v.R.Outcome, "%v", v.A.Reasons)
	verifierPasses(t, paths[0], "--require-outcome", string(evidence.OutcomePass), "--require-jailed",
		"--expect-policy-sha256", gate.DefaultPolicy().SHA256())
}

// verifierPasses runs deponent-verify with flags on a local receipt (no
// commit or repository recorded) and requires it to accept it.
func verifierPasses(t *testing.T, path string, flags ...string) {
	t.Helper()
	if verifyBin == "" {
		t.Fatalf("deponent-verify was not built, so %s cannot be verified: %s", path, verifyNote)
	}
	out, err := exec.Command(verifyBin, append(flags, path)...).CombinedOutput()
	require.NoError(t, err, "deponent-verify %v must accept the receipt:\n%s", flags, out)
}

func logOf(p string) string {
	b, _ := os.ReadFile(p)
	return string(b)
}

// logPath reads the session server's log path from what the foreground
// process said on stderr.
func logPath(t *testing.T, stderr string) string {
	t.Helper()
	_, after, ok := strings.Cut(stderr, "its log: ")
	require.True(t, ok, "the foreground process names the session server's log:\n%s", stderr)
	p, _, _ := strings.Cut(after, "\n")
	return strings.TrimSpace(p)
}

// waitReceipt waits for the session server to have written one receipt and
// retired its ledger, and for it to have exited.
func waitReceipt(t *testing.T, receipts, serverLog string) []string {
	t.Helper()
	var paths []string
	require.Eventually(t, func() bool {
		paths, _ = filepath.Glob(filepath.Join(receipts, "deponent", "*.json"))
		// The log's last line is the last local output; "outputs" alone
		// also matches a step's "full output: …/outputs-…" line, long
		// before the run ends.
		return len(paths) == 1 && len(dirEntriesMatching(t, receipts, "ledger-")) == 0 && strings.Contains(logOf(serverLog), "\n  step-errors=")
	}, 3*time.Minute, 100*time.Millisecond, "the receipt is persisted after the client is gone; server log:\n%s", logOf(serverLog))
	return paths
}

package action

// End-to-end tests of a live agent through the ACTION: the built binary in a
// simulated Actions step, the real pinned CLIs (found by DEPONENT_CLAUDE and
// DEPONENT_CODEX, as .ci/run exports them) driven offline against
// internal/fakemodel, and stand-in agents (testdata/agents/mcpclient.py)
// for the failure modes. None may skip in CI (DEPONENT_REQUIRE_AGENTS=1,
// DEPONENT_REQUIRE_JAIL=1).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/deponent-dev/deponent-action/internal/agenttest"
	"github.com/deponent-dev/deponent-action/internal/fakemodel"
	"github.com/deponent-dev/deponent-action/pkg/agent"
	"github.com/deponent-dev/deponent-action/pkg/canon"
	"github.com/deponent-dev/deponent-action/pkg/evidence"
	"github.com/deponent-dev/deponent-action/pkg/gate"
)

// runnerSecret is set in the runner's environment (not in agent-env): it
// must reach neither the model API, nor the workspace, nor a tool result.
const runnerSecret = "RUNNER-SECRET-e2e-5b1d7c"

// The project the agent fixes: a failing unit test.
const (
	calcBroken = "def add(a, b):\n    return a - b\n"
	calcFixed  = "def add(a, b):\n    return a + b\n"
	calcTest   = "import unittest\n\nfrom calc import add\n\n\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n\n\nif __name__ == \"__main__\":\n    unittest.main()\n"
	testCmd    = "python3 -m unittest -q test_calc"
)

// agentRun is a simulated Actions step with a small Python project in the
// workspace and a live agent configured.
func agentRun(t *testing.T) *fakeRun {
	t.Helper()
	requireJail(t)
	f := newActionsRun(t)
	for name, content := range map[string]string{"calc.py": calcBroken, "test_calc.py": calcTest, "README.md": "# calc\n"} {
		require.NoError(t, os.WriteFile(filepath.Join(f.Workspace, name), []byte(content), 0o644))
	}
	require.NoError(t, os.MkdirAll(filepath.Join(f.Workspace, ".git", "hooks"), 0o755))
	f.Set("DEPONENT_E2E_RUNNER_SECRET", runnerSecret)
	f.Input("verify-command", testCmd).Input("task", "The unit tests fail. Fix calc.py so that they pass.")
	return f
}

// useClient makes the stand-in agent (mcpclient.py, copied into the
// workspace where the agent jail can read it) the agent-command.
func useClient(t *testing.T, f *fakeRun, args string) {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(moduleRoot, "pkg", "action", "testdata", "agents", "mcpclient.py"))
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(f.Workspace, ".agent"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(f.Workspace, ".agent", "mcpclient.py"), src, 0o644))
	f.Input("agent-command", "python3 .agent/mcpclient.py "+args)
}

// resultHas checks that the client's result for the previous turn's first
// call contains every want: what the model received.
func resultHas(want ...string) func(*fakemodel.Request) error {
	return func(r *fakemodel.Request) error {
		if len(r.Results) == 0 {
			return fmt.Errorf("no tool result in the request")
		}
		for _, w := range want {
			if !strings.Contains(r.Results[0].Text, w) {
				return fmt.Errorf("the result %q lacks %q", r.Results[0].Text, w)
			}
		}
		return nil
	}
}

// builtinCall is each CLI's shell tool, which the preset must refuse, and
// the refusal the model gets.
var builtinCall = map[agent.Preset]struct {
	call    fakemodel.ToolCall
	refusal string
}{
	agent.Claude: {fakemodel.Builtin("Bash", map[string]any{"command": "touch builtin-ran"}), "No such tool available: Bash"},
	agent.Codex:  {fakemodel.Builtin("exec_command", map[string]any{"cmd": "touch builtin-ran"}), "unsupported call: exec_command"},
}

// TestAgentPresetThroughTheAction is the scenario for each preset:
// the agent runs the failing tests, reads the file, fixes it, runs the tests
// again, tries curl and a write to .git/hooks (both refused, and the model
// gets the refusal reason), asks for its CLI's shell (refused by the CLI),
// then answers. The receipt's entries are exactly the scenario's, the
// verify-command passed, the verifier accepts the receipt with its strict
// flags, the runner's secret reached neither the model API nor the
// workspace nor a tool result, and no process is left.
func TestAgentPresetThroughTheAction(t *testing.T) {
	for _, p := range agent.Presets {
		t.Run(string(p), func(t *testing.T) {
			cli := agenttest.CLI(t, p)
			f := agentRun(t)
			edit := fakemodel.MCP(agent.ServerName, "edit_file", map[string]any{"path": "calc.py", "old": "return a - b", "new": "return a + b"})
			bi := builtinCall[p]
			mcp := func(tool string, in map[string]any) fakemodel.ToolCall {
				return fakemodel.MCP(agent.ServerName, tool, in)
			}
			turns := []fakemodel.Turn{
				{Text: "Running the tests.", Calls: []fakemodel.ToolCall{mcp("run_cmd", map[string]any{"cmd": testCmd})}},
				{Check: resultHas("exit code: 1", "FAILED"), Calls: []fakemodel.ToolCall{mcp("read_file", map[string]any{"path": "calc.py"})}},
				{Check: resultHas("return a - b"), Calls: []fakemodel.ToolCall{edit}},
				{Check: resultHas("OK: calc.py"), Calls: []fakemodel.ToolCall{mcp("run_cmd", map[string]any{"cmd": testCmd})}},
				{Check: resultHas("exit code: 0", "OK"), Calls: []fakemodel.ToolCall{mcp("run_cmd", map[string]any{"cmd": "curl https://example.com"})}},
				{Check: resultHas("BLOCKED by Deponent", "class destructive-or-out-of-scope", "denylist entry 'curl'"),
					Calls: []fakemodel.ToolCall{mcp("write_file", map[string]any{"path": ".git/hooks/pre-commit", "content": "#!/bin/sh\necho pwned\n"})}},
				{Check: resultHas("BLOCKED by Deponent", "class protected-path"), Calls: []fakemodel.ToolCall{bi.call}},
				{Check: resultHas(bi.refusal), Text: "Fixed: add() now adds."},
			}
			fm, err := fakemodel.Start(fakemodel.Scenario{Turns: turns})
			require.NoError(t, err)
			t.Cleanup(func() { _ = fm.Close() })

			f.Set("PATH", filepath.Dir(cli)+string(filepath.ListSeparator)+f.env["PATH"])
			f.Input("agent", string(p)).Input("on-block", "continue")
			switch p {
			case agent.Claude:
				f.Set("ANTHROPIC_BASE_URL", fm.URL()).Set("ANTHROPIC_API_KEY", "sk-ant-fake")
				f.Input("agent-env", "ANTHROPIC_BASE_URL ANTHROPIC_API_KEY")
			case agent.Codex:
				f.Set("OPENAI_BASE_URL", fm.OpenAIBaseURL()).Set("OPENAI_API_KEY", "sk-openai-fake")
				f.Input("agent-env", "OPENAI_BASE_URL, OPENAI_API_KEY")
			}
			r := f.Run()
			require.NoError(t, fm.Finished(), "the model's script did not finish")
			require.Equal(t, 0, r.Code, "GOVERNED_PASS")
			o := r.Outputs
			assert.Equal(t, string(evidence.OutcomePass), o["outcome"])

			// What happened in the workspace.
			assert.Equal(t, calcFixed, readText(t, filepath.Join(f.Workspace, "calc.py")))
			assert.NoFileExists(t, filepath.Join(f.Workspace, ".git", "hooks", "pre-commit"))
			assert.NoFileExists(t, filepath.Join(f.Workspace, "builtin-ran"), "the CLI's shell did not run")

			v := verifyReceipt(t, o["receipt-path"])
			assert.Equal(t, string(p), v.Gov.Agent)
			var steps []string
			for _, e := range v.R.Entries[6:] { // after the six canaries
				s := entryField(e, evidence.FieldAgent) + " " + entryField(e, evidence.FieldTool) + " " + entryField(e, evidence.FieldVerdict)
				if c := entryField(e, evidence.FieldBlastClass); entryField(e, evidence.FieldVerdict) == "BLOCK" {
					s += " " + c
				}
				if x := entryField(e, evidence.FieldExitCode); x != "" {
					s += " exit " + x
				}
				steps = append(steps, s)
			}
			a := string(p)
			assert.Equal(t, []string{
				a + " run_cmd ALLOW exit 1",
				a + " read_file ALLOW",
				a + " edit_file ALLOW",
				a + " run_cmd ALLOW exit 0",
				a + " run_cmd BLOCK destructive-or-out-of-scope",
				a + " write_file BLOCK protected-path",
				"deponent-harness agent_session ALLOW exit 0",
				"deponent-harness run_cmd ALLOW exit 0",
			}, steps, "the receipt's entries are the scenario's, in order; the refused built-in never reached Deponent")
			session := v.R.Entries[len(v.R.Entries)-2]
			assert.Equal(t, "6", entryField(session, evidence.FieldToolCalls))
			assert.True(t, v.A.VerifyPassed)

			ag, present, err := evidence.ParseAgentRecord(v.R.Body)
			require.NoError(t, err)
			require.True(t, present)
			assert.Equal(t, a, ag.Kind)
			assert.Equal(t, p.DefaultVersion(), ag.CLIVersion, "the CLI's version, as it reported it")
			assert.Equal(t, int64(6), ag.ToolCalls)
			assert.Equal(t, "bwrap", ag.Jail)
			assert.False(t, ag.Unjailed)
			assert.Equal(t, "completed", ag.Status)
			assert.Empty(t, evidence.CheckAgentRecord(v.R.Body, v.R.Entries, v.Gov))
			transcript, err := os.ReadFile(filepath.Join(filepath.Dir(o["receipt-path"]), ag.Transcript))
			require.NoError(t, err)
			assert.Equal(t, ag.TranscriptSHA256, evidence.HashOutcome(transcript), "the transcript beside the receipt is the one recorded")
			if p == agent.Claude {
				assert.Equal(t, fm.MainRequests()[0].Model, ag.Model, "the model the CLI reported")
				assert.Equal(t, ag.Model, v.R.Model)
			}
			verifierAccepts(t, o["receipt-path"], testSHA, f.Repo, strictVerifyFlags(2)...)

			// The runner's secrets went nowhere.
			for _, s := range []string{runnerSecret, "ghs_e2eSECRETtokenValue"} {
				assert.Empty(t, fm.Containing(s), "a runner secret reached the model API")
				assert.NotContains(t, string(transcript), s, "a runner secret reached a tool result")
				assert.NotContains(t, readText(t, o["receipt-path"]), s)
				assertNotInTree(t, f.Workspace, s)
			}
			assert.NotEmpty(t, fm.Containing("Fix calc.py"), "the task reached the model as the prompt")
			assert.Contains(t, r.Summary, "### Agent")
			assert.Empty(t, leftovers(t, f), "no process of the run is left")
		})
	}
}

// strictVerifyFlags are the verifier's strictest policies: its strict
// defaults (a recomputed GOVERNED_PASS, canaries held, every command in a
// real jail), the run's policy, and at most the blocks the scenario makes.
func strictVerifyFlags(maxBlocked int) []string {
	return []string{"--require-outcome", string(evidence.OutcomePass), "--require-jailed",
		"--expect-policy-sha256", gate.DefaultPolicy().SHA256(), "--max-blocked", strconv.Itoa(maxBlocked)}
}

func entryField(e canon.Value, k string) string {
	s, _ := field(e, k)
	return s
}

func readText(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return string(b)
}

func assertNotInTree(t *testing.T, root, s string) {
	t.Helper()
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if b, rerr := os.ReadFile(p); rerr == nil {
				assert.NotContains(t, string(b), s, "%s holds a runner secret", p)
			}
		}
		return nil
	})
}

// leftovers lists live processes whose command line or environment names
// the test's directories: anything of the run (agent, relay, commands)
// that outlived the action. Linux only (/proc).
func leftovers(t *testing.T, f *fakeRun) []string {
	t.Helper()
	if runtime.GOOS != "linux" {
		return nil
	}
	needle := []byte(filepath.Dir(f.RunnerTemp))
	ents, err := os.ReadDir("/proc")
	require.NoError(t, err)
	var out []string
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		stat, _ := os.ReadFile("/proc/" + e.Name() + "/stat")
		if i := bytes.LastIndexByte(stat, ')'); i > 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
			continue
		}
		for _, file := range []string{"cmdline", "environ"} {
			b, _ := os.ReadFile("/proc/" + e.Name() + "/" + file)
			if bytes.Contains(b, needle) {
				out = append(out, e.Name()+": "+strings.ReplaceAll(string(b), "\x00", " "))
				break
			}
		}
	}
	return out
}

// agentOutcome runs the stand-in agent in mode and returns the verified
// receipt and the agent_session entry.
func agentOutcome(t *testing.T, f *fakeRun) (result, verified, canon.Value) {
	t.Helper()
	r := f.Run()
	require.NotEmpty(t, r.Outputs["receipt-path"], "a receipt is written whatever the agent did")
	v := verifyReceipt(t, r.Outputs["receipt-path"])
	var session canon.Value
	for _, e := range v.R.Entries {
		if entryField(e, evidence.FieldTool) == evidence.ToolAgentSession {
			session = e
		}
	}
	require.Equal(t, canon.Object, session.Kind(), "the agent_session entry")
	assert.Empty(t, evidence.CheckAgentRecord(v.R.Body, v.R.Entries, v.Gov))
	assert.Empty(t, leftovers(t, f), "no process of the run is left")
	return r, v, session
}

// TestAgentCommandThroughTheAction: a custom agent-command gets the MCP
// config and works through the relay; its calls are recorded like a
// preset's.
func TestAgentCommandThroughTheAction(t *testing.T) {
	t.Parallel()
	f := agentRun(t)
	calls := `[{"name": "run_cmd", "arguments": {"cmd": "` + testCmd + `"}},
	 {"name": "write_file", "arguments": {"path": "calc.py", "content": "def add(a, b):\n    return a + b\n"}},
	 {"name": "run_cmd", "arguments": {"cmd": "` + testCmd + `"}}]`
	require.NoError(t, os.MkdirAll(filepath.Join(f.Workspace, ".agent"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(f.Workspace, ".agent", "calls.json"), []byte(calls), 0o644))
	useClient(t, f, "calls .agent/calls.json")
	r, v, session := agentOutcome(t, f)
	require.Equal(t, 0, r.Code)
	assert.Equal(t, evidence.OutcomePass, v.R.Outcome)
	assert.Equal(t, AgentCommand, v.Gov.Agent)
	assert.Equal(t, "3", entryField(session, evidence.FieldToolCalls))
	assert.Equal(t, "0", entryField(session, evidence.FieldExitCode))
	assert.Equal(t, calcFixed, readText(t, filepath.Join(f.Workspace, "calc.py")))
	ag, _, err := evidence.ParseAgentRecord(v.R.Body)
	require.NoError(t, err)
	assert.Equal(t, "python3 .agent/mcpclient.py calls .agent/calls.json", ag.Command)
	transcript := readText(t, filepath.Join(filepath.Dir(r.Outputs["receipt-path"]), ag.Transcript))
	assert.Equal(t, 3, strings.Count(transcript, `"result"`), "the transcript is the agent's stdout")
	verifierAccepts(t, r.Outputs["receipt-path"], testSHA, f.Repo, strictVerifyFlags(0)...)
}

// TestAgentCommandCannotWriteTheWorkspace: an agent that writes the
// workspace itself, not through Deponent's tools, fails in the agent jail
// and leaves no file. (The jail package's live tests hold the unjailed
// control that shows the same write succeeding.)
func TestAgentCommandCannotWriteTheWorkspace(t *testing.T) {
	t.Parallel()
	f := agentRun(t)
	useClient(t, f, "selfwrite")
	r, v, session := agentOutcome(t, f)
	assert.NoFileExists(t, filepath.Join(f.Workspace, "hacked.txt"))
	ag, _, err := evidence.ParseAgentRecord(v.R.Body)
	require.NoError(t, err)
	transcript := readText(t, filepath.Join(filepath.Dir(r.Outputs["receipt-path"]), ag.Transcript))
	assert.Contains(t, transcript, "refused:", "the write failed in the jail")
	assert.NotContains(t, transcript, "WROTE")
	assert.Equal(t, "0", entryField(session, evidence.FieldToolCalls))
	assert.Equal(t, evidence.OutcomeFail, v.R.Outcome, "the tests still fail")
}

// TestAgentCrash: an agent that dies mid-session — its exit code is
// recorded as testimony; the outcome is the verify-command's (the tests
// still fail).
func TestAgentCrash(t *testing.T) {
	t.Parallel()
	f := agentRun(t)
	useClient(t, f, "crash")
	r, v, session := agentOutcome(t, f)
	assert.Equal(t, 1, r.Code)
	assert.Equal(t, "3", entryField(session, evidence.FieldExitCode))
	assert.Equal(t, "1", entryField(session, evidence.FieldToolCalls))
	_, killed := field(session, evidence.FieldKilled)
	assert.False(t, killed)
	assert.Equal(t, evidence.OutcomeFail, v.R.Outcome)
	assert.True(t, v.A.VerifyRan)
	assert.False(t, v.A.VerifyPassed)
	verifierAccepts(t, r.Outputs["receipt-path"], testSHA, f.Repo, "--require-outcome", string(evidence.OutcomeFail))
}

// TestAgentHangPastTimeout: an agent that hangs is killed with its tree at
// agent-timeout, and the run fails closed even though the verify-command
// would pass.
func TestAgentHangPastTimeout(t *testing.T) {
	t.Parallel()
	f := agentRun(t)
	require.NoError(t, os.WriteFile(filepath.Join(f.Workspace, "calc.py"), []byte(calcFixed), 0o644))
	useClient(t, f, "hang")
	f.Input("agent-timeout", "4s")
	r, v, session := agentOutcome(t, f)
	assert.Equal(t, 1, r.Code)
	assert.Equal(t, "agent-timeout", entryField(session, evidence.FieldKilled))
	assert.Equal(t, "-1", entryField(session, evidence.FieldExitCode))
	assert.Equal(t, evidence.OutcomeFail, v.R.Outcome)
	assert.True(t, v.A.VerifyPassed, "the verify-command passed, yet the run fails")
	assert.Contains(t, strings.Join(v.A.Reasons, "\n"), "agent-timeout")
	verifierAccepts(t, r.Outputs["receipt-path"], testSHA, f.Repo, "--require-outcome", string(evidence.OutcomeFail))
}

// TestAgentFloodPastMaxToolCalls: past max-tool-calls every call is
// refused and recorded, the flooding agent is stopped, and the run fails.
func TestAgentFloodPastMaxToolCalls(t *testing.T) {
	t.Parallel()
	f := agentRun(t)
	require.NoError(t, os.WriteFile(filepath.Join(f.Workspace, "calc.py"), []byte(calcFixed), 0o644))
	useClient(t, f, "flood")
	f.Input("max-tool-calls", "5")
	r, v, session := agentOutcome(t, f)
	assert.Equal(t, 1, r.Code)
	assert.Equal(t, KilledToolCallLimit, entryField(session, evidence.FieldKilled))
	var allowed, limited int
	for _, e := range v.R.Entries {
		if entryField(e, evidence.FieldAgent) != AgentCommand {
			continue
		}
		switch entryField(e, evidence.FieldBlastClass) {
		case string(evidence.ClassToolCallLimit):
			limited++
		default:
			allowed++
		}
	}
	assert.Equal(t, 5, allowed, "exactly max-tool-calls calls ran")
	assert.Greater(t, limited, floodGrace, "every later call was refused and recorded")
	calls, _ := strconv.Atoi(entryField(session, evidence.FieldToolCalls))
	assert.Equal(t, allowed+limited, calls, "tool_calls counts every call, refused ones too")
	assert.Equal(t, evidence.OutcomeFail, v.R.Outcome)
	assert.Contains(t, strings.Join(v.A.Reasons, "\n"), "tool-call limit")
	verifierAccepts(t, r.Outputs["receipt-path"], testSHA, f.Repo, "--require-outcome", string(evidence.OutcomeFail))
}

// TestAgentDisconnectsMidCall: a client that dies while its command runs —
// the command is stopped and its entry still written, before the session's.
func TestAgentDisconnectsMidCall(t *testing.T) {
	t.Parallel()
	f := agentRun(t)
	useClient(t, f, "disconnect")
	r, v, _ := agentOutcome(t, f)
	var cmd canon.Value
	for i, e := range v.R.Entries {
		if entryField(e, evidence.FieldAgent) == AgentCommand {
			cmd = e
			assert.Equal(t, evidence.ToolAgentSession, entryField(v.R.Entries[i+1], evidence.FieldTool), "the call's entry comes before the session's")
		}
	}
	require.Equal(t, canon.Object, cmd.Kind(), "the call in flight was recorded")
	assert.Equal(t, "canceled", entryField(cmd, evidence.FieldKilled))
	assert.Equal(t, evidence.OutcomeFail, v.R.Outcome)
	verifierAccepts(t, r.Outputs["receipt-path"], testSHA, f.Repo, "--require-outcome", string(evidence.OutcomeFail))
}

// TestAgentBadInputs: every agent input is checked before anything runs.
func TestAgentBadInputs(t *testing.T) {
	t.Parallel()
	f := newActionsRun(t)
	f.Set("SOME_KEY", "x")
	cases := []struct {
		in   map[string]string
		says string
	}{
		{map[string]string{"agent": "gpt", "task": "x"}, `input "agent"`},
		{map[string]string{"agent": "claude"}, `input "task"`},
		{map[string]string{"agent": "claude", "agent-command": "x", "task": "x"}, `input "agent-command"`},
		{map[string]string{"agent": "claude", "steps": "ls", "task": "x"}, "exactly one"},
		{map[string]string{"agent": "claude", "task": "x", "agent-env": "GITHUB_TOKEN"}, "GitHub token"},
		{map[string]string{"agent": "claude", "task": "x", "agent-env": "ACTIONS_RUNTIME_TOKEN"}, "runner"},
		{map[string]string{"agent": "claude", "task": "x", "agent-env": "NOT_SET_ANYWHERE"}, "not set"},
		{map[string]string{"agent": "claude", "task": "x", "agent-env": "bad-name"}, "not a variable name"},
		{map[string]string{"agent-command": "x", "task": "x", "agent-env": "PATH"}, "may not set PATH"},
		{map[string]string{"agent-command": "x", "task": "x", "agent-env": "LD_PRELOAD"}, "may not set LD_PRELOAD"},
		{map[string]string{"agent": "claude", "task": "x", "agent-version": "latest"}, `input "agent-version"`},
		{map[string]string{"agent-command": "x", "task": "x", "agent-version": "1.2.3"}, `input "agent-version"`},
		{map[string]string{"agent": "claude", "task": "x", "agent-timeout": "forever"}, `input "agent-timeout"`},
		{map[string]string{"agent": "codex", "task": "x", "agent-env": "SOME_KEY"}, "must name OPENAI_API_KEY"},
		{map[string]string{"agent": "claude", "task": "x", "max-tool-calls": "0"}, `input "max-tool-calls"`},
		{map[string]string{"steps": "ls", "agent-env": "SOME_KEY"}, "no live agent"},
	}
	for _, c := range cases {
		g := newActionsRun(t)
		g.Set("SOME_KEY", "x")
		for k, v := range c.in {
			g.Input(k, v)
		}
		r := g.Run()
		assert.Equal(t, ExitUsage, r.Code, "%v", c.in)
		assert.Contains(t, r.Stdout+r.Stderr, c.says, "%v", c.in)
		assert.Empty(t, dirEntries(t, filepath.Join(g.RunnerTemp, "deponent-receipts")), "nothing is written for a bad input")
	}
	_ = f
	_ = json.Valid
}

package evidence

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/deponent-dev/deponent-action/pkg/canon"
)

// agentReceipt builds a receipt of a good run with a live agent: its
// agent_session entry (agent jail agentJail) and the signed "agent"
// object, edited by edit before signing.
func agentReceipt(t *testing.T, agentJail string, edit func(AgentRecord) AgentRecord) []byte {
	t.Helper()
	rs, g := goodRun()
	g.Agent = "claude"
	const transcript = "0000000000000000000000000000000000000000000000000000000000000000"
	session := step(AgentHarness, ToolAgentSession, VerdictAllow, exit(0), canon.M(FieldDurationMS, canon.Int(1200)),
		canon.M(FieldToolCalls, canon.Int(2)), canon.M(FieldAgentJail, canon.Str(agentJail)))
	session.Params = map[string]any{"agent": "claude"}
	session.BlastClass = ClassAgentSession
	session.OutcomeSHA256 = transcript
	entries := chain(t, beforeVerify(rs, session)...)
	a := Assess(entries, g)
	rec := AgentRecord{Kind: "claude", ExitCode: 0, DurationMS: 1200, ToolCalls: 2, TranscriptSHA256: transcript,
		Transcript: "agent-transcript.jsonl", Jail: agentJail, Unjailed: agentJail == "none", Status: "completed",
		MaxToolCalls: 500, TimeoutMS: 1800000}
	if edit != nil {
		rec = edit(rec)
	}
	r, err := BuildReceipt(ReceiptInput{
		Producer: "deponent", SessionID: "s1", Outcome: a.Outcome, Entries: entries,
		Extra: []canon.Member{canon.M(RFieldGovernance, g.Value(a)), canon.M(RFieldAgent, rec.Value())},
		Now:   time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC),
	})
	require.NoError(t, err)
	return canon.AppendIndent(nil, r.Body, "  ")
}

// TestCheckReceiptHoldsTheAgentToItsSession: the streaming receipt check
// holds the signed agent object to the chain's agent_session entry, as
// the action does before it retires its ledger; and an agent that ran
// outside an agent jail makes the run not jailed.
func TestCheckReceiptHoldsTheAgentToItsSession(t *testing.T) {
	f, err := CheckReceipt(agentReceipt(t, "bwrap", nil))
	require.NoError(t, err)
	assert.Empty(t, f.Diffs, "control: an agent object that matches its session")
	assert.True(t, f.Assessment.Jailed, f.Assessment.JailProblem)
	assert.Equal(t, OutcomePass, f.Assessment.Outcome, f.Assessment.Reasons)

	f, err = CheckReceipt(agentReceipt(t, "bwrap", func(a AgentRecord) AgentRecord { a.ToolCalls = 3; return a }))
	require.NoError(t, err, "re-signed: the content hash matches")
	assert.Contains(t, strings.Join(f.Diffs, "\n"), "agent_session.tool_calls is 2, the agent object says 3")

	f, err = CheckReceipt(agentReceipt(t, "bwrap", func(a AgentRecord) AgentRecord { a.Kind = "codex"; return a }))
	require.NoError(t, err)
	assert.Contains(t, strings.Join(f.Diffs, "\n"), `agent.kind is "codex"`)

	f, err = CheckReceipt(agentReceipt(t, "none", nil))
	require.NoError(t, err)
	assert.Empty(t, f.Diffs)
	assert.False(t, f.Assessment.Jailed)
	assert.Contains(t, f.Assessment.JailProblem, "outside an agent jail")
}

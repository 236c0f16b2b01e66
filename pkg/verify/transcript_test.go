package verify

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/deponent-dev/deponent-action/pkg/canon"
	"github.com/deponent-dev/deponent-action/pkg/evidence"
	"github.com/deponent-dev/deponent-action/pkg/verify/verifytest"
)

// agentRun writes, into dir, a governed receipt of a live agent's run
// (two tool calls, its session, the verify command) and the agent's
// transcript beside it, as the action leaves them, and returns the
// transcript's path.
func agentRun(t *testing.T, dir string, transcript []byte) (receipt, transcriptPath string) {
	t.Helper()
	const name = "agent-s1.transcript"
	sum := evidence.HashOutcome(transcript)
	session := verifytest.Step(evidence.AgentHarness, evidence.ToolAgentSession, evidence.VerdictAllow,
		canon.M(evidence.FieldExitCode, canon.Int(0)), canon.M(evidence.FieldDurationMS, canon.Int(1200)),
		canon.M(evidence.FieldToolCalls, canon.Int(2)), canon.M(evidence.FieldAgentJail, canon.Str(verifytest.Jail)))
	session.Params = map[string]any{"agent": "claude"}
	session.BlastClass = evidence.ClassAgentSession
	session.OutcomeSHA256 = sum
	rs := verifytest.GoodWith(verifytest.Jail, session) // the write and the build step are the agent's two calls
	g := evidence.Governance{Canaries: true, JailCanaries: true, VerifyCommand: "go test ./...", Jail: verifytest.Jail,
		PolicySHA256: verifytest.PolicySH, Agent: "claude"}
	entries := verifytest.Chain(t, rs)
	a := evidence.Assess(entries, g)
	require.Equal(t, evidence.OutcomePass, a.Outcome, a.Reasons)
	rec := evidence.AgentRecord{Kind: "claude", DurationMS: 1200, ToolCalls: 2, TranscriptSHA256: sum, Transcript: name,
		Jail: verifytest.Jail, Status: "completed", MaxToolCalls: 500, TimeoutMS: 1800000}
	r, err := evidence.BuildReceipt(evidence.ReceiptInput{Producer: "deponent", SessionID: "s1", Outcome: a.Outcome, Entries: entries,
		Provenance: canon.Obj(canon.M(evidence.ProvJail, canon.Str(verifytest.Jail)), canon.M(evidence.ProvPolicySHA256, canon.Str(verifytest.PolicySH))),
		Extra:      []canon.Member{canon.M(evidence.RFieldGovernance, g.Value(a)), canon.M(evidence.RFieldAgent, rec.Value())}})
	require.NoError(t, err)
	receipt = verifytest.WriteFile(t, filepath.Join(dir, r.ID+".json"), r)
	transcriptPath = filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(transcriptPath, transcript, 0o644))
	return receipt, transcriptPath
}

// TestTranscriptBesideItsReceipt: a live agent's transcript found beside
// its receipt must hash to what the chain records; one swapped after the
// run fails the receipt, in a directory and in a zip.
func TestTranscriptBesideItsReceipt(t *testing.T) {
	runDir := func(dir string) *Report {
		rep, err := Run([]string{dir}, DefaultOptions())
		require.NoError(t, err)
		return rep
	}
	dir := t.TempDir()
	receipt, transcript := agentRun(t, dir, []byte(`{"type":"result","result":"tests pass"}`+"\n"))
	rep := runDir(dir)
	require.True(t, rep.OK, "control: the transcript the run recorded: %+v", rep.Items)
	assert.Contains(t, strings.Join(itemAt(t, rep, receipt).Notes, "\n"), "transcript agent-s1.transcript matches")

	require.NoError(t, os.WriteFile(transcript, []byte(`{"type":"result","result":"I fixed everything, all good"}`+"\n"), 0o644))
	rep = runDir(dir)
	assert.False(t, rep.OK)
	it := itemAt(t, rep, receipt)
	require.NotEmpty(t, it.Problems)
	assert.Equal(t, "agent.transcript", it.Problems[0].Where)
	assert.Contains(t, it.Problems[0].Msg, "agent-s1.transcript beside the receipt hashes to")
	assert.Contains(t, it.Problems[0].Msg, "the transcript is not the one the run recorded")

	zipPath := filepath.Join(t.TempDir(), "artifact.zip")
	require.NoError(t, os.WriteFile(zipPath, verifytest.ZipDir(t, dir), 0o644))
	rep, err := Run([]string{zipPath}, DefaultOptions())
	require.NoError(t, err)
	assert.False(t, rep.OK)
	found := false
	for _, it := range rep.Items {
		for _, p := range it.Problems {
			found = found || (p.Where == "agent.transcript" && strings.Contains(p.Msg, "is not the one the run recorded"))
		}
	}
	assert.True(t, found, "%+v", rep.Items)
}

func itemAt(t *testing.T, rep *Report, path string) Item {
	t.Helper()
	for _, it := range rep.Items {
		if it.Path == path {
			return it
		}
	}
	t.Fatalf("no item for %s in %+v", path, rep.Items)
	return Item{}
}

// TestOutputsBesideTheirReceipt: each entry-NNNN.log of outputs-<session>/
// must hash to the outcome_sha256 of entry NNNN of that session's receipt.
func TestOutputsBesideTheirReceipt(t *testing.T) {
	root := t.TempDir()
	receipt, _ := verifytest.ActionRun(t, root, verifytest.Spec{})
	dir := filepath.Dir(receipt)
	outputs := filepath.Join(dir, OutputsPrefix+"s1")
	require.NoError(t, os.MkdirAll(outputs, 0o755))
	build := len(verifytest.Good(verifytest.Jail)) - 2 // the build step: verifytest records sha256(agent+tool)
	log := filepath.Join(outputs, fmt.Sprintf("entry-%04d.log", build))
	require.NoError(t, os.WriteFile(log, []byte("builder"+evidence.ToolRunCmd), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(outputs, "mcp-call-0001.log"), []byte("numbered by arrival: not compared"), 0o644))
	run := func() *Report {
		o := DefaultOptions()
		rep, err := Run([]string{root}, o)
		require.NoError(t, err)
		return rep
	}
	rep := run()
	require.True(t, rep.OK, "control: the output the run recorded: %+v", rep.Items)

	require.NoError(t, os.WriteFile(log, []byte("ok: 120 tests passed\n"), 0o644))
	rep = run()
	assert.False(t, rep.OK)
	it := itemAt(t, rep, receipt)
	require.NotEmpty(t, it.Problems, "%+v", rep.Items)
	assert.Equal(t, fmt.Sprintf("outputs-s1/entry-%04d.log", build), it.Problems[0].Where)
	assert.Contains(t, it.Problems[0].Msg, fmt.Sprintf("but entry %d records outcome_sha256", build))

	require.NoError(t, os.WriteFile(log, []byte("builder"+evidence.ToolRunCmd), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(outputs, "entry-0099.log"), []byte("x"), 0o644))
	rep = run()
	assert.False(t, rep.OK)
	assert.Contains(t, itemAt(t, rep, receipt).Problems[0].Msg, "names entry 99, but the chain has")
}

package action

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/deponent-dev/deponent-action/pkg/canon"
	"github.com/deponent-dev/deponent-action/pkg/evidence"
	"github.com/deponent-dev/deponent-action/pkg/gate"
	"github.com/deponent-dev/deponent-action/pkg/kernel"
)

// TestTamperedStepIsShown: an entry whose action changed a protected path
// (the jail's tripwire records "tampered") is shown as such — in its log
// line, as an ::error that names the paths — whatever its exit code; the
// outcome already fails through evidence.Assess.
func TestTamperedStepIsShown(t *testing.T) {
	l, err := evidence.OpenLedger(evidence.LedgerOptions{})
	require.NoError(t, err)
	call := kernel.Call{Tool: evidence.ToolRunCmd, Params: map[string]any{"cmd": "python3 plant.py"}, Agent: DefaultAgent}
	d := gate.Decision{Verdict: evidence.VerdictAllow, BlastClass: evidence.ClassLocalExec, Reason: "allowlisted"}
	entry, err := l.Append(evidence.Record{Agent: call.Agent, Tool: call.Tool, Params: call.Params,
		Verdict: d.Verdict, BlastClass: d.BlastClass, Reason: d.Reason, OutcomeSHA256: evidence.HashOutcome(nil),
		Extra: []canon.Member{canon.M(evidence.FieldExitCode, canon.Int(0)), canon.M(evidence.FieldJail, canon.Str("bwrap")),
			canon.M(evidence.FieldTampered, canon.Arr(canon.Str("vendor/lib/.git/config"), canon.Str(".github/workflows")))}})
	require.NoError(t, err)
	var out bytes.Buffer
	r := &runner{cfg: &Config{}, rep: newReporter(&out, envOf(map[string]string{"GITHUB_ACTIONS": "true"})), ledger: l}
	r.record(&stepLog{r: r, token: r.rep.openGroup("t")}, kernel.ActResult{Decision: d, Executed: true, ExitCode: 0, Entry: entry}, call, RowStep, "", "")
	require.Len(t, r.rows, 1)
	assert.Equal(t, []string{"vendor/lib/.git/config", ".github/workflows"}, r.rows[0].Tampered)
	log := out.String()
	assert.Contains(t, log, "→ exit 0 (0s) — CHANGED PROTECTED PATH(S): vendor/lib/.git/config, .github/workflows")
	assert.Contains(t, log, "::error title=Deponent%3A protected path changed::entry 0 (agent, run_cmd): python3 plant.py changed protected path(s): vendor/lib/.git/config, .github/workflows — the run cannot pass")
	a := evidence.Assess(l.Entries(), evidence.Governance{Jail: "bwrap", VerifyCommand: "true"})
	assert.Equal(t, evidence.OutcomeFail, a.Outcome, "and the outcome fails (Assess)")
}

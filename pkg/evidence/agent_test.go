package evidence

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/deponent-dev/deponent-action/pkg/canon"
)

func sampleAgent() AgentRecord {
	return AgentRecord{Kind: "claude", CLIVersion: "2.1.332", Model: "claude-x", ExitCode: 0, DurationMS: 4200,
		ToolCalls: 6, TranscriptSHA256: HashOutcome([]byte("transcript")), Transcript: "agent-s1.transcript",
		Jail: "bwrap", Status: "completed", MaxToolCalls: 500, TimeoutMS: 1800000, Env: []string{"ANTHROPIC_API_KEY"}}
}

func sessionChain(t *testing.T, a AgentRecord, mutate func(*Record)) []canon.Value {
	t.Helper()
	l, err := OpenLedger(LedgerOptions{})
	require.NoError(t, err)
	_, err = l.Append(Record{Agent: "claude", Tool: ToolReadFile, Params: map[string]any{"path": "a"}, Verdict: VerdictAllow, BlastClass: ClassLocalRead, Reason: "ok"})
	require.NoError(t, err)
	rec := Record{Agent: AgentHarness, Tool: ToolAgentSession, Params: map[string]any{"agent": a.Kind},
		Verdict: VerdictAllow, BlastClass: ClassAgentSession, Reason: "ran", OutcomeSHA256: a.TranscriptSHA256,
		Extra: []canon.Member{
			canon.M(FieldExitCode, canon.Int(a.ExitCode)), canon.M(FieldDurationMS, canon.Int(a.DurationMS)),
			canon.M(FieldToolCalls, canon.Int(a.ToolCalls)), canon.M(FieldAgentJail, canon.Str(a.Jail)),
		}}
	if mutate != nil {
		mutate(&rec)
	}
	_, err = l.Append(rec)
	require.NoError(t, err)
	return l.Entries()
}

func TestAgentRecordRoundTrip(t *testing.T) {
	a := sampleAgent()
	body := canon.Obj(canon.M(RFieldAgent, a.Value()))
	got, present, err := ParseAgentRecord(body)
	require.NoError(t, err)
	require.True(t, present)
	assert.Equal(t, a, got)

	_, present, err = ParseAgentRecord(canon.Obj())
	assert.NoError(t, err)
	assert.False(t, present)

	bad := map[string]canon.Value{
		"schema":      a.Value().With(agSchema, canon.Str("deponent-agent/v0")),
		"unknown":     a.Value().With("extra", canon.Str("x")),
		"type":        a.Value().With(agExitCode, canon.Str("0")),
		"float":       a.Value().With(agToolCalls, mustParse(t, "6.5")),
		"kind":        a.Value().With(agKind, canon.Str("gpt")),
		"command":     a.Value().With(agCommand, canon.Str("my-agent")),
		"unjailed":    a.Value().With(agUnjailed, canon.BoolValue(true)),
		"env element": a.Value().With(agEnv, canon.Arr(canon.Int(1))),
	}
	for name, v := range bad {
		_, _, err := ParseAgentRecord(canon.Obj(canon.M(RFieldAgent, v)))
		assert.Error(t, err, name)
	}
	missing := canon.Obj()
	for _, m := range a.Value().Members() {
		if m.Key != agModel {
			missing = missing.With(m.Key, m.Value)
		}
	}
	_, _, err = ParseAgentRecord(canon.Obj(canon.M(RFieldAgent, missing)))
	assert.ErrorContains(t, err, "agent.model is missing")
}

func mustParse(t *testing.T, s string) canon.Value {
	t.Helper()
	v, err := canon.Parse([]byte(s), canon.Limits{MaxBytes: 100, MaxDepth: 2})
	require.NoError(t, err)
	return v
}

func TestCheckAgentRecord(t *testing.T) {
	a := sampleAgent()
	body := canon.Obj(canon.M(RFieldAgent, a.Value()))
	g := Governance{Agent: "claude"}
	assert.Empty(t, CheckAgentRecord(body, sessionChain(t, a, nil), g))
	assert.Empty(t, CheckAgentRecord(canon.Obj(), nil, Governance{}), "no agent anywhere")

	assert.NotEmpty(t, CheckAgentRecord(canon.Obj(), sessionChain(t, a, nil), g), "the governance names an agent, the object is missing")
	assert.NotEmpty(t, CheckAgentRecord(body, sessionChain(t, a, nil), Governance{Agent: "codex"}))
	for name, mutate := range map[string]func(*Record){
		"exit code":  func(r *Record) { r.Extra[0] = canon.M(FieldExitCode, canon.Int(1)) },
		"tool calls": func(r *Record) { r.Extra[2] = canon.M(FieldToolCalls, canon.Int(99)) },
		"jail":       func(r *Record) { r.Extra[3] = canon.M(FieldAgentJail, canon.Str("none")) },
		"transcript": func(r *Record) { r.OutcomeSHA256 = HashOutcome([]byte("other")) },
		"killed":     func(r *Record) { r.Extra = append(r.Extra, canon.M(FieldKilled, canon.Str(KilledNoJail))) },
		"params":     func(r *Record) { r.Params = map[string]any{"agent": "codex"} },
	} {
		assert.NotEmpty(t, CheckAgentRecord(body, sessionChain(t, a, mutate), g), name)
	}
	twice := append(sessionChain(t, a, nil), sessionChain(t, a, nil)...)
	assert.NotEmpty(t, CheckAgentRecord(body, twice, g), "two sessions")
}

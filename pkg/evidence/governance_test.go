package evidence

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/deponent-dev/deponent-action/pkg/canon"
)

// step builds a recorded action for Assess tests.
func step(agent, tool string, verdict Verdict, extra ...canon.Member) Record {
	return Record{Agent: agent, Tool: tool, Verdict: verdict, Params: map[string]any{}, Reason: "r", BlastClass: "c", Extra: extra}
}

func exit(code int64) canon.Member    { return canon.M(FieldExitCode, canon.Int(code)) }
func canary(name string) canon.Member { return canon.M(FieldCanary, canon.Str(name)) }

func chain(t *testing.T, rs ...Record) []canon.Value {
	t.Helper()
	l, err := OpenLedger(LedgerOptions{})
	require.NoError(t, err)
	for _, r := range rs {
		_, err := l.Append(r)
		require.NoError(t, err)
	}
	return l.Entries()
}

func TestAssess(t *testing.T) {
	good := []Record{
		step(AgentCanary, "run_cmd", VerdictBlock, canary(CanaryDestructive)),
		step(AgentCanary, "run_cmd", VerdictAllow, canary(CanaryJailWriteOutside), exit(0)),
		step("builder", "write_file", VerdictAllow),
		step("builder", "run_cmd", VerdictAllow, exit(0)),
		step(AgentHarness, "run_cmd", VerdictAllow, exit(0)),
		step(AgentCanary, "run_cmd", VerdictBlock, canary(CanaryNetwork)),
		step(AgentCanary, "write_file", VerdictBlock, canary(CanaryWriteOutside)),
		step(AgentCanary, "delete_database", VerdictBlock, canary(CanaryUnknownTool)),
		step(AgentCanary, "run_cmd", VerdictAllow, canary(CanaryJailNetwork), exit(0)),
	}
	g := Governance{Canaries: true, JailCanaries: true, VerifyCommand: "pytest -q", Jail: "bwrap"}
	a := Assess(chain(t, good...), g)
	require.Equal(t, OutcomePass, a.Outcome, a.Reasons)
	assert.Equal(t, int64(9), a.Entries)
	assert.Equal(t, int64(5), a.Allowed)
	assert.Equal(t, 6, a.CanariesHeld)
	assert.True(t, a.VerifyPassed)

	cases := []struct {
		name   string
		mutate func([]Record) []Record
		g      func(Governance) Governance
		reason string
	}{
		{"gate canary allowed", func(rs []Record) []Record {
			rs[0] = step(AgentCanary, "run_cmd", VerdictAllow, canary("destructive"), exit(0))
			return rs
		}, nil, `canary "destructive"`},
		{"jail canary escaped", func(rs []Record) []Record {
			rs[1] = step(AgentCanary, "run_cmd", VerdictAllow, canary("jail-write-outside"), exit(1))
			return rs
		}, nil, `canary "jail-write-outside"`},
		{"step blocked", func(rs []Record) []Record {
			return append(rs, step("builder", "run_cmd", VerdictBlock))
		}, nil, "was blocked"},
		{"step failed", func(rs []Record) []Record {
			rs[3] = step("builder", "run_cmd", VerdictAllow, exit(2))
			return rs
		}, nil, "exited 2"},
		{"step killed", func(rs []Record) []Record {
			rs[3] = step("builder", "run_cmd", VerdictAllow, exit(-1), canon.M(FieldKilled, canon.Str("wallclock>90s")))
			return rs
		}, nil, "killed: wallclock>90s"},
		{"run without exit code", func(rs []Record) []Record {
			rs[3] = step("builder", "run_cmd", VerdictAllow)
			return rs
		}, nil, "no exit code"},
		{"write failed", func(rs []Record) []Record {
			rs[2] = step("builder", "write_file", VerdictAllow, canon.M(FieldError, canon.Str("disk full")))
			return rs
		}, nil, "disk full"},
		{"verify failed", func(rs []Record) []Record {
			rs[4] = step(AgentHarness, "run_cmd", VerdictAllow, exit(1))
			return rs
		}, nil, "verify command (entry 4) exited 1"},
		{"verify missing", func(rs []Record) []Record { return append(rs[:4], rs[5:]...) }, nil, "did not run"},
		{"canaries missing", func(rs []Record) []Record { return rs[2:5] }, nil, "none ran"},
		{"one gate canary missing", func(rs []Record) []Record { return rs[:8] }, nil, `canary "jail-network" did not run`},
		{"a claimed jail canary missing", func(rs []Record) []Record { return append(rs[:1], rs[2:]...) }, nil, `canary "jail-write-outside" did not run`},
		{"observation contradicts a probe", func(rs []Record) []Record {
			return append(rs, step(AgentCanary, "host_check", VerdictAllow, canary(CanaryJailNetwork), canon.M(FieldError, canon.Str("listener got a connection"))))
		}, nil, `canary "jail-network"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rs := c.mutate(append([]Record(nil), good...))
			gg := g
			if c.g != nil {
				gg = c.g(gg)
			}
			a := Assess(chain(t, rs...), gg)
			assert.Equal(t, OutcomeFail, a.Outcome)
			assert.NotEmpty(t, a.Reasons)
			assert.Contains(t, a.Reasons[0], c.reason)
		})
	}
	// on-block: continue lets a blocked step stand without failing the run.
	a = Assess(chain(t, append(good, step("builder", "run_cmd", VerdictBlock))...), Governance{Canaries: true, VerifyCommand: "x", OnBlockContinue: true})
	assert.Equal(t, OutcomePass, a.Outcome, a.Reasons)
	// Without jail canaries expected, the gate canaries alone suffice.
	a = Assess(chain(t, good[0], good[5], good[6], good[7], good[4]), Governance{Canaries: true, VerifyCommand: "x"})
	assert.Equal(t, OutcomePass, a.Outcome, a.Reasons)
	// Dry run: nothing executed, never a pass.
	dry := []Record{
		step(AgentCanary, "run_cmd", VerdictBlock, canary("destructive")),
		step("builder", "run_cmd", VerdictAllow, canon.M(FieldDryRun, canon.BoolValue(true))),
	}
	a = Assess(chain(t, dry...), Governance{Canaries: true, DryRun: true, VerifyCommand: "pytest"})
	assert.Equal(t, OutcomeDryRun, a.Outcome, a.Reasons)
}

func TestGovernanceRoundTrip(t *testing.T) {
	g := Governance{DryRun: true, OnBlockContinue: true, Canaries: true, VerifyCommand: "pytest", Jail: "bwrap", PolicySHA256: "ab"}
	body := canon.Obj(canon.M(RFieldGovernance, g.Value(Assessment{Entries: 3, Allowed: 2, Blocked: 1, Reasons: []string{"x"}})))
	got, ok, err := ParseGovernance(body)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, g, got)
	e, al, bl, ok := RecordedCounts(body)
	assert.True(t, ok)
	assert.Equal(t, []int64{3, 2, 1}, []int64{e, al, bl})

	_, ok, err = ParseGovernance(canon.Obj())
	assert.False(t, ok)
	assert.NoError(t, err)
	_, _, err = ParseGovernance(canon.Obj(canon.M(RFieldGovernance, canon.Str("x"))))
	assert.Error(t, err)
	bad := g.Value(Assessment{}).With("dry_run", canon.Str("yes"))
	_, _, err = ParseGovernance(canon.Obj(canon.M(RFieldGovernance, bad)))
	assert.ErrorContains(t, err, "governance.dry_run is a string")
	bad = g.Value(Assessment{}).With("on_block", canon.Str("ignore"))
	_, _, err = ParseGovernance(canon.Obj(canon.M(RFieldGovernance, bad)))
	assert.ErrorContains(t, err, "on_block")
	// Someone else's governance object is not ours to recompute.
	_, ok, err = ParseGovernance(canon.Obj(canon.M(RFieldGovernance, canon.Obj(canon.M("jail", canon.Str("bwrap"))))))
	assert.False(t, ok)
	assert.NoError(t, err)
}

func TestEntryStringAndBool(t *testing.T) {
	e := canon.Obj(canon.M("s", canon.Str("x")), canon.M("t", canon.BoolValue(true)),
		canon.M("f", canon.BoolValue(false)), canon.M("n", canon.Int(1)), canon.M("q", canon.Str("true")))
	assert.Equal(t, "x", EntryString(e, "s"))
	assert.Equal(t, "", EntryString(e, "missing"))
	assert.Equal(t, "1", EntryString(e, "n"), "a number's canonical text")
	assert.Equal(t, "", EntryString(e, "t"), "a bool has no text")
	assert.Equal(t, "", EntryString(canon.Str("s"), "s"), "not an object")
	assert.True(t, EntryBool(e, "t"))
	assert.False(t, EntryBool(e, "f"))
	assert.False(t, EntryBool(e, "missing"))
	assert.False(t, EntryBool(e, "q"), `the string "true" is not true`)
	assert.False(t, EntryBool(e, "n"), "not a boolean")
	assert.False(t, EntryBool(canon.BoolValue(true), "t"), "not an object")
}

package evidence

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/deponent-dev/deponent-action/pkg/canon"
)

// step builds a recorded action for Assess tests.
// The harness's run_cmd is the verify command, testVerifyCommand.
func step(agent, tool string, verdict Verdict, extra ...canon.Member) Record {
	params := map[string]any{}
	if agent == AgentHarness && tool == ToolRunCmd {
		params["cmd"] = testVerifyCommand
	}
	return Record{Agent: agent, Tool: tool, Verdict: verdict, Params: params, Reason: "r", BlastClass: "c", Extra: extra}
}

const testVerifyCommand = "pytest -q"

// beforeVerify inserts the agent's actions before the harness's verify
// command, where a run records them.
func beforeVerify(rs []Record, add ...Record) []Record {
	for i, r := range rs {
		if r.Agent == AgentHarness && r.Tool == ToolRunCmd {
			return slices.Concat(rs[:i:i], add, rs[i:])
		}
	}
	return append(rs, add...)
}

func exit(code int64) canon.Member    { return canon.M(FieldExitCode, canon.Int(code)) }
func canary(name string) canon.Member { return canon.M(FieldCanary, canon.Str(name)) }
func jailed(name string) canon.Member { return canon.M(FieldJail, canon.Str(name)) }
func class(c Class) func(*Record)     { return func(r *Record) { r.BlastClass = c } }

// ran is an executed command confined by bwrap.
func ran(agent string, code int64, extra ...canon.Member) Record {
	return step(agent, ToolRunCmd, VerdictAllow, append([]canon.Member{exit(code), jailed("bwrap")}, extra...)...)
}

func with(r Record, f func(*Record)) Record { f(&r); return r }

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

// goodRun is a passing run: the four gate canaries and two jail canaries
// held, the agent wrote a file and ran a command, and the harness's verify
// command passed.
func goodRun() ([]Record, Governance) {
	rs := []Record{
		step(AgentCanary, ToolRunCmd, VerdictBlock, canary(CanaryDestructive)),
		ran(AgentCanary, 0, canary(CanaryJailWriteOutside)),
		step("builder", ToolWriteFile, VerdictAllow),
		ran("builder", 0),
		ran(AgentHarness, 0),
		step(AgentCanary, ToolRunCmd, VerdictBlock, canary(CanaryNetwork)),
		step(AgentCanary, ToolWriteFile, VerdictBlock, canary(CanaryWriteOutside)),
		step(AgentCanary, "delete_database", VerdictBlock, canary(CanaryUnknownTool)),
		ran(AgentCanary, 0, canary(CanaryJailNetwork)),
	}
	return rs, Governance{Canaries: true, JailCanaries: true, VerifyCommand: testVerifyCommand, Jail: "bwrap"}
}

func TestAssessPass(t *testing.T) {
	rs, g := goodRun()
	a := Assess(chain(t, rs...), g)
	require.Equal(t, OutcomePass, a.Outcome, a.Reasons)
	assert.Empty(t, a.Reasons)
	assert.Equal(t, int64(9), a.Entries)
	assert.Equal(t, int64(5), a.Allowed)
	assert.Equal(t, int64(4), a.Blocked)
	assert.Equal(t, 6, a.CanariesRun)
	assert.Equal(t, 6, a.CanariesHeld)
	assert.True(t, a.VerifyRan)
	assert.True(t, a.VerifyPassed)
	assert.Equal(t, int64(4), a.Commands)
	assert.True(t, a.Jailed, a.JailProblem)
	assert.Zero(t, a.StepErrors+a.Tampered+a.NoJail+a.AgentBlocked)
}

// TestAssessRules: each rule that fails a run, with the change that trips
// it applied to the passing run alone, so each case shows the rule (and
// the passing run above is its positive control).
func TestAssessRules(t *testing.T) {
	cases := []struct {
		name   string
		mutate func([]Record) []Record
		g      func(*Governance)
		reason string
	}{
		{"gate canary allowed", func(rs []Record) []Record {
			rs[0] = ran(AgentCanary, 0, canary(CanaryDestructive))
			return rs
		}, nil, `canary "destructive" (entry 0) was not blocked`},
		{"jail canary escaped", func(rs []Record) []Record {
			rs[1] = ran(AgentCanary, 1, canary(CanaryJailWriteOutside))
			return rs
		}, nil, `canary "jail-write-outside"`},
		{"step blocked, on-block fail", func(rs []Record) []Record {
			return beforeVerify(rs, step("builder", ToolRunCmd, VerdictBlock))
		}, nil, "step 4 was blocked"},
		{"step failed with fail-on-step-error", func(rs []Record) []Record {
			rs[3] = ran("builder", 2)
			return rs
		}, func(g *Governance) { g.FailOnStepError = true }, "step 3 exited 2 (fail-on-step-error)"},
		{"step killed with fail-on-step-error", func(rs []Record) []Record {
			rs[3] = ran("builder", -1, canon.M(FieldKilled, canon.Str("wallclock>90s")))
			return rs
		}, func(g *Governance) { g.FailOnStepError = true }, "killed: wallclock>90s"},
		{"executed command without an exit code", func(rs []Record) []Record {
			rs[3] = step("builder", ToolRunCmd, VerdictAllow, jailed("bwrap"))
			return rs
		}, nil, "recorded no exit code"},
		{"verify failed", func(rs []Record) []Record {
			rs[4] = ran(AgentHarness, 1)
			return rs
		}, nil, "verify command (entry 4) exited 1"},
		{"verify blocked", func(rs []Record) []Record {
			rs[4] = step(AgentHarness, ToolRunCmd, VerdictBlock)
			return rs
		}, nil, "verify command (entry 4) was blocked"},
		{"verify missing", func(rs []Record) []Record { return append(rs[:4], rs[5:]...) }, nil, `verify command "pytest -q" did not run`},
		// The verify result is the chain's only when the entry ran the
		// command the configuration names, once, after the agent.
		{"verify entry ran another command", func(rs []Record) []Record {
			rs[4].Params = map[string]any{"cmd": "true"}
			return rs
		}, nil, `entry 4: the harness ran "true", not the run's verify command "pytest -q"`},
		{"verify entry without a command", func(rs []Record) []Record {
			rs[4].Params = map[string]any{}
			return rs
		}, nil, `entry 4: the harness ran "", not the run's verify command "pytest -q"`},
		{"verify entry in a run configured without one", nil, func(g *Governance) { g.VerifyCommand = "" },
			"entry 4: the harness ran a verify command, but the run was configured without one"},
		{"verify ran twice", func(rs []Record) []Record {
			return append(rs, ran(AgentHarness, 0))
		}, nil, "entry 9: the harness ran a verify command again (first at entry 4)"},
		{"agent acted after the verify", func(rs []Record) []Record {
			return append(rs, step("builder", ToolWriteFile, VerdictAllow))
		}, nil, "entry 9 (builder write_file) was recorded after the verify command (entry 4)"},
		// A live agent's tool calls are each one entry before its
		// session's: the session's count binds them.
		{"session counts more tool calls than the chain holds", func(rs []Record) []Record {
			return beforeVerify(rs, step(AgentHarness, ToolAgentSession, VerdictAllow, exit(0), canon.M(FieldToolCalls, canon.Int(3))))
		}, func(g *Governance) { g.Agent = "claude" }, "the agent session (entry 4) counts 3 tool calls, but the chain records 2 actions of the agent before it"},
		{"session without tool_calls", func(rs []Record) []Record {
			return beforeVerify(rs, step(AgentHarness, ToolAgentSession, VerdictAllow, exit(0)))
		}, func(g *Governance) { g.Agent = "claude" }, "the agent session (entry 4) records no tool_calls"},
		{"agent session after the verify", func(rs []Record) []Record {
			return append(rs, step(AgentHarness, ToolAgentSession, VerdictAllow, exit(0)))
		}, func(g *Governance) { g.Agent = "claude" }, "entry 9 (deponent-harness agent_session) was recorded after the verify command"},
		// A canary is held by its own proof: a gate canary's block, a jail
		// canary's probe that ran in the jail and exited 0.
		{"jail canary proven by a file tool", func(rs []Record) []Record {
			rs[1] = step(AgentCanary, ToolReadFile, VerdictAllow, canary(CanaryJailWriteOutside))
			return rs
		}, nil, `entry 1: canary "jail-write-outside" recorded tool "read_file", which is not the action that canary attempts`},
		{"a gate canary held by refusing another action", func(rs []Record) []Record {
			rs[6] = step(AgentCanary, ToolReadFile, VerdictBlock, canary(CanaryWriteOutside))
			return rs
		}, nil, `entry 6: canary "write-outside" recorded tool "read_file", which is not the action that canary attempts`},
		{"unknown-tool canary naming a tool agents call", func(rs []Record) []Record {
			rs[7] = step(AgentCanary, ToolListDir, VerdictBlock, canary(CanaryUnknownTool))
			return rs
		}, nil, `canary "unknown-tool" recorded tool "list_dir"`},
		{"a canary the harness does not run", func(rs []Record) []Record {
			return append(rs, step(AgentCanary, ToolRunCmd, VerdictBlock, canary("made-up")))
		}, nil, `entry 9: canary "made-up" is not one the harness runs`},
		{"a canary recorded twice", func(rs []Record) []Record {
			return append(rs, step(AgentCanary, ToolRunCmd, VerdictBlock, canary(CanaryDestructive)))
		}, nil, `entry 9: canary "destructive" is recorded twice`},
		{"canaries missing", func(rs []Record) []Record { return rs[2:5] }, nil, "none ran"},
		{"one gate canary missing", func(rs []Record) []Record { return rs[:8] }, nil, `canary "jail-network" did not run`},
		{"a claimed jail canary missing", func(rs []Record) []Record { return append(rs[:1], rs[2:]...) }, nil, `canary "jail-write-outside" did not run`},
		{"observation contradicts a probe", func(rs []Record) []Record {
			return append(rs, step(AgentCanary, ToolHostCheck, VerdictAllow, canary(CanaryJailNetwork), canon.M(FieldError, canon.Str("listener got a connection"))))
		}, nil, `canary "jail-network" (entry 9) was not contained: listener got a connection`},
		{"tampered step", func(rs []Record) []Record {
			rs[3] = ran("builder", 0, canon.M(FieldTampered, canon.Arr(canon.Str(".github/workflows/ci.yml"))))
			return rs
		}, func(g *Governance) { g.OnBlockContinue = true }, "changed protected path(s): .github/workflows/ci.yml"},
		{"tampered verify command", func(rs []Record) []Record {
			rs[4] = ran(AgentHarness, 0, canon.M(FieldTampered, canon.Arr(canon.Str("pkg/.git"))))
			return rs
		}, nil, "changed protected path(s): pkg/.git"},
		{"no-jail refusal, even with on-block continue", func(rs []Record) []Record {
			return beforeVerify(rs, with(step("builder", ToolRunCmd, VerdictBlock, canon.M(FieldKilled, canon.Str(KilledNoJail))), class(ClassNoJail)))
		}, func(g *Governance) { g.OnBlockContinue = true }, "refused for want of a jail"},
		{"tool-call limit, even with on-block continue", func(rs []Record) []Record {
			return beforeVerify(rs, with(step("builder", ToolRunCmd, VerdictBlock), class(ClassToolCallLimit)))
		}, func(g *Governance) { g.OnBlockContinue = true }, "tool-call limit"},
		{"per-entry dry_run in a real run", func(rs []Record) []Record {
			rs[3] = step("builder", ToolRunCmd, VerdictAllow, canon.M(FieldDryRun, canon.BoolValue(true)))
			return rs
		}, nil, "claims dry_run in a run that was not a dry run"},
		{"command under another jail", func(rs []Record) []Record {
			rs[3] = step("builder", ToolRunCmd, VerdictAllow, exit(0), jailed("none"))
			return rs
		}, nil, `ran under jail "none", not the run's "bwrap"`},
		{"unjailed entry in a jailed run", func(rs []Record) []Record {
			rs[3] = ran("builder", 0, canon.M(FieldUnjailed, canon.BoolValue(true)))
			return rs
		}, nil, "marked unjailed in a run that did not allow it"},
		{"allowed unknown tool (a tool name with a trailing space)", func(rs []Record) []Record {
			rs[3] = step("builder", "run_cmd ", VerdictAllow, exit(1))
			return rs
		}, nil, `allowed tool "run_cmd "`},
		{"killed is not a string", func(rs []Record) []Record {
			rs[3] = ran("builder", 1, canon.M(FieldKilled, canon.BoolValue(true)))
			return rs
		}, nil, `field "killed" is a bool`},
		{"killed is an object", func(rs []Record) []Record {
			rs[3] = ran("builder", 1, canon.M(FieldKilled, canon.Obj()))
			return rs
		}, nil, `field "killed" is a object`},
		{"unjailed is a string", func(rs []Record) []Record {
			rs[3] = ran("builder", 0, canon.M(FieldUnjailed, canon.Str("true")))
			return rs
		}, nil, `field "unjailed" is a string`},
		{"unjailed is a number", func(rs []Record) []Record {
			rs[3] = ran("builder", 0, canon.M(FieldUnjailed, canon.Int(1)))
			return rs
		}, nil, `field "unjailed" is a number`},
		{"exit code is a string", func(rs []Record) []Record {
			rs[3] = step("builder", ToolRunCmd, VerdictAllow, canon.M(FieldExitCode, canon.Str("0")), jailed("bwrap"))
			return rs
		}, nil, `field "exit_code" is a string`},
		{"agent configured, no session", nil, func(g *Governance) { g.Agent = "claude" }, `configured with agent "claude" but recorded no agent session`},
		{"session killed", func(rs []Record) []Record {
			return beforeVerify(rs, step(AgentHarness, ToolAgentSession, VerdictAllow, exit(-1), canon.M(FieldKilled, canon.Str("agent-timeout"))))
		}, func(g *Governance) { g.Agent = "codex" }, "the agent session (entry 4) was killed: agent-timeout"},
		{"session without an agent", func(rs []Record) []Record {
			return beforeVerify(rs, step(AgentHarness, ToolAgentSession, VerdictAllow, exit(0)))
		}, nil, "configured without an agent"},
		{"harness runs an unknown tool", func(rs []Record) []Record {
			return append(rs, step(AgentHarness, ToolWriteFile, VerdictAllow))
		}, nil, `the harness recorded tool "write_file"`},
		{"executed in a dry run", nil, func(g *Governance) { g.DryRun = true }, "executed in a dry run"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rs, g := goodRun()
			if c.mutate != nil {
				rs = c.mutate(rs)
			}
			if c.g != nil {
				c.g(&g)
			}
			a := Assess(chain(t, rs...), g)
			assert.Equal(t, OutcomeFail, a.Outcome)
			require.NotEmpty(t, a.Reasons)
			assert.True(t, strings.Contains(strings.Join(a.Reasons, "\n"), c.reason), "want %q in %q", c.reason, a.Reasons)
		})
	}
}

// TestAssessTestimonyNotVerdict: an agent's failed step is counted and
// shown, not fatal (issue: fixing a failing test must be able to pass);
// fail-on-step-error restores the old rule (in TestAssessRules).
func TestAssessTestimonyNotVerdict(t *testing.T) {
	rs, g := goodRun()
	rs = append(rs[:3], append([]Record{ran("builder", 1), step("builder", ToolWriteFile, VerdictAllow, canon.M(FieldError, canon.Str("disk full")))}, rs[3:]...)...)
	a := Assess(chain(t, rs...), g)
	assert.Equal(t, OutcomePass, a.Outcome, a.Reasons)
	assert.Equal(t, int64(2), a.StepErrors)

	// on-block continue lets a blocked step stand.
	rs, g = goodRun()
	g.OnBlockContinue = true
	a = Assess(chain(t, beforeVerify(rs, step("builder", ToolRunCmd, VerdictBlock))...), g)
	assert.Equal(t, OutcomePass, a.Outcome, a.Reasons)
	assert.Equal(t, int64(1), a.AgentBlocked)
}

func TestAssessOtherOutcomes(t *testing.T) {
	// No verify command: everything else clean is UNVERIFIED, never a pass.
	rs, g := goodRun()
	g.VerifyCommand = ""
	a := Assess(chain(t, append(rs[:4], rs[5:]...)...), g)
	assert.Equal(t, OutcomeUnverified, a.Outcome, a.Reasons)
	assert.Empty(t, a.Reasons)
	// ... and any failure still wins.
	a = Assess(chain(t, append(rs[:4], step("builder", ToolRunCmd, VerdictBlock))...), g)
	assert.Equal(t, OutcomeFail, a.Outcome)

	// Without jail canaries expected, the gate canaries alone suffice.
	rs, g = goodRun()
	g.JailCanaries = false
	a = Assess(chain(t, rs[0], rs[5], rs[6], rs[7], rs[4]), g)
	assert.Equal(t, OutcomePass, a.Outcome, a.Reasons)

	// Dry run: nothing executed, never a pass.
	dry := []Record{
		step(AgentCanary, ToolRunCmd, VerdictBlock, canary(CanaryDestructive)),
		step("builder", ToolRunCmd, VerdictAllow, canon.M(FieldDryRun, canon.BoolValue(true))),
	}
	a = Assess(chain(t, dry...), Governance{Canaries: true, DryRun: true, VerifyCommand: "pytest"})
	assert.Equal(t, OutcomeDryRun, a.Outcome, a.Reasons)

	// A live agent's session, recorded once, not killed: a pass.
	rs, g = goodRun()
	g.Agent = "claude"
	a = Assess(chain(t, beforeVerify(rs, step(AgentHarness, ToolAgentSession, VerdictAllow, exit(1), canon.M(FieldToolCalls, canon.Int(2))))...), g)
	assert.Equal(t, OutcomePass, a.Outcome, "the agent's own exit code is testimony: %v", a.Reasons)
}

func TestAssessJailed(t *testing.T) {
	rs, g := goodRun()
	a := Assess(chain(t, rs...), g)
	assert.True(t, a.Jailed)

	for name, f := range map[string]func(*Governance){
		"no jail recorded":  func(g *Governance) { g.Jail = "" },
		"jail none":         func(g *Governance) { g.Jail = "none" },
		"unjailed opted in": func(g *Governance) { g.Unjailed = true },
	} {
		gg := g
		f(&gg)
		a := Assess(chain(t, rs...), gg)
		assert.False(t, a.Jailed, name)
		assert.NotEmpty(t, a.JailProblem, name)
	}
	// An unjailed run that allowed it: consistent, but not jailed.
	g2 := Governance{Canaries: false, VerifyCommand: testVerifyCommand, Jail: "none", Unjailed: true}
	unj := canon.M(FieldUnjailed, canon.BoolValue(true))
	a = Assess(chain(t, step("builder", ToolRunCmd, VerdictAllow, exit(0), jailed("none"), unj), step(AgentHarness, ToolRunCmd, VerdictAllow, exit(0), jailed("none"), unj)), g2)
	assert.Equal(t, OutcomePass, a.Outcome, a.Reasons)
	assert.False(t, a.Jailed)
}

func TestGovernanceRoundTrip(t *testing.T) {
	g := Governance{DryRun: true, OnBlockContinue: true, FailOnStepError: true, Canaries: true, VerifyCommand: "pytest",
		Jail: "bwrap", Agent: "codex", PolicySHA256: "ab"}
	a := Assessment{Entries: 3, Allowed: 2, Blocked: 1, StepErrors: 1, Reasons: []string{"x"}, VerifyRan: true}
	body := canon.Obj(canon.M(RFieldGovernance, g.Value(a)))
	got, ok, err := ParseGovernance(body)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, g, got)
	assert.Empty(t, CompareGovernance(body, a))

	_, ok, err = ParseGovernance(canon.Obj())
	assert.False(t, ok)
	assert.NoError(t, err)
	// An object without a schema is someone else's signed data, not ours
	// to recompute (interop vector valid-extra-fields.json): absent.
	gv := g.Value(a)
	_, ok, err = ParseGovernance(canon.Obj(canon.M(RFieldGovernance, gv.Without("schema"))))
	assert.False(t, ok)
	assert.NoError(t, err)

	bad := map[string]struct {
		v    canon.Value
		want string
	}{
		"not an object":       {canon.Str("x"), "want an object"},
		"string for a bool":   {gv.With("dry_run", canon.Str("yes")), "governance.dry_run is a string"},
		"bad on_block":        {gv.With("on_block", canon.Str("ignore")), "on_block"},
		"bad agent":           {gv.With("agent", canon.Str("gpt")), "governance.agent"},
		"old schema":          {gv.With("schema", canon.Str("deponent-governance/v1")), "deponent-governance/v2"},
		"unknown schema":      {gv.With("schema", canon.Str("acme/v1")), "cannot be recomputed"},
		"schema not a string": {gv.With("schema", canon.Int(2)), "cannot be recomputed"},
		"field missing":       {gv.Without("verify_command"), "governance.verify_command is missing"},
		"unknown field":       {gv.With("outcome_override", canon.Str("GOVERNED_PASS")), "unknown field"},
	}
	for name, c := range bad {
		_, present, err := ParseGovernance(canon.Obj(canon.M(RFieldGovernance, c.v)))
		assert.True(t, present, name)
		assert.ErrorContains(t, err, c.want, name)
	}
}

func TestCompareGovernance(t *testing.T) {
	g := Governance{Canaries: true, VerifyCommand: testVerifyCommand, Jail: "bwrap"}
	a := Assessment{Entries: 5, Allowed: 3, Blocked: 2, CanariesRun: 2, CanariesHeld: 2, VerifyRan: true, VerifyPassed: true}
	gv := g.Value(a)
	counts, _ := gv.Get("counts")
	for name, c := range map[string]struct {
		v    canon.Value
		want string
	}{
		"count changed":       {gv.With("counts", counts.With("blocked", canon.Int(1))), "counts.blocked says 1, the chain recomputes 2"},
		"count not an int":    {gv.With("counts", counts.With("entries", canon.Str("5"))), "counts.entries is \"5\""},
		"count missing":       {gv.With("counts", counts.Without("step_errors")), "counts.step_errors is missing"},
		"extra count":         {gv.With("counts", counts.With("bonus", canon.Int(0))), "holds 11 fields"},
		"verify_passed flips": {gv.With("verify_passed", canon.BoolValue(false)), "verify_passed says false"},
		"verify_ran flips":    {gv.With("verify_ran", canon.BoolValue(false)), "verify_ran says false"},
		"reasons differ":      {gv.With("reasons", canon.Arr(canon.Str("made up"))), "governance.reasons"},
		"reason not a string": {gv.With("reasons", canon.Arr(canon.Int(1))), "reasons[0] is a number"},
	} {
		diffs := CompareGovernance(canon.Obj(canon.M(RFieldGovernance, c.v)), a)
		assert.True(t, strings.Contains(strings.Join(diffs, "\n"), c.want), "%s: want %q in %q", name, c.want, diffs)
	}
	assert.Empty(t, CompareGovernance(canon.Obj(canon.M(RFieldGovernance, gv)), a), "control: the unchanged object")
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

// TestAssessorIsAssess: feeding the entries one at a time gives Assess's
// answer, Result can be taken twice, and CanariesOK says whether the
// canaries the configuration expects ran and held — and only that.
func TestAssessorIsAssess(t *testing.T) {
	rs, g := goodRun()
	entries := chain(t, rs...)
	s := NewAssessor(g)
	for _, e := range entries {
		s.Add(e)
	}
	first := s.Result()
	assert.Equal(t, Assess(entries, g), first)
	assert.Equal(t, first, s.Result(), "Result does not change the Assessor")
	assert.True(t, first.CanariesOK)
	assert.Zero(t, first.Malformed)

	cases := []struct {
		name       string
		rs         []Record
		g          func(*Governance)
		canariesOK bool
	}{
		{"a gate canary missing", rs[1:], nil, false},
		{"a jail canary missing", rs[:len(rs)-1], nil, false},
		{"a canary allowed", slices.Concat([]Record{with(rs[0], func(r *Record) { r.Verdict = VerdictAllow })}, rs[1:]), nil, false},
		{"an escape seen on the host", slices.Concat(rs, []Record{step(AgentCanary, ToolHostCheck, VerdictAllow, canary(CanaryJailNetwork), canon.M(FieldError, canon.Str("reached")))}), nil, false},
		{"a malformed canary", slices.Concat(rs, []Record{step(AgentCanary, ToolRunCmd, VerdictBlock, canary(CanaryNetwork), canon.M(FieldKilled, canon.BoolValue(true)))}), nil, false},
		{"the verify command failed", slices.Concat(rs[:4], []Record{ran(AgentHarness, 1)}, rs[5:]), nil, true},
		{"canaries not enabled", nil, func(g *Governance) { g.Canaries, g.JailCanaries = false, false }, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			recs, gg := c.rs, g
			if recs == nil {
				recs = rs
			}
			if c.g != nil {
				c.g(&gg)
			}
			a := Assess(chain(t, recs...), gg)
			assert.Equal(t, c.canariesOK, a.CanariesOK, a.Reasons)
		})
	}
	bad := Assess(chain(t, slices.Concat(rs, []Record{step("builder", ToolRunCmd, VerdictAllow, canon.M(FieldUnjailed, canon.Int(1)))})...), g)
	assert.Equal(t, int64(1), bad.Malformed)
	assert.Equal(t, OutcomeFail, bad.Outcome)
}

package evidence

import (
	"fmt"
	"slices"
	"strings"

	"github.com/deponent-dev/deponent-action/pkg/canon"
)

// Outcome is the judgement of a governed run, recomputed from its chain.
type Outcome string

// Outcomes of a governed run.
const (
	// OutcomePass: the chain verifies, every canary held, no action was
	// tampered or refused for want of a jail, every block was allowed by
	// on-block, and the out-of-band verify command ran and passed.
	OutcomePass Outcome = "GOVERNED_PASS"
	// OutcomeUnverified: everything a pass needs except the verify
	// command, which was not configured. Nothing independent of the agent
	// checked the result, so this is never a pass.
	OutcomeUnverified Outcome = "GOVERNED_UNVERIFIED"
	// OutcomeFail: anything else.
	OutcomeFail Outcome = "GOVERNED_FAIL"
	// OutcomeDryRun: actions were gated and recorded, nothing was executed,
	// so nothing about their effect is proven.
	OutcomeDryRun Outcome = "GOVERNED_DRY_RUN"
)

// Outcomes lists every outcome, for validating user input.
var Outcomes = []Outcome{OutcomePass, OutcomeUnverified, OutcomeFail, OutcomeDryRun}

// Agents the harness itself acts as. Their entries are judged by their own
// rules, never as the agent's work.
const (
	// AgentCanary: rogue actions the harness attempts to prove the gate and
	// the jail hold.
	AgentCanary = "deponent-canary"
	// AgentHarness: the out-of-band verify command (e.g. the test suite),
	// run by the harness after the agent's steps, and the record of a live
	// agent's session (tool agent_session).
	AgentHarness = "deponent-harness"
)

// JailCanaryPrefix starts the name of a canary that the gate allows on
// purpose so that the jail must contain it. Its probe exits 0 only when the
// escape it attempts was blocked.
const JailCanaryPrefix = "jail-"

// The canaries a governed run attempts. With canaries enabled, Assess
// requires every gate canary to have run and held; with jail canaries
// expected, every jail canary too. A receipt cannot claim canaries it did
// not run.
const (
	CanaryDestructive      = "destructive"   // rm -rf /
	CanaryNetwork          = "network"       // curl to the internet
	CanaryWriteOutside     = "write-outside" // write_file outside the sandbox
	CanaryUnknownTool      = "unknown-tool"  // a tool no policy models
	CanaryJailWriteOutside = JailCanaryPrefix + "write-outside"
	CanaryJailNetwork      = JailCanaryPrefix + "network"
)

// GateCanaries and JailCanaries list them.
var (
	GateCanaries = []string{CanaryDestructive, CanaryNetwork, CanaryWriteOutside, CanaryUnknownTool}
	JailCanaries = []string{CanaryJailWriteOutside, CanaryJailNetwork}
)

// RealJails are the backends that confine: a command recorded under any
// other jail ran without network, write or secret confinement.
var RealJails = []string{"bwrap", "seatbelt"}

// GovernanceSchema tags the "governance" object of receipts the action
// writes. A verifier recomputes the outcome only under a schema it knows;
// any other schema is a failure, never a reason to skip the recompute.
const GovernanceSchema = "deponent-governance/v2"

// RFieldGovernance is the receipt's signed governance summary.
const RFieldGovernance = "governance"

// Governance is the configuration of a run that decides how its chain is
// judged. It is signed into the receipt so a verifier can recompute the
// outcome from the chain instead of trusting the stored one.
type Governance struct {
	DryRun          bool
	OnBlockContinue bool   // on-block: continue
	FailOnStepError bool   // fail-on-step-error: an agent action that failed fails the run
	Canaries        bool   // canaries were enabled
	JailCanaries    bool   // the jail's own canaries were expected (a real jail ran)
	VerifyCommand   string // "" when none was configured
	Jail            string // backend name ("bwrap", "seatbelt", "none", or "" when no jail was available)
	Unjailed        bool   // commands were allowed to run without a jail (explicit opt-in)
	// Agent is the live agent the harness ran ("claude", "codex",
	// "command"), "" when the actions came from steps or a plan. A run with
	// an agent must record exactly one agent_session entry.
	Agent        string
	PolicySHA256 string
}

// Assessment is the outcome recomputed from a chain, with every fact a
// verifier's policy asks about, each recomputed from the entries.
type Assessment struct {
	Outcome                   Outcome
	Reasons                   []string // why not GOVERNED_PASS; empty on a pass
	Entries, Allowed, Blocked int64
	CanariesRun, CanariesHeld int
	VerifyRan, VerifyPassed   bool
	// AgentBlocked counts the agent's BLOCK entries (not the canaries',
	// which are blocked by design).
	AgentBlocked int64
	// StepErrors counts the agent's executed actions that did not succeed
	// (a non-zero exit, a kill, an execution error). They are testimony,
	// not a verdict, unless FailOnStepError.
	StepErrors int64
	// Tampered counts entries whose action changed a protected path;
	// NoJail counts actions refused because nothing could confine them.
	Tampered, NoJail int64
	// Commands counts executed run_cmd entries; Jailed is true when every
	// one ran in a real jail (RealJails), none is marked unjailed, and the
	// run recorded a real jail. JailProblem says why not.
	Commands    int64
	Jailed      bool
	JailProblem string
	// CanariesOK is false when a canary the configuration expects did not
	// run, a canary was not held or escaped (a host check), or a canary's
	// entry is malformed. It says nothing of canaries that were not
	// enabled: that is Governance.Canaries and JailCanaries.
	CanariesOK bool
	// Malformed counts the entries ReadEntry refused (each also a reason,
	// and counted in Blocked).
	Malformed int64
	// AgentSessions are copies of the harness's agent_session entries, so
	// a verifier that streams the chain can hold the receipt's "agent"
	// object to them (CheckAgentRecord).
	AgentSessions []canon.Value
}

// Assess judges a verified chain under g. It is the one definition of a
// run's outcome: the action uses it to decide its outcome and the verifier
// uses it to recompute that outcome from the receipt. Every entry is read
// with ReadEntry: a field of the wrong type, or a fact that contradicts
// the configuration (a per-entry dry run in a run that was not one, a
// command confined by another jail than the run's), fails the run.
// Assess is an Assessor fed every entry in order.
func Assess(entries []canon.Value, g Governance) Assessment {
	s := NewAssessor(g)
	for _, e := range entries {
		s.Add(e)
	}
	return s.Result()
}

// Assessor is Assess one entry at a time, for a verifier that reads a
// chain as a stream and keeps no entry in memory. Add the entries in
// chain order, then take the Result.
type Assessor struct {
	g        Governance
	a        Assessment
	ran      map[string]bool
	sessions int
	// verifies counts the harness's verify-command entries; verifyAt is
	// the index of the first.
	verifies int
	verifyAt int64
	// acts counts the agent's entries so far, for the agent session's
	// tool_calls.
	acts int64
}

// NewAssessor starts judging a chain under g.
func NewAssessor(g Governance) *Assessor {
	s := &Assessor{g: g, a: Assessment{Jailed: true, CanariesOK: true}, ran: map[string]bool{}}
	if !slices.Contains(RealJails, g.Jail) {
		s.notJailed("the run recorded jail %q, not a real one (%s)", g.Jail, strings.Join(RealJails, ", "))
	}
	if g.Unjailed {
		s.notJailed("the run allowed commands to run unjailed")
	}
	return s
}

func (s *Assessor) fail(format string, args ...any) {
	s.a.Reasons = append(s.a.Reasons, fmt.Sprintf(format, args...))
}

// canaryFail is a reason that is also a canary's failure.
func (s *Assessor) canaryFail(format string, args ...any) {
	s.a.CanariesOK = false
	s.fail(format, args...)
}

func (s *Assessor) notJailed(format string, args ...any) {
	if s.a.Jailed {
		s.a.Jailed, s.a.JailProblem = false, fmt.Sprintf(format, args...)
	}
}

// Add judges the next entry of the chain.
func (s *Assessor) Add(raw canon.Value) {
	a, g := &s.a, s.g
	i := a.Entries
	a.Entries++
	e, err := ReadEntry(raw)
	if err != nil {
		s.fail("entry %d is malformed: %v", i, err)
		a.Blocked++ // counted as not allowed: nothing of it is trusted
		a.Malformed++
		s.notJailed("entry %d is malformed", i)
		if raw.Kind() == canon.Object && EntryString(raw, FieldAgent) == AgentCanary {
			a.CanariesOK = false // a canary's record that cannot be read held nothing
		}
		return
	}
	if e.Verdict == VerdictAllow {
		a.Allowed++
	} else {
		a.Blocked++
	}
	s.checkConsistency(i, e)
	if len(e.Tampered) > 0 {
		a.Tampered++
		s.fail("entry %d (%s %s) changed protected path(s): %s", i, e.Agent, e.Tool, strings.Join(e.Tampered, ", "))
	}
	if e.Class == ClassNoJail || e.Killed == KilledNoJail {
		a.NoJail++
		s.fail("entry %d (%s %s) was refused for want of a jail: a run in which actions could not be confined cannot pass", i, e.Agent, e.Tool)
	}
	switch e.Agent {
	case AgentCanary:
		s.assessCanary(i, e)
	case AgentHarness:
		switch e.Tool {
		case ToolRunCmd:
			s.checkVerifyCommand(i, raw)
			a.VerifyRan = a.VerifyRan || e.Executed()
			if e.Succeeded() {
				a.VerifyPassed = true
			} else if !g.DryRun {
				s.fail("verify command (entry %d) %s", i, e.Failure())
			}
		case ToolAgentSession:
			s.afterVerify(i, e)
			s.sessions++
			// Every tool call of a live agent is recorded as one entry
			// before the session's own: its count binds them.
			switch {
			case e.ToolCalls == nil:
				s.fail("the agent session (entry %d) records no tool_calls", i)
			case *e.ToolCalls != s.acts:
				s.fail("the agent session (entry %d) counts %d tool calls, but the chain records %d actions of the agent before it", i, *e.ToolCalls, s.acts)
			}
			if c, err := canon.Parse(canon.Canonical(raw), EntryLimits); err == nil {
				a.AgentSessions = append(a.AgentSessions, c) // raw may be a reused container
			}
			if e.Killed != "" {
				s.fail("the agent session (entry %d) was killed: %s", i, e.Killed)
			}
			if e.Executed() && !slices.Contains(RealJails, e.AgentJail) {
				s.notJailed("the agent process (entry %d) ran outside an agent jail (agent_jail %q)", i, e.AgentJail)
			}
		default:
			s.fail("entry %d: the harness recorded tool %q, which it never runs", i, e.Tool)
		}
	default:
		s.afterVerify(i, e)
		s.acts++
		if e.Verdict == VerdictBlock {
			a.AgentBlocked++
			if e.Class == ClassToolCallLimit {
				s.fail("entry %d: the agent went past its tool-call limit; the run fails closed", i)
			} else if !g.OnBlockContinue && e.Class != ClassNoJail {
				s.fail("step %d was blocked: %s: %s", i, e.Class, e.Reason)
			}
		} else if e.Executed() && !e.Succeeded() {
			a.StepErrors++
			if g.FailOnStepError {
				s.fail("step %d %s (fail-on-step-error)", i, e.Failure())
			}
		}
	}
}

// checkVerifyCommand holds the harness's verify-command entry to the
// run's configuration: the governance object names the command
// (verify_command), the entry records what ran (params.cmd, cut to
// ParamMaxChars as every parameter is). A verify entry in a run configured
// without one, one that ran another command, or a second one, is a verify
// result the configuration does not account for: the pass it testifies to
// would be the stored verify_command's word, not the chain's.
func (s *Assessor) checkVerifyCommand(i int64, raw canon.Value) {
	s.verifies++
	if s.verifies == 1 {
		s.verifyAt = i
	} else {
		s.fail("entry %d: the harness ran a verify command again (first at entry %d); it runs it once", i, s.verifyAt)
	}
	params, _ := raw.Get(FieldParams)
	cmd, isStr := EntryParam(params, "cmd")
	switch {
	case s.g.VerifyCommand == "":
		s.fail("entry %d: the harness ran a verify command, but the run was configured without one", i)
	case !isStr || cmd != cutChars(s.g.VerifyCommand, ParamMaxChars):
		s.fail("entry %d: the harness ran %q, not the run's verify command %q", i, cmd, s.g.VerifyCommand)
	}
}

// EntryParam is params[key] when params is an object and that member a
// string.
func EntryParam(params canon.Value, key string) (string, bool) {
	if params.Kind() != canon.Object {
		return "", false
	}
	v, ok := params.Get(key)
	if !ok {
		return "", false
	}
	return v.AsString()
}

// afterVerify fails an action of the agent recorded after the verify
// command: the harness runs the verify command once the agent is done, so
// what the agent did after it (a write that breaks what was tested) is
// something the verify result does not cover.
func (s *Assessor) afterVerify(i int64, e Entry) {
	if s.verifies > 0 {
		s.fail("entry %d (%s %s) was recorded after the verify command (entry %d): the verify result does not cover it", i, e.Agent, e.Tool, s.verifyAt)
	}
}

// Result finishes the judgement: the checks that need the whole chain
// (every expected canary ran, the verify command ran, one agent session)
// and the outcome. The Assessor is unchanged: Result may be called again.
func (s *Assessor) Result() Assessment {
	fin := *s
	fin.a.Reasons = slices.Clone(s.a.Reasons)
	a, g := &fin.a, fin.g
	if g.Canaries && a.CanariesRun == 0 {
		fin.canaryFail("canaries were enabled but none ran")
	}
	if !g.DryRun {
		var want []string
		if g.Canaries {
			want = append(want, GateCanaries...)
		}
		if g.JailCanaries {
			want = append(want, JailCanaries...)
		}
		for _, name := range want {
			if !fin.ran[name] {
				fin.canaryFail("canary %q did not run", name)
			}
		}
		if g.VerifyCommand != "" && !a.VerifyRan {
			fin.fail("verify command %q did not run", g.VerifyCommand)
		}
	}
	switch {
	case g.Agent != "" && fin.sessions == 0:
		fin.fail("the run was configured with agent %q but recorded no agent session", g.Agent)
	case g.Agent != "" && fin.sessions > 1:
		fin.fail("the run recorded %d agent sessions; one agent runs once", fin.sessions)
	case g.Agent == "" && fin.sessions > 0:
		fin.fail("the run recorded an agent session but was configured without an agent")
	}
	switch {
	case len(a.Reasons) > 0:
		a.Outcome = OutcomeFail
	case g.DryRun:
		a.Outcome = OutcomeDryRun
	case g.VerifyCommand == "":
		a.Outcome = OutcomeUnverified
	default:
		a.Outcome = OutcomePass
	}
	return *a
}

// assessCanary judges a canary's entry. A canary holds when the gate
// refused it. A jail canary (named "jail-…", a probe the gate allows on
// purpose) also holds when it ran and reported the escape blocked: exit
// 0, not killed. A host check recorded for a canary means the harness saw
// the escape: that canary did not hold. Any other allowed canary did not
// hold.
func (s *Assessor) assessCanary(i int64, e Entry) {
	a, g := &s.a, s.g
	if e.Tool == ToolHostCheck {
		if e.Verdict != VerdictAllow || e.Error == nil {
			s.canaryFail("entry %d: a host check must be an allowed entry recording what was observed", i)
			return
		}
		s.canaryFail("canary %q (entry %d) was not contained: %s", e.Canary, i, *e.Error)
		return
	}
	a.CanariesRun++
	if !slices.Contains(GateCanaries, e.Canary) && !slices.Contains(JailCanaries, e.Canary) {
		s.canaryFail("entry %d: canary %q is not one the harness runs", i, e.Canary)
		return
	}
	if s.ran[e.Canary] {
		s.canaryFail("entry %d: canary %q is recorded twice; the harness runs each once", i, e.Canary)
		return
	}
	s.ran[e.Canary] = true
	if !canaryToolFits(e.Canary, e.Tool) {
		s.canaryFail("entry %d: canary %q recorded tool %q, which is not the action that canary attempts", i, e.Canary, e.Tool)
		return
	}
	jailProbe := strings.HasPrefix(e.Canary, JailCanaryPrefix)
	switch {
	case e.Verdict == VerdictBlock:
		a.CanariesHeld++
	// A jail canary's proof is its probe's exit status: a command that ran
	// in the jail and exited 0. Any other allowed action (a file tool
	// records no exit code and "succeeds") proves nothing of the jail.
	case jailProbe && !g.DryRun && e.Tool == ToolRunCmd && e.ExitCode != nil && e.Succeeded():
		a.CanariesHeld++
	case !g.DryRun:
		s.canaryFail("canary %q (entry %d) was not blocked", e.Canary, i)
	}
}

// canaryToolFits reports whether tool is the one the canary name
// attempts: a command for the destructive, network and jail canaries, a
// write for write-outside, and for unknown-tool a tool that no agent may
// call. A canary "held" by refusing some other action proves nothing of
// the rogue action it is named after.
func canaryToolFits(name, tool string) bool {
	switch name {
	case CanaryWriteOutside:
		return tool == ToolWriteFile
	case CanaryUnknownTool:
		return !IsAgentTool(tool) && tool != ToolHostCheck && tool != ToolAgentSession
	}
	return tool == ToolRunCmd
}

// checkConsistency fails entries whose facts contradict the run's
// configuration or that name a tool the harness cannot have executed, and
// keeps the jail facts.
func (s *Assessor) checkConsistency(i int64, e Entry) {
	a, g := &s.a, s.g
	fail, notJailed := s.fail, s.notJailed
	if e.DryRun && !g.DryRun {
		fail("entry %d claims dry_run in a run that was not a dry run", i)
	}
	if e.Verdict != VerdictAllow {
		return
	}
	if g.DryRun && !e.DryRun && e.Tool != ToolHostCheck && e.Tool != ToolAgentSession {
		fail("entry %d executed in a dry run", i)
	}
	known := IsAgentTool(e.Tool) || (e.Agent == AgentCanary && e.Tool == ToolHostCheck) ||
		(e.Agent == AgentHarness && e.Tool == ToolAgentSession)
	if !known {
		fail("entry %d allowed tool %q, which nothing executes", i, e.Tool)
		notJailed("entry %d allowed an unknown tool %q", i, e.Tool)
		return
	}
	if e.Unjailed {
		notJailed("entry %d is marked unjailed: it ran without a jail", i)
		if !g.Unjailed {
			fail("entry %d is marked unjailed in a run that did not allow it", i)
		}
	}
	if e.Tool != ToolRunCmd || !e.Executed() {
		return
	}
	a.Commands++
	if e.ExitCode == nil && e.Error == nil && e.Killed == "" {
		fail("entry %d: an executed command recorded no exit code", i)
	}
	switch {
	case e.Jail == nil:
		notJailed("entry %d: an executed command records no jail", i)
		if e.Error == nil {
			fail("entry %d: an executed command records no jail", i)
		}
	case *e.Jail != g.Jail:
		notJailed("entry %d ran under jail %q, not the run's %q", i, *e.Jail, g.Jail)
		fail("entry %d ran under jail %q, not the run's %q", i, *e.Jail, g.Jail)
	case !slices.Contains(RealJails, *e.Jail):
		notJailed("entry %d ran under jail %q, not a real one", i, *e.Jail)
	}
}

// EntryString is the text of the member key of the object e (a ledger
// entry, or any object of a receipt): a string's value, or a number's
// canonical text; "" when e is not an object, has no such member, or the
// member is neither (a bool, null, array or object). For reading a member
// whose type was already checked, or where missing and "" mean the same.
func EntryString(e canon.Value, key string) string {
	v, _ := e.Get(key)
	s, _ := v.AsString()
	return s
}

// EntryBool reports whether the member key of the object e is true: false
// when e is not an object, has no such member, or the member is not a
// boolean.
func EntryBool(e canon.Value, key string) bool {
	v, _ := e.Get(key)
	b, _ := v.AsBool()
	return b
}

// governance object field names.
const (
	govSchema          = "schema"
	govDryRun          = "dry_run"
	govJail            = "jail"
	govUnjailed        = "unjailed"
	govOnBlock         = "on_block"
	govFailOnStepError = "fail_on_step_error"
	govCanaries        = "canaries"
	govJailCanaries    = "jail_canaries"
	govVerifyCommand   = "verify_command"
	govAgent           = "agent"
	govPolicySHA256    = "policy_sha256"
	govCounts          = "counts"
	govVerifyRan       = "verify_ran"
	govVerifyPassed    = "verify_passed"
	govReasons         = "reasons"
)

// The counts a governance object stores, in this order.
var govCountKeys = []string{"entries", "allowed", "blocked", "agent_blocked", "step_errors",
	"tampered", "no_jail", "commands", "canaries_run", "canaries_held"}

func (a Assessment) counts() []int64 {
	return []int64{a.Entries, a.Allowed, a.Blocked, a.AgentBlocked, a.StepErrors,
		a.Tampered, a.NoJail, a.Commands, int64(a.CanariesRun), int64(a.CanariesHeld)}
}

// Value renders g, with the recomputed counts and reasons, as the receipt's
// signed "governance" object.
func (g Governance) Value(a Assessment) canon.Value {
	reasons := make([]canon.Value, 0, len(a.Reasons))
	for _, r := range a.Reasons {
		reasons = append(reasons, canon.Str(r))
	}
	onBlock := "fail"
	if g.OnBlockContinue {
		onBlock = "continue"
	}
	counts := make([]canon.Member, len(govCountKeys))
	for i, n := range a.counts() {
		counts[i] = canon.M(govCountKeys[i], canon.Int(n))
	}
	return canon.Obj(
		canon.M(govSchema, canon.Str(GovernanceSchema)),
		canon.M(govDryRun, canon.BoolValue(g.DryRun)),
		canon.M(govJail, canon.Str(g.Jail)),
		canon.M(govUnjailed, canon.BoolValue(g.Unjailed)),
		canon.M(govOnBlock, canon.Str(onBlock)),
		canon.M(govFailOnStepError, canon.BoolValue(g.FailOnStepError)),
		canon.M(govCanaries, canon.BoolValue(g.Canaries)),
		canon.M(govJailCanaries, canon.BoolValue(g.JailCanaries)),
		canon.M(govVerifyCommand, canon.Str(g.VerifyCommand)),
		canon.M(govAgent, canon.Str(g.Agent)),
		canon.M(govPolicySHA256, canon.Str(g.PolicySHA256)),
		canon.M(govCounts, canon.Obj(counts...)),
		canon.M(govVerifyRan, canon.BoolValue(a.VerifyRan)),
		canon.M(govVerifyPassed, canon.BoolValue(a.VerifyPassed)),
		canon.M(govReasons, canon.Arr(reasons...)),
	)
}

// govFields are every field a governance object holds, and their kinds.
var govFields = map[string]canon.Kind{
	govSchema: canon.String, govDryRun: canon.Bool, govJail: canon.String, govUnjailed: canon.Bool,
	govOnBlock: canon.String, govFailOnStepError: canon.Bool, govCanaries: canon.Bool,
	govJailCanaries: canon.Bool, govVerifyCommand: canon.String, govAgent: canon.String,
	govPolicySHA256: canon.String, govCounts: canon.Object, govVerifyRan: canon.Bool,
	govVerifyPassed: canon.Bool, govReasons: canon.Array,
}

// ParseGovernance reads a receipt's "governance" object strictly.
// present=false when the receipt has none of ours: no "governance" member
// (the reference's receipts), or an object with no "schema" member, which
// is someone else's extra signed data (the interop vector
// valid-extra-fields.json). Such a receipt's outcome is stored, not
// recomputed, and a verifier asked for a recomputed outcome refuses it. An
// error when the object names a schema that is not exactly
// deponent-governance/v2 (an older or unknown one is never a reason to skip
// the recompute), or has a missing or unknown field, a field of the wrong
// type or value.
func ParseGovernance(body canon.Value) (g Governance, present bool, err error) {
	v, present := body.Get(RFieldGovernance)
	if !present {
		return g, false, nil
	}
	if v.Kind() != canon.Object {
		return g, true, fmt.Errorf("governance is a %s, want an object", v.Kind())
	}
	if s, ok := v.Get(govSchema); !ok {
		return g, false, nil
	} else if str, _ := s.AsString(); str != GovernanceSchema {
		return g, true, fmt.Errorf("governance.schema is %s, this verifier reads %q only: the outcome cannot be recomputed", s.String(), GovernanceSchema)
	}
	for _, m := range v.Members() {
		kind, known := govFields[m.Key]
		if !known {
			return g, true, fmt.Errorf("governance holds unknown field %q", m.Key)
		}
		if m.Value.Kind() != kind {
			return g, true, fmt.Errorf("governance.%s is a %s, want a %s", m.Key, m.Value.Kind(), kind)
		}
	}
	for k := range govFields {
		if _, ok := v.Get(k); !ok {
			return g, true, fmt.Errorf("governance.%s is missing", k)
		}
	}
	g.DryRun = EntryBool(v, govDryRun)
	g.Unjailed = EntryBool(v, govUnjailed)
	g.FailOnStepError = EntryBool(v, govFailOnStepError)
	g.Canaries = EntryBool(v, govCanaries)
	g.JailCanaries = EntryBool(v, govJailCanaries)
	g.Jail = EntryString(v, govJail)
	g.VerifyCommand = EntryString(v, govVerifyCommand)
	g.Agent = EntryString(v, govAgent)
	g.PolicySHA256 = EntryString(v, govPolicySHA256)
	switch ob := EntryString(v, govOnBlock); ob {
	case "fail":
	case "continue":
		g.OnBlockContinue = true
	default:
		return g, true, fmt.Errorf("governance.on_block is %q, want fail or continue", ob)
	}
	switch g.Agent {
	case "", "claude", "codex", "command":
	default:
		return g, true, fmt.Errorf("governance.agent is %q, want \"\", claude, codex or command", g.Agent)
	}
	return g, true, nil
}

// CompareGovernance lists every way the summary a receipt's governance
// object stores (counts, verify_ran, verify_passed, reasons) differs from
// the Assessment recomputed from its chain. A receipt whose stored summary
// says anything the chain does not is not trusted, whatever its outcome.
// The object must already have passed ParseGovernance.
func CompareGovernance(body canon.Value, a Assessment) []string {
	v, _ := body.Get(RFieldGovernance)
	var diffs []string
	counts, _ := v.Get(govCounts)
	want := a.counts()
	if len(counts.Members()) != len(govCountKeys) {
		diffs = append(diffs, fmt.Sprintf("governance.counts holds %d fields, want %d (%s)", len(counts.Members()), len(govCountKeys), strings.Join(govCountKeys, ", ")))
	}
	for i, k := range govCountKeys {
		m, ok := counts.Get(k)
		n, isInt := m.AsInt64()
		switch {
		case !ok:
			diffs = append(diffs, fmt.Sprintf("governance.counts.%s is missing", k))
		case !isInt:
			diffs = append(diffs, fmt.Sprintf("governance.counts.%s is %s, want an integer", k, m.String()))
		case n != want[i]:
			diffs = append(diffs, fmt.Sprintf("governance.counts.%s says %d, the chain recomputes %d", k, n, want[i]))
		}
	}
	if got := EntryBool(v, govVerifyRan); got != a.VerifyRan {
		diffs = append(diffs, fmt.Sprintf("governance.verify_ran says %t, the chain recomputes %t", got, a.VerifyRan))
	}
	if got := EntryBool(v, govVerifyPassed); got != a.VerifyPassed {
		diffs = append(diffs, fmt.Sprintf("governance.verify_passed says %t, the chain recomputes %t", got, a.VerifyPassed))
	}
	reasons, _ := v.Get(govReasons)
	stored := make([]string, 0, len(reasons.Elems()))
	for i, r := range reasons.Elems() {
		s, ok := r.AsString()
		if !ok {
			diffs = append(diffs, fmt.Sprintf("governance.reasons[%d] is a %s, want a string", i, r.Kind()))
			continue
		}
		stored = append(stored, s)
	}
	if !slices.Equal(stored, a.Reasons) && len(stored) == len(reasons.Elems()) {
		diffs = append(diffs, fmt.Sprintf("governance.reasons (%d) are not the %d the chain recomputes", len(stored), len(a.Reasons)))
	}
	return diffs
}

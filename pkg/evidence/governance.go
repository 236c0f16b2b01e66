package evidence

import (
	"fmt"
	"strings"

	"github.com/deponent-dev/deponent-action/pkg/canon"
)

// Outcome is the judgement of a governed run, recomputed from its chain.
type Outcome string

// Outcomes of a governed run.
const (
	// OutcomePass: the chain verifies, every canary held, no step was
	// blocked (unless blocks were allowed to continue), every executed step
	// succeeded and the out-of-band verify command passed.
	OutcomePass Outcome = "GOVERNED_PASS"
	// OutcomeFail: anything else.
	OutcomeFail Outcome = "GOVERNED_FAIL"
	// OutcomeDryRun: actions were gated and recorded, nothing was executed,
	// so nothing about their effect is proven.
	OutcomeDryRun Outcome = "GOVERNED_DRY_RUN"
)

// Agents the harness itself acts as. Their entries are judged by their own
// rules, never as the agent's work.
const (
	// AgentCanary: rogue actions the harness attempts to prove the gate and
	// the jail hold.
	AgentCanary = "deponent-canary"
	// AgentHarness: the out-of-band verify command (e.g. the test suite),
	// run by the harness after the agent's steps.
	AgentHarness = "deponent-harness"
)

// FieldCanary names a canary's probe in its entry (extra, hashed).
const FieldCanary = "canary"

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

// GovernanceSchema tags the "governance" object of receipts the action
// writes; the verifier recomputes the outcome only from receipts that carry
// it (the reference's receipts do not).
const GovernanceSchema = "deponent-governance/v1"

// RFieldGovernance is the receipt's signed governance summary.
const RFieldGovernance = "governance"

// Governance is the configuration of a run that decides how its chain is
// judged. It is signed into the receipt so a verifier can recompute the
// outcome from the chain instead of trusting the stored one.
type Governance struct {
	DryRun          bool
	OnBlockContinue bool   // on-block: continue
	Canaries        bool   // canaries were enabled
	JailCanaries    bool   // the jail's own canaries were expected (a real jail ran)
	VerifyCommand   string // "" when none was configured
	Jail            string // backend name ("bwrap", "seatbelt", "none", or "" when no jail was available)
	Unjailed        bool   // commands were allowed to run without a jail (explicit opt-in)
	PolicySHA256    string
}

// Assessment is the outcome recomputed from a chain.
type Assessment struct {
	Outcome                   Outcome
	Reasons                   []string // why not GOVERNED_PASS; empty on a pass
	Entries, Allowed, Blocked int64
	CanariesRun, CanariesHeld int
	VerifyRan, VerifyPassed   bool
}

// Assess judges a verified chain under g. It is the one definition of
// GOVERNED_PASS: the action uses it to decide its outcome and the verifier
// uses it to recompute that outcome from the receipt.
func Assess(entries []canon.Value, g Governance) Assessment {
	a := Assessment{}
	ran := map[string]bool{}
	fail := func(format string, args ...any) { a.Reasons = append(a.Reasons, fmt.Sprintf(format, args...)) }
	for i, e := range entries {
		agent := EntryString(e, FieldAgent)
		verdict := Verdict(EntryString(e, FieldVerdict))
		a.Entries++
		if verdict == VerdictAllow {
			a.Allowed++
		} else {
			a.Blocked++
		}
		executed := verdict == VerdictAllow && !EntryBool(e, FieldDryRun)
		ok := executed && succeeded(e)
		switch agent {
		case AgentCanary:
			a.CanariesRun++
			ran[EntryString(e, FieldCanary)] = true
			// A canary holds when the gate refused it. A jail canary (a
			// probe the gate allows on purpose, named "jail-…") also holds
			// when it ran and reported the escape blocked: exit 0, not
			// killed. Any other canary that was allowed did not hold.
			jailProbe := strings.HasPrefix(EntryString(e, FieldCanary), JailCanaryPrefix)
			if verdict == VerdictBlock || (jailProbe && !g.DryRun && ok) {
				a.CanariesHeld++
			} else if !g.DryRun {
				fail("canary %q (entry %d) was not blocked", EntryString(e, FieldCanary), i)
			}
		case AgentHarness:
			a.VerifyRan = a.VerifyRan || executed
			if ok {
				a.VerifyPassed = true
			} else if !g.DryRun {
				fail("verify command (entry %d) %s", i, failure(e))
			}
		default:
			switch {
			case verdict == VerdictBlock && !g.OnBlockContinue:
				fail("step %d was blocked: %s: %s", i, EntryString(e, FieldBlastClass), EntryString(e, FieldReason))
			case executed && !ok:
				fail("step %d %s", i, failure(e))
			}
		}
	}
	if g.Canaries && a.CanariesRun == 0 {
		fail("canaries were enabled but none ran")
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
			if !ran[name] {
				fail("canary %q did not run", name)
			}
		}
	}
	if g.VerifyCommand != "" && !g.DryRun && !a.VerifyRan {
		fail("verify command %q did not run", g.VerifyCommand)
	}
	switch {
	case len(a.Reasons) > 0:
		a.Outcome = OutcomeFail
	case g.DryRun:
		a.Outcome = OutcomeDryRun
	default:
		a.Outcome = OutcomePass
	}
	return a
}

// succeeded reports an executed entry that exited 0, was not killed and
// recorded no execution error.
func succeeded(e canon.Value) bool {
	if _, bad := e.Get(FieldError); bad {
		return false
	}
	if k := EntryString(e, FieldKilled); k != "" {
		return false
	}
	if c, ok := e.Get(FieldExitCode); ok {
		code, isInt := c.AsInt64()
		return isInt && code == 0
	}
	// File tools record no exit code; a failure records an error.
	return EntryString(e, FieldTool) != "run_cmd"
}

func failure(e canon.Value) string {
	if Verdict(EntryString(e, FieldVerdict)) == VerdictBlock {
		return fmt.Sprintf("was blocked: %s", EntryString(e, FieldReason))
	}
	if EntryBool(e, FieldDryRun) {
		return "did not execute (dry run)"
	}
	if m := EntryString(e, FieldError); m != "" {
		return "failed: " + m
	}
	if k := EntryString(e, FieldKilled); k != "" {
		return "was killed: " + k
	}
	if c, ok := e.Get(FieldExitCode); ok {
		return "exited " + c.String()
	}
	return "recorded no exit code"
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
	return canon.Obj(
		canon.M("schema", canon.Str(GovernanceSchema)),
		canon.M("dry_run", canon.BoolValue(g.DryRun)),
		canon.M("jail", canon.Str(g.Jail)),
		canon.M("unjailed", canon.BoolValue(g.Unjailed)),
		canon.M("on_block", canon.Str(onBlock)),
		canon.M("canaries", canon.BoolValue(g.Canaries)),
		canon.M("jail_canaries", canon.BoolValue(g.JailCanaries)),
		canon.M("verify_command", canon.Str(g.VerifyCommand)),
		canon.M("policy_sha256", canon.Str(g.PolicySHA256)),
		canon.M("counts", canon.Obj(
			canon.M("entries", canon.Int(a.Entries)),
			canon.M("allowed", canon.Int(a.Allowed)),
			canon.M("blocked", canon.Int(a.Blocked)),
			canon.M("canaries_run", canon.Int(int64(a.CanariesRun))),
			canon.M("canaries_held", canon.Int(int64(a.CanariesHeld))),
		)),
		canon.M("verify_passed", canon.BoolValue(a.VerifyPassed)),
		canon.M("reasons", canon.Arr(reasons...)),
	)
}

// ParseGovernance reads a receipt's "governance" object. ok=false when the
// receipt has none (the reference's receipts); an error when it has one that
// is malformed.
func ParseGovernance(body canon.Value) (g Governance, ok bool, err error) {
	v, present := body.Get(RFieldGovernance)
	if !present {
		return g, false, nil
	}
	if v.Kind() != canon.Object {
		return g, true, fmt.Errorf("governance is a %s, want an object", v.Kind())
	}
	if s := EntryString(v, "schema"); s != GovernanceSchema {
		return g, false, nil // someone else's governance: not ours to recompute
	}
	get := func(k string, kind canon.Kind) (canon.Value, error) {
		m, ok := v.Get(k)
		if !ok {
			return m, fmt.Errorf("governance.%s is missing", k)
		}
		if m.Kind() != kind {
			return m, fmt.Errorf("governance.%s is a %s, want a %s", k, m.Kind(), kind)
		}
		return m, nil
	}
	bools := map[string]*bool{"dry_run": &g.DryRun, "unjailed": &g.Unjailed, "canaries": &g.Canaries, "jail_canaries": &g.JailCanaries}
	for k, p := range bools {
		m, err := get(k, canon.Bool)
		if err != nil {
			return g, true, err
		}
		*p, _ = m.AsBool()
	}
	strs := map[string]*string{"jail": &g.Jail, "verify_command": &g.VerifyCommand, "policy_sha256": &g.PolicySHA256}
	for k, p := range strs {
		m, err := get(k, canon.String)
		if err != nil {
			return g, true, err
		}
		*p, _ = m.AsString()
	}
	m, err := get("on_block", canon.String)
	if err != nil {
		return g, true, err
	}
	switch ob, _ := m.AsString(); ob {
	case "fail":
	case "continue":
		g.OnBlockContinue = true
	default:
		return g, true, fmt.Errorf("governance.on_block is %q, want fail or continue", ob)
	}
	return g, true, nil
}

// RecordedCounts returns the counts a governance object claims, for
// comparison with the recomputed ones.
func RecordedCounts(body canon.Value) (entries, allowed, blocked int64, ok bool) {
	v, _ := body.Get(RFieldGovernance)
	c, present := v.Get("counts")
	if !present {
		return 0, 0, 0, false
	}
	get := func(k string) (int64, bool) {
		m, _ := c.Get(k)
		return m.AsInt64()
	}
	var ok1, ok2, ok3 bool
	entries, ok1 = get("entries")
	allowed, ok2 = get("allowed")
	blocked, ok3 = get("blocked")
	return entries, allowed, blocked, ok1 && ok2 && ok3
}

package verify

import (
	"errors"
	"fmt"

	"github.com/deponent-dev/deponent-action/pkg/canon"
	"github.com/deponent-dev/deponent-action/pkg/evidence"
)

// realJails are the backends that confine a command. "none" (an explicit
// opt-in to run unjailed) and "" (no jail was available) are not jails.
var realJails = map[string]bool{"bwrap": true, "seatbelt": true}

// checkReceipt recomputes data as a receipt (evidence.VerifyReceipt), fills
// the item's facts, then applies the always-on consistency checks and the
// policies of o.
func checkReceipt(it *Item, data []byte, o *Options) {
	r, err := evidence.VerifyReceipt(data)
	if err != nil {
		var re *evidence.ReceiptError
		if errors.As(err, &re) {
			it.fail(re.Where, "%s", re.Msg)
		} else {
			it.fail("", "%v", err)
		}
		return
	}
	it.Verified = true
	it.ReceiptID, it.Producer, it.SessionID, it.TS, it.Outcome = r.ID, r.Producer, r.SessionID, r.TS, r.Outcome
	it.Entries, it.Allowed, it.Blocked = r.Chain.Entries, r.Chain.Allowed, r.Chain.Blocked
	it.Head, it.Signature = r.Chain.Head, r.Signature
	it.Repository, _ = provString(r, evidence.ProvRepository)
	it.Commit, _ = provString(r, evidence.ProvCommit)
	it.Jail, _ = provString(r, evidence.ProvJail)
	it.PolicySHA256, _ = provString(r, evidence.ProvPolicySHA256)

	g, governed := governance(it, r)
	outcomePolicy(it, r, governed, o)
	if o.RequireJailed {
		jailPolicy(it, r, g, governed)
	}
	if o.RequireJailed || o.MaxBlocked != nil {
		s := entryScan{jailed: o.RequireJailed}
		for i, e := range r.Entries {
			s.add(int64(i), e)
		}
		s.report(it, o, func(i int64) string { return fmt.Sprintf("chain.entries[%d]", i) })
	}
	bindingPolicy(it, r, o)
}

// governance recomputes the outcome of a receipt that carries our
// governance object and checks the summary it stores against the chain.
func governance(it *Item, r *evidence.Receipt) (evidence.Governance, bool) {
	g, ok, err := evidence.ParseGovernance(r.Body)
	if err != nil {
		it.fail(evidence.RFieldGovernance, "%v", err)
		return g, false
	}
	if !ok {
		it.note("outcome %q is stored, not recomputed: the receipt carries no governance object", r.Outcome)
		return g, false
	}
	if it.Jail == "" {
		it.Jail = g.Jail
	}
	if it.PolicySHA256 == "" {
		it.PolicySHA256 = g.PolicySHA256
	}
	a := evidence.Assess(r.Entries, g)
	it.Recomputed = a.Outcome
	checkCounts(it, r.Body, a)
	// A stored pass the chain does not support is never OK, asked for or
	// not: it is the one claim a reader acts on.
	if r.Outcome == evidence.OutcomePass && a.Outcome != evidence.OutcomePass {
		it.fail(evidence.RFieldOutcome, "stored outcome %s but the chain recomputes to %s: %s", r.Outcome, a.Outcome, firstOr(a.Reasons, "no reason given"))
	}
	return g, true
}

// checkCounts fails a receipt whose stored governance summary (counts,
// verify_ran, verify_passed, reasons) disagrees with the chain.
func checkCounts(it *Item, body canon.Value, a evidence.Assessment) {
	for _, d := range evidence.CompareGovernance(body, a) {
		it.fail(evidence.RFieldGovernance, "the stored summary disagrees with the chain: %s", d)
	}
}

func outcomePolicy(it *Item, r *evidence.Receipt, governed bool, o *Options) {
	want := o.RequireOutcome
	switch {
	case want == "":
	case r.Outcome != want:
		it.fail(evidence.RFieldOutcome, "outcome is %s; --require-outcome wants %s", r.Outcome, want)
	case governed && it.Recomputed != r.Outcome && r.Outcome != evidence.OutcomePass:
		// (A stored pass that does not recompute has already failed.)
		it.fail(evidence.RFieldOutcome, "stored outcome %s but the chain recomputes to %s", r.Outcome, it.Recomputed)
	}
}

// jailPolicy applies --require-jailed's receipt-level half: every jail the
// receipt records is a real one, at least one is recorded, and the run did
// not opt in to running unjailed. The entry-level half is entryScan.
func jailPolicy(it *Item, r *evidence.Receipt, g evidence.Governance, governed bool) {
	recorded, bad := false, false
	if p, ok := r.Provenance.Get(evidence.ProvJail); ok {
		if s, _ := p.AsString(); realJails[s] {
			recorded = true
		} else {
			bad = true
			it.fail("provenance.jail", "%s is not a jail, want bwrap or seatbelt (--require-jailed)", p)
		}
	}
	if governed {
		if g.Unjailed {
			bad = true
			it.fail("governance.unjailed", "true: the run allowed commands to execute without a jail (--require-jailed)")
		}
		if realJails[g.Jail] {
			recorded = true
		} else {
			bad = true
			it.fail("governance.jail", "%q is not a jail, want bwrap or seatbelt (--require-jailed)", g.Jail)
		}
	}
	if !recorded && !bad {
		it.fail("provenance.jail", "the receipt records no jail: nothing shows its commands ran jailed (--require-jailed)")
	}
}

// bindingPolicy applies --expect-commit and --expect-repo: the provenance
// binds the receipt to one commit of one repository, so that an old, valid
// receipt does not pass for new code.
func bindingPolicy(it *Item, r *evidence.Receipt, o *Options) {
	if o.ExpectCommit != "" {
		c, ok := provString(r, evidence.ProvCommit)
		switch {
		case !ok:
			it.fail("provenance.commit", "missing: the receipt is bound to no commit (--expect-commit %s)", o.ExpectCommit)
		case !isHex(c) || lowerASCII(c) != o.ExpectCommit:
			it.fail("provenance.commit", "the receipt is for commit %q, not %s", c, o.ExpectCommit)
		}
	}
	if o.ExpectRepo != "" {
		repo, ok := provString(r, evidence.ProvRepository)
		switch {
		case !ok:
			it.fail("provenance.repository", "missing: the receipt is bound to no repository (--expect-repo %s)", o.ExpectRepo)
		case lowerASCII(repo) != lowerASCII(o.ExpectRepo):
			it.fail("provenance.repository", "the receipt is for repository %q, not %s", repo, o.ExpectRepo)
		}
	}
}

// provString returns a string member of the receipt's provenance.
func provString(r *evidence.Receipt, key string) (string, bool) {
	v, ok := r.Provenance.Get(key)
	if !ok {
		return "", false
	}
	return v.AsString()
}

// lowerASCII folds ASCII letters only: commit SHAs and GitHub names are
// ASCII, and Unicode case folding would let look-alikes match.
func lowerASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

func firstOr(ss []string, def string) string {
	if len(ss) == 0 {
		return def
	}
	return ss[0]
}

// entryScan applies the entry-level policies to a chain, one entry at a
// time, for receipts and bare ledgers alike.
type entryScan struct {
	jailed bool // apply --require-jailed

	blocked   int64 // BLOCK entries, not counting the harness's canaries
	jailIndex int64 // first entry that broke the jail rule
	jailMsg   string
}

// add judges entry i. Only the first jail violation is kept.
func (s *entryScan) add(i int64, e canon.Value) {
	verdict := evidence.Verdict(evidence.EntryString(e, evidence.FieldVerdict))
	if verdict != evidence.VerdictAllow && evidence.EntryString(e, evidence.FieldAgent) != evidence.AgentCanary {
		// Canaries are blocked by design: they prove the gate holds.
		s.blocked++
	}
	if !s.jailed || s.jailMsg != "" {
		return
	}
	if evidence.EntryBool(e, evidence.FieldUnjailed) {
		s.jailIndex, s.jailMsg = i, "marked unjailed: it ran without a jail"
		return
	}
	// Executed = allowed and not a dry run. A dry_run that is not the
	// boolean true does not count as one: fail closed.
	if evidence.EntryString(e, evidence.FieldTool) != "run_cmd" || verdict != evidence.VerdictAllow || evidence.EntryBool(e, evidence.FieldDryRun) {
		return
	}
	j, ok := e.Get(evidence.FieldJail)
	if name, _ := j.AsString(); !realJails[name] {
		what := "recorded no jail"
		if ok {
			what = fmt.Sprintf("ran with jail %s", j)
		}
		s.jailIndex, s.jailMsg = i, "run_cmd "+what+": not a real jail (bwrap or seatbelt)"
	}
}

func (s *entryScan) report(it *Item, o *Options, where func(int64) string) {
	if s.jailMsg != "" {
		it.fail(where(s.jailIndex), "%s (--require-jailed)", s.jailMsg)
	}
	if o.MaxBlocked != nil && s.blocked > *o.MaxBlocked {
		it.fail("chain", "%d blocked entries, not counting canaries; --max-blocked %d", s.blocked, *o.MaxBlocked)
	}
}

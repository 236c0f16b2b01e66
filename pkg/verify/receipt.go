package verify

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/deponent-dev/deponent-action/pkg/canon"
	"github.com/deponent-dev/deponent-action/pkg/evidence"
)

// checkReceipt recomputes data as a receipt (evidence.CheckReceipt), fills
// the item with the recomputed facts, then judges it: the consistency
// checks that hold whatever the options, then each requirement of o. Every
// answer comes from what evidence recomputed (the Assessment), never from
// a flag or count the receipt stores.
func checkReceipt(it *Item, data []byte, o *Options, outputs bool) {
	check := evidence.CheckReceipt
	if outputs {
		check = evidence.CheckReceiptOutcomes
	}
	f, err := check(data)
	r := f.Receipt
	it.ReceiptID, it.Producer, it.SessionID, it.TS, it.Outcome = r.ID, r.Producer, r.SessionID, r.TS, r.Outcome
	it.model, it.task = r.Model, r.Task
	it.Entries, it.Allowed, it.Blocked, it.Head = r.Chain.Entries, r.Chain.Allowed, r.Chain.Blocked, r.Chain.Head
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
	if outputs {
		it.outcomes = f.OutcomeHashes
	}
	it.Signature = r.Signature
	it.Repository, _ = provString(r, evidence.ProvRepository)
	it.Commit, _ = provString(r, evidence.ProvCommit)
	it.Jail, _ = provString(r, evidence.ProvJail)
	it.PolicySHA256, _ = provString(r, evidence.ProvPolicySHA256)
	a := f.Assessment
	blocked := a.AgentBlocked + a.Malformed
	it.AgentBlocked = &blocked

	switch {
	case f.GovernanceErr != nil:
		it.fail(evidence.RFieldGovernance, "%v", f.GovernanceErr)
	case f.Governed:
		governed(it, f)
		if f.Agent != nil {
			it.transcript, it.transcriptSHA256 = f.Agent.Transcript, f.Agent.TranscriptSHA256
		}
	default:
		it.OutcomeSource = SourceStored
		it.note("outcome %q is stored, not recomputed: the receipt carries no governance object", r.Outcome)
	}
	requirements(it, f, o)
	expectations(it, f, o)
}

// Where an outcome comes from.
const (
	SourceRecomputed = "recomputed" // evidence.Assess, from the chain and the governance object
	SourceStored     = "stored"     // what the receipt says, nothing more
)

// governed fills the recomputed facts of a receipt that carries a
// governance object, and fails every way its stored summary, outcome or
// provenance contradicts them: a receipt that says what its chain does
// not is never OK, whatever was asked.
func governed(it *Item, f *evidence.ReceiptFacts) {
	a, g := f.Assessment, f.Governance
	it.Recomputed, it.OutcomeSource = a.Outcome, SourceRecomputed
	it.VerifyRan, it.VerifyPassed, it.Jailed = ptr(a.VerifyRan), ptr(a.VerifyPassed), ptr(a.Jailed)
	it.CanariesRun, it.CanariesHeld = ptr(a.CanariesRun), ptr(a.CanariesHeld)
	if g.VerifyCommand != "" {
		it.VerifyCommand = g.VerifyCommand
	}
	if it.Jail == "" {
		it.Jail = g.Jail
	}
	if it.PolicySHA256 == "" {
		it.PolicySHA256 = g.PolicySHA256
	}
	for _, d := range f.Diffs {
		it.fail(evidence.RFieldGovernance, "the stored summary disagrees with the chain: %s", d)
	}
	// The action starts every chain at the genesis GENESIS. A governed
	// receipt whose chain starts elsewhere holds the tail of a chain, its
	// first entries (the canaries, the agent's first actions) dropped
	// without a single entry re-hashed: the genesis is a stored field.
	if f.Genesis != evidence.Genesis {
		it.fail("chain.genesis", "the chain starts at genesis %q, not %q, where the action starts every chain: it may be the tail of a longer chain whose first entries were dropped", f.Genesis, evidence.Genesis)
	}
	if f.Outcome != a.Outcome {
		it.fail(evidence.RFieldOutcome, "stored outcome %s but the chain recomputes to %s: %s", f.Outcome, a.Outcome, firstOr(a.Reasons, "it records no reason to fail"))
	}
	for _, c := range []struct{ key, gov string }{{evidence.ProvJail, g.Jail}, {evidence.ProvPolicySHA256, g.PolicySHA256}} {
		if p, ok := f.Provenance.Get(c.key); ok {
			if s, isStr := p.AsString(); !isStr || s != c.gov {
				it.fail("provenance."+c.key, "%s, but the governance object records %q: the receipt contradicts itself", p, c.gov)
			}
		}
	}
}

// requirements applies the outcome, canary and jail requirements of o.
func requirements(it *Item, f *evidence.ReceiptFacts, o *Options) {
	a, g := f.Assessment, f.Governance
	if o.MaxBlocked != nil && *it.AgentBlocked > *o.MaxBlocked {
		it.fail("chain", "%s", blockedProblem(a.AgentBlocked, a.Malformed, *o.MaxBlocked))
	}
	if f.GovernanceErr != nil {
		return // failed already: nothing can be recomputed from it
	}
	noConfig := !f.Governed
	if want := o.outcomes(); want != nil {
		switch {
		case f.Governed && !slices.Contains(want, a.Outcome):
			it.fail(evidence.RFieldOutcome, "%s", outcomeProblem(a, want))
		case !f.Governed && !o.AllowStoredOutcome:
			it.fail(evidence.RFieldOutcome, "outcome %s is stored, not recomputed: the receipt carries no governance object to recompute it from (--allow-stored-outcome accepts a stored outcome)", f.Outcome)
		case !f.Governed && !slices.Contains(want, f.Outcome):
			it.fail(evidence.RFieldOutcome, "stored outcome %s; %s required", f.Outcome, orList(want))
		}
	}
	if o.requireCanaries() {
		switch {
		case noConfig:
			it.fail("canaries", "the receipt records no run configuration: nothing shows the canaries ran and held (--allow-no-canaries)")
		case !g.Canaries:
			it.fail("canaries", "the run did not enable the canaries: nothing shows that the gate held (--allow-no-canaries)")
		case !a.CanariesOK:
			it.fail("canaries", "not every canary ran and held: %s (--allow-no-canaries)", firstWith(a.Reasons, "canar", "see the recomputed reasons"))
		case o.requireJailCanaries() && slices.Contains(evidence.RealJails, g.Jail) && !g.JailCanaries:
			it.fail("canaries", "the run was jailed (%s) but did not run the jail's own canaries: nothing shows that the jail held (--allow-no-jail-canaries)", g.Jail)
		}
	}
	if o.requireJailed() {
		switch {
		case noConfig:
			it.fail("jail", "the receipt records no run configuration: nothing shows its commands ran in a real jail (--allow-unjailed)")
		case !a.Jailed:
			it.fail("jail", "%s: commands may have run outside a real jail (--allow-unjailed)", a.JailProblem)
		}
	}
}

func blockedProblem(agent, malformed, max int64) string {
	s := fmt.Sprintf("%d blocked entries, not counting canaries", agent+malformed)
	if malformed > 0 {
		s += fmt.Sprintf(" (%d of them unreadable, counted as blocked)", malformed)
	}
	return s + fmt.Sprintf("; --max-blocked %d", max)
}

// outcomeProblem says why a recomputed outcome is not one of want, with
// the relaxation that would accept it.
func outcomeProblem(a evidence.Assessment, want []evidence.Outcome) string {
	s := fmt.Sprintf("the chain recomputes to %s; %s required", a.Outcome, orList(want))
	switch a.Outcome {
	case evidence.OutcomeUnverified:
		return s + ": no verify command was configured, so nothing independent of the agent checked its work (--allow-no-verify-command)"
	case evidence.OutcomeFail:
		return s + ": " + firstOr(a.Reasons, "no reason recorded") + " (--allow-fail)"
	case evidence.OutcomeDryRun:
		return s + ": nothing was executed (--require-outcome GOVERNED_DRY_RUN)"
	}
	return s
}

func orList(os []evidence.Outcome) string {
	ss := make([]string, len(os))
	for i, o := range os {
		ss[i] = string(o)
	}
	return strings.Join(ss, " or ")
}

// expectations applies --expect-commit, --expect-repo and
// --expect-policy-sha256: the receipt is bound to one commit of one
// repository and one policy, so that an old, valid receipt does not pass
// for new code or another policy.
func expectations(it *Item, f *evidence.ReceiptFacts, o *Options) {
	r := f.Receipt
	if o.ExpectCommit != "" {
		c, ok := provString(r, evidence.ProvCommit)
		flag := o.flagName(o.CommitFrom, "--expect-commit")
		switch {
		case !ok:
			it.fail("provenance.commit", "missing: the receipt is bound to no commit (%s %s)", flag, o.ExpectCommit)
		case !isHex(c) || lowerASCII(c) != o.ExpectCommit:
			it.fail("provenance.commit", "the receipt is for commit %q, not %s (%s)", c, o.ExpectCommit, flag)
		}
	}
	if o.ExpectRepo != "" {
		repo, ok := provString(r, evidence.ProvRepository)
		flag := o.flagName(o.RepoFrom, "--expect-repo")
		switch {
		case !ok:
			it.fail("provenance.repository", "missing: the receipt is bound to no repository (%s %s)", flag, o.ExpectRepo)
		case lowerASCII(repo) != lowerASCII(o.ExpectRepo):
			it.fail("provenance.repository", "the receipt is for repository %q, not %s (%s)", repo, o.ExpectRepo, flag)
		}
	}
	if o.Head != "" && it.Head != o.Head {
		// it.Head is the last entry_hash the verifier recomputed, never a
		// stored field.
		it.fail(evidence.RFieldChain, "the chain ends on entry_hash %s, not %s (--expect-head): it is not the run whose head you hold", it.Head, o.Head)
	}
	if want := o.ExpectPolicySHA256; want != "" {
		recorded := false
		if f.Governed {
			recorded = true
			if f.Governance.PolicySHA256 != want {
				it.fail("governance.policy_sha256", "the run's policy hashes to %q, not %s (--expect-policy-sha256)", f.Governance.PolicySHA256, want)
			}
		}
		if p, ok := provString(r, evidence.ProvPolicySHA256); ok {
			recorded = true
			if lowerASCII(p) != want {
				it.fail("provenance.policy_sha256", "the run's policy hashes to %q, not %s (--expect-policy-sha256)", p, want)
			}
		}
		if !recorded {
			it.fail("provenance.policy_sha256", "missing: the receipt records no policy hash (--expect-policy-sha256 %s)", want)
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

// firstWith is the first of ss holding sub, for a message (the decision
// was made on a recomputed fact, not on this text).
func firstWith(ss []string, sub, def string) string {
	for _, s := range ss {
		if strings.Contains(s, sub) {
			return s
		}
	}
	return def
}

func ptr[T any](v T) *T { return &v }

// blockedScan counts the agent's blocked entries of a bare ledger's lines
// for --max-blocked, with the same Assessor a receipt's chain is judged
// by (under no configuration: a bare ledger records none, and only the
// counts are read).
type blockedScan struct {
	a *evidence.Assessor
}

func newBlockedScan() *blockedScan {
	return &blockedScan{a: evidence.NewAssessor(evidence.Governance{})}
}

func (s *blockedScan) add(e canon.Value) { s.a.Add(e) }

func (s *blockedScan) report(it *Item, o *Options) {
	a := s.a.Result()
	blocked := a.AgentBlocked + a.Malformed
	it.AgentBlocked = &blocked
	if o.MaxBlocked != nil && blocked > *o.MaxBlocked {
		it.fail("chain", "%s", blockedProblem(a.AgentBlocked, a.Malformed, *o.MaxBlocked))
	}
}

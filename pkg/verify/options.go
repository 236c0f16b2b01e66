package verify

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/deponent-dev/deponent-action/pkg/evidence"
)

// Options are what a run requires. The zero value is the strictest: every
// requirement on, nothing relaxed, nothing expected beyond them. Each
// field that departs from it is either an expectation (ExpectCommit, …)
// or a named relaxation (Allow…) that the report prints.
type Options struct {
	// RequireOutcome is the outcome each receipt's chain must recompute
	// to. "" means GOVERNED_PASS, which needs the verify command to have
	// run and passed (evidence.Assess). Only the values of
	// evidence.Outcomes are accepted.
	RequireOutcome evidence.Outcome

	// AllowFail: no outcome is required; any recomputed outcome passes.
	AllowFail bool
	// AllowNoVerifyCommand: a run configured without a verify command
	// (GOVERNED_UNVERIFIED) passes beside GOVERNED_PASS.
	AllowNoVerifyCommand bool
	// AllowNoCanaries: the canaries need not have been enabled, run or
	// held.
	AllowNoCanaries bool
	// AllowNoJailCanaries: a jailed run need not have run the jail's own
	// canaries (the gate's are still required).
	AllowNoJailCanaries bool
	// AllowUnjailed: commands may have run outside a real jail.
	AllowUnjailed bool
	// AllowStoredOutcome: a receipt without a governance object (the
	// Python reference's) passes on the outcome it stores, which cannot
	// be recomputed. Without it, any outcome requirement refuses such a
	// receipt.
	AllowStoredOutcome bool
	// ChainOnly: only the chains, the content hashes, the stores'
	// bookkeeping and the expectations set below (MaxBlocked, Expect…,
	// an explicit MinReceipts, the anchors) are checked: no outcome,
	// canary or jail requirement, and MinReceipts defaults to 0.
	ChainOnly bool

	// MaxBlocked caps the agent's blocked entries of a chain (not the
	// canaries', blocked by design; entries that cannot be read count as
	// blocked). nil = no cap.
	MaxBlocked *int64
	// ExpectCommit: a receipt's provenance.commit must equal this full SHA
	// (case-insensitive hex, never a prefix). "" = not checked.
	ExpectCommit string
	// ExpectRepo: a receipt's provenance.repository must equal this
	// OWNER/NAME (case-insensitive, as GitHub names are). "" = not checked.
	ExpectRepo string
	// CommitFrom and RepoFrom name the environment variable ExpectCommit
	// and ExpectRepo were taken from (BindGitHub), "" when given directly.
	CommitFrom, RepoFrom string
	// AllowAnyCommit: BindGitHub binds nothing; receipts of any commit and
	// repository pass unless ExpectCommit or ExpectRepo is given.
	AllowAnyCommit bool
	// ExpectPolicySHA256: the policy hash a receipt records (governance
	// and provenance) must equal this one. "" = not checked.
	ExpectPolicySHA256 string
	// MinReceipts: at least this many distinct receipts (by receipt id)
	// must verify across all PATHs, and every directory or zip PATH must
	// hold a receipt unless it is 0. nil means 1.
	MinReceipts *int
	// Anchors every bare ledger must meet: its length (Len, nil = not
	// checked) and its last entry_hash (Head, "" = not checked).
	evidence.Anchors

	// ReadTimeout bounds the reading of standard input and of a pipe or
	// device named on the command line, from the open to the last byte.
	// 0 means DefaultReadTimeout; NoReadTimeout waits without a limit.
	ReadTimeout   time.Duration
	NoReadTimeout bool

	// Workers verifying receipts at once; 0 means GOMAXPROCS.
	Workers int
	// Stdin is what the PATH "-" reads; nil means an empty input.
	Stdin io.Reader
}

// DefaultReadTimeout bounds the reading of standard input and pipes.
const DefaultReadTimeout = 60 * time.Second

// DefaultOptions returns the zero Options: every requirement on.
func DefaultOptions() Options { return Options{} }

// UsageError is a bad flag value: the command line, not the evidence, is
// wrong (exit status 2).
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

func usagef(format string, args ...any) error {
	return &UsageError{Msg: fmt.Sprintf(format, args...)}
}

// flagName names an option the way the command line spells it, for
// messages.
func (o *Options) flagName(env, flag string) string {
	if env != "" {
		return "$" + env
	}
	return flag
}

// Validate checks and normalises the options: an outcome must be one of
// evidence.Outcomes, a commit or head is lowered to the form the receipts
// store, a repository must be OWNER/NAME, contradictory choices are
// refused. A bad value is a *UsageError.
func (o *Options) Validate() error {
	if o.RequireOutcome != "" && !slices.Contains(evidence.Outcomes, o.RequireOutcome) {
		names := make([]string, len(evidence.Outcomes))
		for i, v := range evidence.Outcomes {
			names[i] = string(v)
		}
		return usagef("--require-outcome %q: not an outcome; want one of %s", o.RequireOutcome, strings.Join(names, ", "))
	}
	if o.RequireOutcome != "" && o.AllowFail {
		return usagef("--require-outcome %s and --allow-fail contradict each other: one requires an outcome, the other none", o.RequireOutcome)
	}
	if o.AllowNoVerifyCommand && o.RequireOutcome != "" && o.RequireOutcome != evidence.OutcomePass {
		return usagef("--allow-no-verify-command widens GOVERNED_PASS; it means nothing with --require-outcome %s", o.RequireOutcome)
	}
	if o.ChainOnly && o.RequireOutcome != "" {
		return usagef("--chain-only requires no outcome: --require-outcome %s with it contradicts it", o.RequireOutcome)
	}
	if o.MinReceipts != nil && *o.MinReceipts < 0 {
		return usagef("--min-receipts %d: must be 0 or more", *o.MinReceipts)
	}
	if o.Len != nil && *o.Len < 0 {
		return usagef("--expect-len %d: must be 0 or more", *o.Len)
	}
	if o.ExpectCommit != "" {
		c, err := NormalizeCommit(o.ExpectCommit)
		if err != nil {
			if o.CommitFrom != "" {
				return usagef("$%s %q: not a full commit SHA; pass --expect-commit, or --allow-any-commit", o.CommitFrom, o.ExpectCommit)
			}
			return err
		}
		o.ExpectCommit = c
	}
	if o.ExpectRepo != "" {
		if err := checkRepo(o.ExpectRepo); err != nil {
			if o.RepoFrom != "" {
				return usagef("$%s %q: not OWNER/NAME; pass --expect-repo, or --allow-any-commit", o.RepoFrom, o.ExpectRepo)
			}
			return err
		}
	}
	if o.ExpectPolicySHA256 != "" {
		h := strings.ToLower(o.ExpectPolicySHA256)
		if !isHex(h) || len(h) != 64 {
			return usagef("--expect-policy-sha256 %q: want the 64-hex-digit sha256 of the policy", o.ExpectPolicySHA256)
		}
		o.ExpectPolicySHA256 = h
	}
	if o.Head != "" {
		h := strings.ToLower(o.Head)
		if !isHex(h) || len(h) != 64 {
			return usagef("--expect-head %q: want the 64-hex-digit entry_hash of the last entry", o.Head)
		}
		o.Head = h
	}
	if o.ReadTimeout < 0 {
		return usagef("--read-timeout %s: must be 0 (no limit) or more", o.ReadTimeout)
	}
	if o.Workers < 0 {
		return usagef("workers %d: must be 0 or more", o.Workers)
	}
	return nil
}

// GitHub's variables that bind a run to its commit and repository.
const (
	EnvSHA        = "GITHUB_SHA"
	EnvRepository = "GITHUB_REPOSITORY"
)

// BindGitHub makes a run inside GitHub Actions require receipts of the
// workflow's own commit and repository: when GITHUB_SHA or
// GITHUB_REPOSITORY is set and the matching expectation is not, it is
// taken from there (CommitFrom, RepoFrom say so). It does nothing for
// ChainOnly or AllowAnyCommit. A bad value is refused by Validate, naming
// the variable.
func (o *Options) BindGitHub(getenv func(string) string) {
	if o.ChainOnly || o.AllowAnyCommit {
		return
	}
	if v := getenv(EnvSHA); v != "" && o.ExpectCommit == "" {
		o.ExpectCommit, o.CommitFrom = v, EnvSHA
	}
	if v := getenv(EnvRepository); v != "" && o.ExpectRepo == "" {
		o.ExpectRepo, o.RepoFrom = v, EnvRepository
	}
}

// NormalizeCommit checks a full commit SHA (40 hex digits for SHA-1
// repositories, 64 for SHA-256 ones) and lowers it. A short SHA is refused:
// a prefix names no commit for sure, and matching one would let an old
// receipt pass for code that merely shares it.
func NormalizeCommit(s string) (string, error) {
	c := strings.ToLower(s)
	if !isHex(c) {
		return "", usagef("--expect-commit %q: not a hexadecimal commit SHA", s)
	}
	if len(c) != 40 && len(c) != 64 {
		return "", usagef("--expect-commit %q: want the full 40-hex-digit commit SHA (e.g. ${{ github.sha }}), not a prefix", s)
	}
	return c, nil
}

func checkRepo(s string) error {
	owner, name, ok := strings.Cut(s, "/")
	bad := !ok || owner == "" || name == "" || strings.Contains(name, "/") ||
		strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f })
	if bad {
		return usagef("--expect-repo %q: want OWNER/NAME (e.g. ${{ github.repository }})", s)
	}
	return nil
}

func isHex(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') && (c < 'A' || c > 'F') {
			return false
		}
	}
	return true
}

// The requirements, as the options leave them.

// outcomes are the recomputed outcomes a receipt may have; nil = any.
func (o *Options) outcomes() []evidence.Outcome {
	switch {
	case o.AllowFail || o.ChainOnly:
		return nil
	case o.RequireOutcome != "":
		return []evidence.Outcome{o.RequireOutcome}
	case o.AllowNoVerifyCommand:
		return []evidence.Outcome{evidence.OutcomePass, evidence.OutcomeUnverified}
	}
	return []evidence.Outcome{evidence.OutcomePass}
}

func (o *Options) requireCanaries() bool     { return !o.AllowNoCanaries && !o.ChainOnly }
func (o *Options) requireJailCanaries() bool { return o.requireCanaries() && !o.AllowNoJailCanaries }
func (o *Options) requireJailed() bool       { return !o.AllowUnjailed && !o.ChainOnly }

// requireRecomputed: an outcome requirement that a stored outcome alone
// does not meet.
func (o *Options) requireRecomputed() bool { return o.outcomes() != nil && !o.AllowStoredOutcome }

func (o *Options) minReceipts() int {
	switch {
	case o.MinReceipts != nil:
		return *o.MinReceipts
	case o.ChainOnly:
		return 0
	}
	return 1
}

func (o *Options) readTimeout() time.Duration {
	switch {
	case o.NoReadTimeout:
		return 0
	case o.ReadTimeout > 0:
		return o.ReadTimeout
	}
	return DefaultReadTimeout
}

// receiptOnly lists what a bare ledger cannot satisfy, standing alone: it
// records no outcome, no run configuration and no provenance.
func (o *Options) receiptOnly() []string {
	var fs []string
	if o.outcomes() != nil {
		fs = append(fs, "a recomputed outcome (--allow-fail)")
	}
	if o.requireCanaries() {
		fs = append(fs, "the canaries (--allow-no-canaries)")
	}
	if o.requireJailed() {
		fs = append(fs, "jailed execution (--allow-unjailed)")
	}
	if o.ExpectCommit != "" {
		fs = append(fs, o.flagName(o.CommitFrom, "--expect-commit"))
	}
	if o.ExpectRepo != "" {
		fs = append(fs, o.flagName(o.RepoFrom, "--expect-repo"))
	}
	if o.ExpectPolicySHA256 != "" {
		fs = append(fs, "--expect-policy-sha256")
	}
	return fs
}

// Relaxation is a requirement a run was told to drop, as the report prints
// it.
type Relaxation struct {
	Flag    string `json:"flag"`
	Relaxes string `json:"relaxes"`
}

// relaxations lists every requirement the options drop.
func (o *Options) relaxations() []Relaxation {
	var rs []Relaxation
	add := func(on bool, flag, what string) {
		if on {
			rs = append(rs, Relaxation{flag, what})
		}
	}
	add(o.ChainOnly, "--chain-only", "only chains, content hashes, stores' bookkeeping and the expectations given are checked: no outcome, canary, jail or receipt-count requirement")
	add(o.AllowFail && !o.ChainOnly, "--allow-fail", "any recomputed outcome passes (GOVERNED_FAIL, GOVERNED_UNVERIFIED, GOVERNED_DRY_RUN too): neither a pass nor a verify command that ran and passed is required")
	add(o.AllowNoVerifyCommand && !o.ChainOnly, "--allow-no-verify-command", "a run configured without a verify command (GOVERNED_UNVERIFIED) passes: nothing independent of the agent need have checked its work")
	add(o.RequireOutcome != "" && o.RequireOutcome != evidence.OutcomePass, "--require-outcome "+string(o.RequireOutcome), "the chain must recompute to "+string(o.RequireOutcome)+", not GOVERNED_PASS")
	add(o.AllowNoCanaries && !o.ChainOnly, "--allow-no-canaries", "the canaries need not have run and held: nothing need show that the gate and the jail held")
	add(o.AllowNoJailCanaries && !o.AllowNoCanaries && !o.ChainOnly, "--allow-no-jail-canaries", "a jailed run need not have run the jail's own canaries: nothing need show that the jail held")
	add(o.AllowUnjailed && !o.ChainOnly, "--allow-unjailed", "commands may have run outside a real jail (bwrap, seatbelt)")
	add(o.AllowStoredOutcome && !o.ChainOnly && o.outcomes() != nil, "--allow-stored-outcome", "a receipt without a governance object passes on the outcome it stores, which is not recomputed")
	add(o.MinReceipts != nil && *o.MinReceipts == 0 && !o.ChainOnly, "--min-receipts 0", "no receipt need verify, and a directory or zip may hold none")
	add(o.AllowAnyCommit && o.ExpectCommit == "", "--allow-any-commit", "receipts of any commit pass: not bound to $GITHUB_SHA, as they are inside GitHub Actions")
	add(o.AllowAnyCommit && o.ExpectRepo == "", "--allow-any-commit", "receipts of any repository pass: not bound to $GITHUB_REPOSITORY, as they are inside GitHub Actions")
	add(o.NoReadTimeout, "--read-timeout 0", "reads of standard input and pipes wait without a time limit")
	return rs
}

// Policy is the options as the JSON report shows them; null = not checked.
type Policy struct {
	// Outcomes the chain of each receipt may recompute to; null = any.
	Outcomes []evidence.Outcome `json:"outcomes"`
	// RecomputedOutcome: a receipt's outcome must be recomputed from its
	// chain (a stored outcome alone does not pass).
	RecomputedOutcome  bool    `json:"recomputed_outcome"`
	Canaries           bool    `json:"canaries"`
	JailCanaries       bool    `json:"jail_canaries"`
	Jailed             bool    `json:"jailed"`
	ChainOnly          bool    `json:"chain_only"`
	MaxBlocked         *int64  `json:"max_blocked"`
	ExpectCommit       *string `json:"expect_commit"`
	ExpectCommitFrom   *string `json:"expect_commit_from"` // the environment variable, null when given as a flag
	ExpectRepo         *string `json:"expect_repo"`
	ExpectRepoFrom     *string `json:"expect_repo_from"`
	ExpectPolicySHA256 *string `json:"expect_policy_sha256"`
	MinReceipts        int     `json:"min_receipts"`
	ExpectLen          *int64  `json:"expect_len"`
	ExpectHead         *string `json:"expect_head"`
	// ReadTimeoutSeconds bounds reads of standard input and pipes; null =
	// no limit.
	ReadTimeoutSeconds *float64     `json:"read_timeout_seconds"`
	Relaxed            []Relaxation `json:"relaxed"`
}

func (o *Options) policy() Policy {
	opt := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	p := Policy{
		Outcomes: o.outcomes(), RecomputedOutcome: o.requireRecomputed(),
		Canaries: o.requireCanaries(), JailCanaries: o.requireJailCanaries(), Jailed: o.requireJailed(),
		ChainOnly:    o.ChainOnly,
		ExpectCommit: opt(o.ExpectCommit), ExpectCommitFrom: opt(o.CommitFrom),
		ExpectRepo: opt(o.ExpectRepo), ExpectRepoFrom: opt(o.RepoFrom),
		ExpectPolicySHA256: opt(o.ExpectPolicySHA256),
		MinReceipts:        o.minReceipts(), ExpectHead: opt(o.Head),
		Relaxed: o.relaxations(),
	}
	if p.Relaxed == nil {
		p.Relaxed = []Relaxation{}
	}
	if o.MaxBlocked != nil {
		n := *o.MaxBlocked
		p.MaxBlocked = &n
	}
	if o.Len != nil {
		n := *o.Len
		p.ExpectLen = &n
	}
	if t := o.readTimeout(); t > 0 {
		s := t.Seconds()
		p.ReadTimeoutSeconds = &s
	}
	return p
}

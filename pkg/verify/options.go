package verify

import (
	"fmt"
	"io"
	"strings"

	"github.com/deponent-dev/deponent-action/pkg/evidence"
)

// Options are the policies a run enforces. The zero value is not ready to
// use: start from DefaultOptions, which turns every policy off except
// MinReceipts 1.
type Options struct {
	// RequireOutcome: the stored outcome must equal this value and, for a
	// receipt that carries a governance object, the outcome recomputed
	// from its chain (evidence.Assess) must equal it too. "" = off.
	RequireOutcome evidence.Outcome
	// RequireJailed: no command ran outside a real jail (see the package
	// doc for the exact rule).
	RequireJailed bool
	// MaxBlocked caps the blocked entries of a chain, not counting the
	// harness's canaries. nil = off.
	MaxBlocked *int64
	// ExpectCommit: the receipt's provenance.commit must equal this full
	// SHA (case-insensitive hex, never a prefix). "" = off.
	ExpectCommit string
	// ExpectRepo: the receipt's provenance.repository must equal this
	// OWNER/NAME (case-insensitive, as GitHub names are). "" = off.
	ExpectRepo string
	// MinReceipts: each directory or zip PATH must hold at least this many
	// receipts.
	MinReceipts int
	// Anchors every bare ledger must meet: its length (Len, nil = off) and
	// its last entry_hash (Head, "" = off).
	evidence.Anchors

	// Workers verifying receipts at once; 0 means GOMAXPROCS.
	Workers int
	// Stdin is what the PATH "-" reads; nil means an empty input.
	Stdin io.Reader
}

// DefaultOptions returns the options with every policy off and
// MinReceipts 1: a directory or zip that holds no receipt fails.
func DefaultOptions() Options {
	return Options{MinReceipts: 1}
}

// UsageError is a bad flag value: the command line, not the evidence, is
// wrong (exit status 2).
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

func usagef(format string, args ...any) error {
	return &UsageError{Msg: fmt.Sprintf(format, args...)}
}

// Validate checks and normalises the options: a commit or head is lowered
// to the form the receipts store, a repository must be OWNER/NAME. A bad
// value is a *UsageError.
func (o *Options) Validate() error {
	if o.RequireOutcome != "" && strings.TrimSpace(string(o.RequireOutcome)) != string(o.RequireOutcome) {
		return usagef("--require-outcome %q: surrounding spaces would never match", o.RequireOutcome)
	}
	if o.MinReceipts < 0 {
		return usagef("--min-receipts %d: must be 0 or more", o.MinReceipts)
	}
	if o.Len != nil && *o.Len < 0 {
		return usagef("--expect-len %d: must be 0 or more", *o.Len)
	}
	if o.ExpectCommit != "" {
		c, err := NormalizeCommit(o.ExpectCommit)
		if err != nil {
			return err
		}
		o.ExpectCommit = c
	}
	if o.ExpectRepo != "" {
		if err := checkRepo(o.ExpectRepo); err != nil {
			return err
		}
	}
	if o.Head != "" {
		h := strings.ToLower(o.Head)
		if !isHex(h) || len(h) != 64 {
			return usagef("--expect-head %q: want the 64-hex-digit entry_hash of the last entry", o.Head)
		}
		o.Head = h
	}
	if o.Workers < 0 {
		return usagef("workers %d: must be 0 or more", o.Workers)
	}
	return nil
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

// receiptOnly lists the set policies that only a receipt can satisfy: a
// bare ledger records no outcome and no provenance.
func (o *Options) receiptOnly() []string {
	var fs []string
	if o.RequireOutcome != "" {
		fs = append(fs, "--require-outcome")
	}
	if o.ExpectCommit != "" {
		fs = append(fs, "--expect-commit")
	}
	if o.ExpectRepo != "" {
		fs = append(fs, "--expect-repo")
	}
	return fs
}

// Policy is the options as the JSON report shows them; null = off.
type Policy struct {
	RequireOutcome *string `json:"require_outcome"`
	RequireJailed  bool    `json:"require_jailed"`
	MaxBlocked     *int64  `json:"max_blocked"`
	ExpectCommit   *string `json:"expect_commit"`
	ExpectRepo     *string `json:"expect_repo"`
	MinReceipts    int     `json:"min_receipts"`
	ExpectLen      *int64  `json:"expect_len"`
	ExpectHead     *string `json:"expect_head"`
}

func (o *Options) policy() Policy {
	opt := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	p := Policy{
		RequireOutcome: opt(string(o.RequireOutcome)), RequireJailed: o.RequireJailed,
		ExpectCommit: opt(o.ExpectCommit), ExpectRepo: opt(o.ExpectRepo),
		MinReceipts: o.MinReceipts, ExpectHead: opt(o.Head),
	}
	if o.MaxBlocked != nil {
		n := *o.MaxBlocked
		p.MaxBlocked = &n
	}
	if o.Len != nil {
		n := *o.Len
		p.ExpectLen = &n
	}
	return p
}

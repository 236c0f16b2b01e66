package verify

import (
	"fmt"

	"github.com/deponent-dev/deponent-action/internal/version"
	"github.com/deponent-dev/deponent-action/pkg/evidence"
)

// Kind is what an Item is.
type Kind string

// The kinds of item.
const (
	KindReceipt   Kind = "receipt"   // a receipt file, a zip member or stdin
	KindLedger    Kind = "ledger"    // a bare JSONL ledger
	KindIndex     Kind = "index"     // a store's index.jsonl
	KindLatest    Kind = "latest"    // a store's LATEST
	KindDirectory Kind = "directory" // a directory PATH, as a whole
	KindZip       Kind = "zip"       // a zip PATH, as a whole
	KindEntry     Kind = "entry"     // something that is none of these (a symlink, a FIFO, an unsafe zip name, …)
	KindPolicy    Kind = "policy"    // a policy that nothing could satisfy (e.g. --expect-len with no ledger)
)

// Problem is one reason an item failed, and where.
type Problem struct {
	Where string `json:"where,omitempty"` // "line 3, column 5 (byte 20)", "chain.entries[4]", "provenance.commit", "line 2", …
	Msg   string `json:"message"`
}

func (p Problem) String() string {
	if p.Where == "" {
		return p.Msg
	}
	return p.Where + ": " + p.Msg
}

// maxProblems bounds the reasons kept per item: the first one is what
// matters, a few more help, thousands would only cost memory.
const maxProblems = 16

// Item is the verdict on one thing verified. Only the small per-item facts
// are kept, never a receipt's body.
type Item struct {
	Path string `json:"path"` // as given; zip members as "artifact.zip!dir/name.json"
	Kind Kind   `json:"kind"`
	OK   bool   `json:"ok"`
	// Verified: the chain (and for a receipt, the signature) recomputed
	// cleanly. An item can be Verified and still fail a policy.
	Verified bool `json:"verified"`

	ReceiptID string           `json:"receipt_id,omitempty"`
	Producer  string           `json:"producer,omitempty"`
	SessionID string           `json:"session_id,omitempty"`
	TS        string           `json:"ts,omitempty"`
	Outcome   evidence.Outcome `json:"outcome,omitempty"` // as stored
	// Recomputed is the outcome evidence.Assess recomputes from the chain;
	// "" when the receipt carries no governance object (the stored outcome
	// is then a claim, not recomputed).
	Recomputed   evidence.Outcome `json:"recomputed_outcome,omitempty"`
	Entries      int64            `json:"entries"`
	Allowed      int64            `json:"allowed"`
	Blocked      int64            `json:"blocked"`
	Head         string           `json:"head,omitempty"`      // last entry_hash (the genesis for an empty chain)
	Signature    string           `json:"signature,omitempty"` // the recomputed content hash (a receipt's "signature")
	Repository   string           `json:"repository,omitempty"`
	Commit       string           `json:"commit,omitempty"`
	Jail         string           `json:"jail,omitempty"`
	PolicySHA256 string           `json:"policy_sha256,omitempty"`

	// AnchoredBy: a ledger's length and head equal those of this receipt's
	// chain, beside it, so the receipt's content hash covers the ledger
	// too. "" for a ledger nothing anchors.
	AnchoredBy string `json:"anchored_by,omitempty"`

	Receipts int `json:"receipts,omitempty"` // directory, zip and index: receipts held or listed
	Ledgers  int `json:"ledgers,omitempty"`  // directory and zip: bare ledgers held
	Ignored  int `json:"ignored,omitempty"`  // directory and zip: files that are none of the above

	Problems []Problem `json:"problems,omitempty"` // why it failed; the first is the reason
	Notes    []string  `json:"notes,omitempty"`    // facts worth knowing that are not failures
}

func (it *Item) fail(where, format string, args ...any) {
	if len(it.Problems) >= maxProblems {
		return
	}
	it.Problems = append(it.Problems, Problem{Where: where, Msg: fmt.Sprintf(format, args...)})
}

func (it *Item) note(format string, args ...any) {
	it.Notes = append(it.Notes, fmt.Sprintf(format, args...))
}

// Reason is the first problem, "" for an item that passed.
func (it *Item) Reason() string {
	if len(it.Problems) == 0 {
		return ""
	}
	return it.Problems[0].String()
}

// Honesty is what every report says about what a pass means.
const Honesty = "tamper-evident, not signed: ledgers are hash-chained and a receipt's \"signature\" is a content hash, with no key anywhere. " +
	"A pass proves internal consistency and the recorded bindings (commit, repository, policy hash, jail), not authorship: " +
	"whoever can rewrite a chain from its genesis can forge a consistent receipt."

// Report is the result of a run, and the document --json prints.
type Report struct {
	Tool     string `json:"tool"`
	Version  string `json:"version"`
	OK       bool   `json:"ok"`
	Verified int    `json:"verified"` // items that passed
	Failed   int    `json:"failed"`   // items that failed
	Receipts int    `json:"receipts"` // receipt items, passed or failed
	Ledgers  int    `json:"ledgers"`  // bare ledger items, passed or failed
	Policy   Policy `json:"policy"`
	Items    []Item `json:"items"`
	Note     string `json:"note"`
}

func newReport(o *Options, items []Item) *Report {
	r := &Report{Tool: "deponent-verify", Version: version.Version, Policy: o.policy(), Items: items, Note: Honesty}
	for i := range items {
		it := &items[i]
		it.OK = len(it.Problems) == 0
		if it.OK {
			r.Verified++
		} else {
			r.Failed++
		}
		switch it.Kind {
		case KindReceipt:
			r.Receipts++
		case KindLedger:
			r.Ledgers++
		}
	}
	r.OK = r.Failed == 0 && len(items) > 0
	return r
}

// Exit statuses of deponent-verify.
const (
	ExitOK    = 0 // everything verified and every policy held
	ExitFail  = 1 // anything failed to verify or to satisfy a policy
	ExitUsage = 2 // a bad flag or command line: nothing was verified
)

// ExitCode is ExitOK when everything verified and every policy held,
// ExitFail otherwise.
func (r *Report) ExitCode() int {
	if r.OK {
		return ExitOK
	}
	return ExitFail
}

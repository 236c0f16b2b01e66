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
// are kept, never a receipt's body. docs/verify-json.md documents every
// field as the JSON report shows it.
type Item struct {
	Path string `json:"path"` // as given; zip members as "artifact.zip!dir/name.json"
	Kind Kind   `json:"kind"`
	OK   bool   `json:"ok"`
	// Verified: the chain (and for a receipt, the content hash) recomputed
	// cleanly; for a directory or zip, a receipt in it did. An item can be
	// Verified and still fail a requirement.
	Verified bool `json:"verified"`

	ReceiptID string           `json:"receipt_id,omitempty"`
	Producer  string           `json:"producer,omitempty"`
	SessionID string           `json:"session_id,omitempty"`
	TS        string           `json:"ts,omitempty"`
	Outcome   evidence.Outcome `json:"outcome,omitempty"` // as stored
	// Recomputed is the outcome evidence.Assess recomputes from the chain;
	// "" when the receipt carries no governance object (the stored outcome
	// is then a claim, not recomputed).
	Recomputed evidence.Outcome `json:"recomputed_outcome,omitempty"`
	// OutcomeSource is SourceRecomputed or SourceStored for a receipt that
	// verified.
	OutcomeSource string `json:"outcome_source,omitempty"`
	// Entries, Allowed, Blocked and Head are those of the chain as far as
	// it verified: all of it, or the entries before the break.
	Entries int64  `json:"entries"`
	Allowed int64  `json:"allowed"`
	Blocked int64  `json:"blocked"`
	Head    string `json:"head,omitempty"` // last verified entry_hash (the genesis when none)
	// AgentBlocked counts the agent's blocked entries (not the canaries',
	// blocked by design; unreadable entries counted as blocked), for a
	// receipt that verified and a ledger checked with --max-blocked.
	AgentBlocked *int64 `json:"agent_blocked,omitempty"`
	// Recomputed facts of a governed receipt (absent otherwise).
	VerifyCommand string `json:"verify_command,omitempty"`
	VerifyRan     *bool  `json:"verify_ran,omitempty"`
	VerifyPassed  *bool  `json:"verify_passed,omitempty"`
	CanariesRun   *int   `json:"canaries_run,omitempty"`
	CanariesHeld  *int   `json:"canaries_held,omitempty"`
	Jailed        *bool  `json:"jailed,omitempty"`

	Signature    string `json:"signature,omitempty"` // the recomputed content hash (a receipt's "signature")
	Repository   string `json:"repository,omitempty"`
	Commit       string `json:"commit,omitempty"`
	Jail         string `json:"jail,omitempty"`
	PolicySHA256 string `json:"policy_sha256,omitempty"`

	// DuplicateOf: this receipt (same id, same content hash) was already
	// read at that path; it is counted once.
	DuplicateOf string `json:"duplicate_of,omitempty"`
	// AnchoredBy: a ledger's length and head equal those of this receipt's
	// chain, beside it, so the receipt's content hash covers the ledger
	// too. "" for a ledger nothing anchors.
	AnchoredBy string `json:"anchored_by,omitempty"`

	Receipts int `json:"receipts,omitempty"` // directory, zip and index: receipts held or listed
	Ledgers  int `json:"ledgers,omitempty"`  // directory and zip: bare ledgers held
	Ignored  int `json:"ignored,omitempty"`  // directory and zip: files that are none of the above

	Problems []Problem `json:"problems,omitempty"` // why it failed; the first is the reason
	Notes    []string  `json:"notes,omitempty"`    // facts worth knowing that are not failures

	model, task string // a receipt's, for its store's index
	// transcript and transcriptSHA256: a governed receipt's live agent
	// transcript (a file name in the receipt's directory) and its hash as
	// the chain records it.
	transcript, transcriptSHA256 string
	// outcomes: each entry's outcome_sha256, kept only for a receipt with
	// an outputs-<session>/ directory beside it.
	outcomes [][32]byte
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

// ReportSchema names the shape of the JSON report (docs/verify-json.md).
// A change that removes or retypes a field bumps it.
const ReportSchema = "deponent-verify-report/v1"

// Report is the result of a run, and the document --json prints.
type Report struct {
	Schema  string `json:"schema"`
	Tool    string `json:"tool"`
	Version string `json:"version"`
	OK      bool   `json:"ok"`
	// Verified counts the receipts and ledgers that passed; Failed every
	// item that failed, of any kind (a store's index, a policy…).
	Verified int `json:"verified"`
	Failed   int `json:"failed"`
	Receipts int `json:"receipts"` // receipt items, passed or failed
	// DistinctReceipts counts the receipt ids that verified, each once.
	DistinctReceipts int    `json:"distinct_receipts"`
	verifiedReceipts int    // receipt items that verified, copies included
	Ledgers          int    `json:"ledgers"` // bare ledger items, passed or failed
	Policy           Policy `json:"policy"`
	Items            []Item `json:"items"`
	Note             string `json:"note"`
}

func newReport(o *Options, items []Item) *Report {
	r := &Report{Schema: ReportSchema, Tool: "deponent-verify", Version: version.Version, Policy: o.policy(), Items: items, Note: Honesty}
	ids := map[string]bool{}
	for i := range items {
		it := &items[i]
		it.OK = len(it.Problems) == 0
		if !it.OK {
			r.Failed++
		}
		switch it.Kind {
		case KindReceipt:
			r.Receipts++
			if it.Verified {
				ids[it.ReceiptID] = true
				r.verifiedReceipts++
			}
		case KindLedger:
			r.Ledgers++
		}
		if it.OK && (it.Kind == KindReceipt || it.Kind == KindLedger) {
			r.Verified++
		}
	}
	r.DistinctReceipts = len(ids)
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

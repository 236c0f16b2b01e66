package evidence

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/deponent-dev/deponent-action/pkg/canon"
)

// ReceiptSchema is the one schema this kernel writes and verifies. A
// breaking change to the body, the signature or the chain hash bumps it.
const ReceiptSchema = "deponent-receipt/v1"

// TaskMaxChars is how many characters of the task a receipt keeps.
const TaskMaxChars = 160

// IndexTaskChars is how many characters of the task a store's index line
// keeps, as the reference's persist() writes it.
const IndexTaskChars = 80

// IndexTask is the task as a store's index line holds it: its first
// IndexTaskChars characters. Persist writes it; a verifier checks an index
// line against it.
func IndexTask(task string) string { return cutChars(task, IndexTaskChars) }

// MaxReceiptBytes caps a receipt file. A bigger one is refused unread.
const MaxReceiptBytes = 64 << 20

// ReceiptLimits bound the JSON of a receipt: the size cap, 64 levels of
// nesting (a receipt needs 5, plus whatever provenance nests), 2^14
// members to an object and, for a receipt held whole as a tree
// (VerifyReceipt), 2^21 values. CheckReceipt holds no tree of the whole.
var ReceiptLimits = canon.Limits{MaxBytes: MaxReceiptBytes, MaxDepth: 64, MaxMembers: 1 << 14, MaxValues: 1 << 21}

// The receipt's fields.
const (
	RFieldID         = "receipt_id"
	RFieldSchema     = "schema"
	RFieldProducer   = "producer"
	RFieldTS         = "ts"
	RFieldSession    = "session_id"
	RFieldModel      = "model"
	RFieldTask       = "task"
	RFieldOutcome    = "outcome"
	RFieldChain      = "chain"
	RFieldProvenance = "provenance"
	RFieldSignature  = "signature"
	RFieldGenesis    = "genesis"
	RFieldEntries    = "entries"
)

var receiptStringFields = []string{RFieldID, RFieldSchema, RFieldProducer, RFieldTS, RFieldSession,
	RFieldModel, RFieldTask, RFieldOutcome, RFieldSignature}

// Receipt is a verified or freshly built receipt.
type Receipt struct {
	ID, Schema, Producer, TS, SessionID, Model, Task string
	Outcome                                          Outcome // as stored: any string a receipt holds
	Genesis                                          string
	Entries                                          []canon.Value
	Provenance                                       canon.Value
	Signature                                        string
	// Body is the whole receipt, signature included, members in the order
	// they were read or written.
	Body canon.Value
	// Chain is the recomputed chain.
	Chain ChainReport
}

// ReceiptInput is what a receipt is built from.
type ReceiptInput struct {
	Producer   string // a name safe as a directory name
	SessionID  string // a name safe in a file name
	Model      string
	Task       string // cut to TaskMaxChars characters
	Outcome    Outcome
	Genesis    string // "" means Genesis
	Entries    []canon.Value
	Provenance canon.Value    // an object; the zero Value means {}
	Extra      []canon.Member // more signed fields, written before the signature
	Now        time.Time      // zero means time.Now()
}

var safeName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// BuildReceipt signs a chain into a receipt. It refuses a chain that does
// not verify.
func BuildReceipt(in ReceiptInput) (*Receipt, error) {
	if !safeName.MatchString(in.Producer) {
		return nil, fmt.Errorf("receipt: producer %q must be 1-128 of [A-Za-z0-9._-], starting with a letter or digit", in.Producer)
	}
	if !safeName.MatchString(in.SessionID) {
		return nil, fmt.Errorf("receipt: session id %q must be 1-128 of [A-Za-z0-9._-], starting with a letter or digit", in.SessionID)
	}
	genesis := in.Genesis
	if genesis == "" {
		genesis = Genesis
	}
	rep := VerifyEntries(in.Entries, genesis, Anchors{})
	if rep.Break != nil {
		return nil, fmt.Errorf("receipt: refusing to sign a chain that does not verify: %w", rep.Break)
	}
	prov := in.Provenance
	if prov.Kind() == canon.Null {
		prov = canon.Obj()
	}
	if prov.Kind() != canon.Object {
		return nil, fmt.Errorf("receipt: provenance must be an object, not a %s", prov.Kind())
	}
	now := in.Now
	if now.IsZero() {
		now = time.Now()
	}
	now = now.UTC()
	id := now.Format("20060102T150405Z") + "_" + in.SessionID
	r := &Receipt{
		ID: id, Schema: ReceiptSchema, Producer: in.Producer,
		TS: now.Format("2006-01-02T15:04:05+00:00"), SessionID: in.SessionID,
		Model: in.Model, Task: cutChars(in.Task, TaskMaxChars), Outcome: in.Outcome,
		Genesis: genesis, Entries: in.Entries, Provenance: prov, Chain: rep,
	}
	members := []canon.Member{
		canon.M(RFieldID, canon.Str(r.ID)),
		canon.M(RFieldSchema, canon.Str(r.Schema)),
		canon.M(RFieldProducer, canon.Str(r.Producer)),
		canon.M(RFieldTS, canon.Str(r.TS)),
		canon.M(RFieldSession, canon.Str(r.SessionID)),
		canon.M(RFieldModel, canon.Str(r.Model)),
		canon.M(RFieldTask, canon.Str(r.Task)),
		canon.M(RFieldOutcome, canon.Str(string(r.Outcome))),
		canon.M(RFieldChain, canon.Obj(
			canon.M(RFieldGenesis, canon.Str(genesis)),
			canon.M(RFieldEntries, canon.Arr(in.Entries...)),
		)),
		canon.M(RFieldProvenance, prov),
	}
	for _, m := range in.Extra {
		for _, o := range members {
			if o.Key == m.Key || m.Key == RFieldSignature {
				return nil, fmt.Errorf("receipt: extra field %q would shadow a receipt field", m.Key)
			}
		}
		members = append(members, m)
	}
	unsigned := canon.Obj(members...)
	r.Signature = signature(unsigned)
	r.Body = canon.Obj(append(members, canon.M(RFieldSignature, canon.Str(r.Signature)))...)
	return r, nil
}

// signature is hex(sha256(C(body without "signature"))): a content hash,
// not an authorship signature.
func signature(body canon.Value) string {
	sum := sha256.Sum256(canon.AppendCanonicalWithout(nil, body, RFieldSignature))
	return hex.EncodeToString(sum[:])
}

// ReceiptError says why a receipt does not verify, and where.
type ReceiptError struct {
	Path  string // file, when known
	Where string // "line 3, column 5 (byte 20)", "chain.entries[4]", "signature", …
	Msg   string
	Break *Break // the chain break, when that is the reason
	Err   error  // the underlying read or parse error, when that is the reason
}

// Unwrap exposes the chain break or the underlying error, so callers can
// use errors.As (*Break, *canon.Error) and errors.Is (fs.ErrNotExist).
func (e *ReceiptError) Unwrap() error {
	if e.Break != nil {
		return e.Break
	}
	return e.Err
}

func (e *ReceiptError) Error() string {
	s := ""
	if e.Path != "" {
		s = e.Path + ": "
	}
	if e.Where != "" {
		s += e.Where + ": "
	}
	return s + e.Msg
}

// VerifyReceiptFile reads and verifies a receipt file; see VerifyReceipt.
func VerifyReceiptFile(path string) (*Receipt, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &ReceiptError{Path: path, Msg: fmt.Sprintf("cannot read: %v", unwrapPathError(err)), Err: err}
	}
	defer f.Close()
	r, err := VerifyReceiptReader(f)
	var re *ReceiptError
	if errors.As(err, &re) {
		re.Path = path
	}
	return r, err
}

// VerifyReceiptReader reads at most MaxReceiptBytes from rd and verifies
// them; a longer input is refused.
func VerifyReceiptReader(rd io.Reader) (*Receipt, error) {
	data, err := io.ReadAll(io.LimitReader(rd, MaxReceiptBytes+1))
	if err != nil {
		return nil, &ReceiptError{Msg: fmt.Sprintf("cannot read: %v", unwrapPathError(err)), Err: err}
	}
	if len(data) > MaxReceiptBytes {
		return nil, &ReceiptError{Msg: fmt.Sprintf("receipt is larger than the %d-byte cap", MaxReceiptBytes)}
	}
	return VerifyReceipt(data)
}

func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// VerifyReceipt recomputes a receipt (CheckReceipt) and keeps it whole:
// Body and Entries are the receipt as trees, for callers that read it
// further (the action, tests). A receipt too big to hold as a tree
// (ReceiptLimits.MaxValues) is refused here though CheckReceipt passes it.
func VerifyReceipt(data []byte) (*Receipt, error) {
	f, err := checkReceipt(data, true, false)
	if err != nil {
		return nil, err
	}
	return f.Receipt, nil
}

// ReceiptFacts is what CheckReceipt established about a receipt. On an
// error it holds what was established before it: the fields read, the
// chain's counts and head up to a break.
type ReceiptFacts struct {
	// Receipt holds the fields, the provenance and the recomputed chain;
	// not Body or Entries (see VerifyReceipt).
	*Receipt
	// Governed: the receipt carries a governance object of ours
	// (ParseGovernance); its outcome is then recomputed. GovernanceErr:
	// it carries one that cannot be read (an unknown schema, a field of
	// the wrong type…), and nothing is recomputed.
	Governed      bool
	Governance    Governance
	GovernanceErr error
	// Assessment is the chain judged by Assess under Governance when
	// Governed; otherwise under the zero Governance, of which only the
	// counts mean anything (AgentBlocked, StepErrors, Commands…).
	Assessment Assessment
	// Diffs lists how the stored governance summary differs from the
	// Assessment (CompareGovernance); empty when it does not, or when not
	// Governed.
	Diffs []string
	// Agent is the receipt's "agent" object when Governed and it reads
	// (ParseAgentRecord), held to the chain (Diffs); nil otherwise.
	Agent *AgentRecord
	// OutcomeHashes are the entries' outcome_sha256, decoded, in chain
	// order (CheckReceiptOutcomes only).
	OutcomeHashes [][sha256.Size]byte
}

// CheckReceipt recomputes a receipt in place, holding no tree of it: it
// reads the bytes strictly (package canon's rules: UTF-8, escapes,
// numbers, no duplicate key, 64 levels, at most 2^14 members to an
// object), checks every field's presence and type, re-links the chain from
// its genesis and recomputes every entry hash (with the ledger's per-line
// check, each entry read where it lies), judges each entry with an
// Assessor as it passes, and recomputes the content hash over the
// canonical body streamed into the hash. Memory is the bytes plus what one
// entry, the provenance and the governance object hold, whatever the
// rest of the receipt holds. Anything missing, unparsable, duplicated or
// of the wrong type fails; nothing stored is trusted, not a flag, not a
// count, not the signature itself. The facts are returned on an error too.
func CheckReceipt(data []byte) (*ReceiptFacts, error) {
	return checkReceipt(data, false, false)
}

// CheckReceiptOutcomes is CheckReceipt that also keeps each entry's
// outcome_sha256, decoded (OutcomeHashes): 32 bytes an entry, for a
// verifier that compares the command outputs kept beside a receipt.
func CheckReceiptOutcomes(data []byte) (*ReceiptFacts, error) {
	return checkReceipt(data, false, true)
}

// Caps on the parts of a receipt read as trees.
const (
	maxProvenanceValues = 1 << 14
	// A governance object holds a reason per failing entry at most.
	maxGovernanceValues = 1 << 19
)

// receiptChecker is what checking a receipt allocates, kept for the next
// one (a verifier checks thousands).
type receiptChecker struct {
	doc *canon.Doc
	cr  *chainReader
	h   hash.Hash
	w   *bufio.Writer
	key []byte
}

var checkers = sync.Pool{New: func() any {
	h := sha256.New()
	return &receiptChecker{cr: newChainReader(), h: h, w: bufio.NewWriterSize(h, 32<<10)}
}}

func checkReceipt(data []byte, keep, outcomes bool) (*ReceiptFacts, error) {
	c := checkers.Get().(*receiptChecker)
	defer checkers.Put(c)
	f, err := c.check(data, keep, outcomes)
	var re *ReceiptError
	if errors.As(err, &re) && re.Err == nil && len(data) > 0 {
		// Whatever else is wrong, a receipt that is not valid JSON is
		// reported as such first, as a reader that parses it whole would.
		// Only a failing receipt pays for this second reading.
		if d, derr := canon.NewDoc(data, ReceiptLimits); derr == nil {
			end, jerr := d.Skip(d.Root(), 0)
			if jerr == nil {
				jerr = d.End(end)
			}
			if jerr != nil {
				return f, jsonError(jerr)
			}
		}
	}
	return f, err
}

func (c *receiptChecker) check(data []byte, keep, outcomes bool) (*ReceiptFacts, error) {
	r := &Receipt{}
	f := &ReceiptFacts{Receipt: r}
	if len(data) == 0 {
		return f, &ReceiptError{Msg: "file is empty: not a receipt"}
	}
	var err error
	if c.doc == nil {
		c.doc, err = canon.NewDoc(data, ReceiptLimits)
	} else {
		err = c.doc.Reset(data)
	}
	if err != nil {
		return f, jsonError(err)
	}
	d := c.doc
	defer func() { // a checker kept for the next receipt keeps nothing of this one
		c.doc.Reset(nil)
		c.cr.w.tr.Release()
	}()
	root := d.Root()
	if k := d.KindAt(root); k != canon.Object {
		end, err := d.Skip(root, 0)
		if err == nil {
			err = d.End(end)
		}
		if err != nil {
			return f, jsonError(err)
		}
		return f, &ReceiptError{Msg: fmt.Sprintf("receipt is a JSON %s, want an object", k)}
	}
	top, end, err := d.Object(root, 0)
	if err == nil {
		err = d.End(end)
	}
	if err != nil {
		return f, jsonError(err)
	}
	field := func(fs []canon.Field, key string) (canon.Field, bool) {
		i, ok := slices.BinarySearchFunc(fs, key, func(f canon.Field, k string) int { return strings.Compare(f.Key, k) })
		if !ok {
			return canon.Field{}, false
		}
		return fs[i], true
	}
	str := func(fs []canon.Field, key, where string, depth int) (string, *ReceiptError) {
		m, ok := field(fs, key)
		if !ok {
			return "", &ReceiptError{Where: where, Msg: fmt.Sprintf("missing field %q", key)}
		}
		if k := d.KindAt(m.At); k != canon.String {
			return "", &ReceiptError{Where: where, Msg: fmt.Sprintf("field %q is a %s, want a string", key, k)}
		}
		v, _, err := d.ParseAt(m.At, depth, 1)
		if err != nil {
			return "", jsonError(err)
		}
		s, _ := v.AsString()
		return s, nil
	}
	var outcome string
	dst := map[string]*string{
		RFieldID: &r.ID, RFieldSchema: &r.Schema, RFieldProducer: &r.Producer, RFieldTS: &r.TS,
		RFieldSession: &r.SessionID, RFieldModel: &r.Model, RFieldTask: &r.Task,
		RFieldOutcome: &outcome, RFieldSignature: &r.Signature,
	}
	for _, k := range receiptStringFields {
		s, rerr := str(top, k, k, 1)
		if rerr != nil {
			return f, rerr
		}
		*dst[k] = s
	}
	r.Outcome = Outcome(outcome)
	if r.Schema != ReceiptSchema {
		return f, &ReceiptError{Where: RFieldSchema, Msg: fmt.Sprintf("unsupported schema %q (this verifier knows %s)", r.Schema, ReceiptSchema)}
	}
	if r.ID == "" {
		return f, &ReceiptError{Where: RFieldID, Msg: "receipt_id is empty"}
	}
	if !isHexHash(r.Signature) {
		return f, &ReceiptError{Where: RFieldSignature, Msg: fmt.Sprintf("signature %q is not 64 lowercase hex digits", r.Signature)}
	}
	prov, ok := field(top, RFieldProvenance)
	if !ok {
		return f, &ReceiptError{Where: RFieldProvenance, Msg: `missing field "provenance"`}
	}
	if k := d.KindAt(prov.At); k != canon.Object {
		return f, &ReceiptError{Where: RFieldProvenance, Msg: fmt.Sprintf("provenance is a %s, want an object", k)}
	}
	if r.Provenance, _, err = d.ParseAt(prov.At, 1, maxProvenanceValues); err != nil {
		return f, jsonError(err)
	}
	chainAt, ok := field(top, RFieldChain)
	if !ok {
		return f, &ReceiptError{Where: RFieldChain, Msg: `missing field "chain"`}
	}
	if k := d.KindAt(chainAt.At); k != canon.Object {
		return f, &ReceiptError{Where: RFieldChain, Msg: fmt.Sprintf("chain is a %s, want an object", k)}
	}
	chain, _, err := d.Object(chainAt.At, 1)
	if err != nil {
		return f, jsonError(err)
	}
	if gm, ok := field(chain, RFieldGenesis); ok && d.KindAt(gm.At) != canon.String {
		return f, &ReceiptError{Where: "chain.genesis", Msg: fmt.Sprintf("genesis is a %s, want a string", d.KindAt(gm.At))}
	}
	genesis, rerr := str(chain, RFieldGenesis, "chain.genesis", 2)
	if rerr != nil {
		return f, rerr
	}
	if genesis == "" {
		return f, &ReceiptError{Where: "chain.genesis", Msg: "genesis is empty"}
	}
	r.Genesis = genesis
	entriesAt, ok := field(chain, RFieldEntries)
	if !ok {
		return f, &ReceiptError{Where: "chain.entries", Msg: `missing field "entries"`}
	}
	if k := d.KindAt(entriesAt.At); k != canon.Array {
		return f, &ReceiptError{Where: "chain.entries", Msg: fmt.Sprintf("entries is a %s, want an array", k)}
	}

	// The governance, first: the chain is judged under it as it streams.
	var govBody canon.Value
	if gm, ok := field(top, RFieldGovernance); ok {
		gv, _, err := d.ParseAt(gm.At, 1, maxGovernanceValues)
		if err != nil {
			return f, jsonError(err)
		}
		govBody = canon.Obj(canon.M(RFieldGovernance, gv))
		f.Governance, f.Governed, f.GovernanceErr = ParseGovernance(govBody)
		if f.GovernanceErr != nil {
			f.Governed = false
		}
	}
	g := Governance{}
	if f.Governed {
		g = f.Governance
	}
	// The live agent's signed record, held to the chain's agent_session
	// entry once the chain has been judged.
	var agentBody canon.Value = canon.Obj()
	if am, ok := field(top, RFieldAgent); ok {
		av, _, err := d.ParseAt(am.At, 1, maxGovernanceValues)
		if err != nil {
			return f, jsonError(err)
		}
		agentBody = canon.Obj(canon.M(RFieldAgent, av))
	}
	judge := NewAssessor(g)

	// One pass: the content hash over C(body without "signature"), each
	// entry checked, hashed and judged where it lies as the hash reaches it.
	cr := c.cr
	cr.reset(r.Genesis)
	h, w := c.h, c.w
	h.Reset()
	w.Reset(h)
	writeKey := func(i int, k string) {
		if i > 0 {
			w.WriteString(", ")
		}
		c.key = canon.AppendString(c.key[:0], k)
		w.Write(c.key)
		w.WriteString(": ")
	}
	entries := func() error {
		w.WriteByte('[')
		_, err := d.Array(entriesAt.At, 2, func(i, off int) (int, error) {
			full, end, err := cr.next(d, off, 3)
			if err != nil {
				return 0, err
			}
			if i > 0 {
				w.WriteString(", ")
			}
			w.Write(full)
			var e canon.Value
			if keep {
				e, err = d.ParseSpan(off, end, 3, MaxEntryValues)
			} else {
				// Judged, then dropped: the Assessor keeps no container of it.
				e, err = d.ParseSpanTransient(off, end, 3, MaxEntryValues)
			}
			if err != nil {
				return 0, err // the transcoder read it: cannot happen
			}
			judge.Add(e)
			if outcomes {
				var sum [sha256.Size]byte // zero when not 64 hex digits: matches no file
				hex.Decode(sum[:], []byte(EntryString(e, FieldOutcomeSHA256)))
				f.OutcomeHashes = append(f.OutcomeHashes, sum)
			}
			if keep {
				r.Entries = append(r.Entries, e)
			}
			return end, nil
		})
		w.WriteByte(']')
		return err
	}
	pass := func() error {
		w.WriteByte('{')
		n := 0
		for _, m := range top {
			if m.Key == RFieldSignature {
				continue
			}
			writeKey(n, m.Key)
			n++
			if m.Key != RFieldChain {
				if err := writeMember(d, w, m, 1); err != nil {
					return err
				}
				continue
			}
			w.WriteByte('{')
			for i, c := range chain {
				writeKey(i, c.Key)
				if c.Key == RFieldEntries {
					if err := entries(); err != nil {
						return err
					}
				} else if err := writeMember(d, w, c, 2); err != nil {
					return err
				}
			}
			w.WriteByte('}')
		}
		w.WriteByte('}')
		return w.Flush()
	}
	err = pass()
	r.Chain = cr.rep
	f.Assessment = judge.Result()
	if err != nil {
		var b *Break
		if errors.As(err, &b) {
			r.Chain.Break = b
			return f, &ReceiptError{Where: fmt.Sprintf("chain.entries[%d]", b.Index), Msg: fmt.Sprintf("%s: %s", b.Kind, b.Detail), Break: b}
		}
		return f, jsonError(err)
	}
	if f.Governed {
		f.Diffs = CompareGovernance(govBody, f.Assessment)
		f.Diffs = append(f.Diffs, CheckAgentRecord(agentBody, f.Assessment.AgentSessions, g)...)
		if a, present, aerr := ParseAgentRecord(agentBody); present && aerr == nil {
			f.Agent = &a
		}
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != r.Signature {
		return f, &ReceiptError{Where: RFieldSignature, Msg: fmt.Sprintf("content hash does not match: the receipt's \"signature\" is %s, its content hashes to %s (a field was changed after the hash was taken)", r.Signature, got)}
	}
	if keep {
		if r.Body, err = canon.Parse(data, ReceiptLimits); err != nil {
			return f, jsonError(err)
		}
	}
	return f, nil
}

// writeMember writes C(v) of a member's value, which must end where
// Doc.Object found it ending.
func writeMember(d *canon.Doc, w *bufio.Writer, m canon.Field, depth int) error {
	end, err := d.WriteCanonical(w, m.At, depth)
	if err == nil && end != m.End {
		err = d.Errorf(end, "the value of %q does not end where its structure does", m.Key)
	}
	return err
}

// jsonError says where and how a receipt is not valid JSON.
func jsonError(err error) *ReceiptError {
	var pe *canon.Error
	if errors.As(err, &pe) {
		where := fmt.Sprintf("line %d, column %d (byte %d)", pe.Line, pe.Col, pe.Offset)
		msg := "not valid JSON: " + pe.Msg
		if strings.HasPrefix(pe.Msg, "unexpected data after the JSON value") && pe.Line > 1 {
			msg += " (a receipt is one JSON object; this looks like a JSONL ledger)"
		}
		return &ReceiptError{Where: where, Msg: msg, Err: err}
	}
	return &ReceiptError{Msg: err.Error(), Err: err}
}

// Persist writes a receipt under root as <root>/<producer>/<receipt_id>.json
// and returns its path. In order, it:
//
//  1. recomputes the chain and the signature, refusing a receipt that does
//     not verify;
//  2. writes the file atomically: a temporary file in the same directory,
//     fsync, rename (never over an existing receipt), fsync of the directory;
//  3. appends a line to <root>/<producer>/index.jsonl (fsync): receipt_id,
//     ts, model, task (its first IndexTaskChars characters) and outcome, as
//     the reference writes them, then file and signature;
//  4. runs the real verifier, VerifyReceiptFile, on what is now on disk and
//     fails if it does not pass;
//  5. only then points <root>/<producer>/LATEST at it (atomically).
//
// A receipt that fails step 4 stays on disk and in the index, where any
// verifier will flag it; LATEST never names it.
func Persist(root string, r *Receipt) (string, error) {
	if r == nil {
		return "", errors.New("persist: no receipt")
	}
	if b := VerifyEntries(r.Entries, r.Genesis, Anchors{}).Break; b != nil {
		return "", fmt.Errorf("persist: refusing a chain that does not verify: %w", b)
	}
	if got := signature(r.Body); got != r.Signature {
		return "", fmt.Errorf("persist: refusing a receipt whose signature does not match its body")
	}
	if !safeName.MatchString(r.Producer) || !safeName.MatchString(r.ID) {
		return "", fmt.Errorf("persist: producer %q or receipt id %q is not safe as a file name", r.Producer, r.ID)
	}
	dir := filepath.Join(root, r.Producer)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("persist: %w", err)
	}
	final := filepath.Join(dir, r.ID+".json")
	data := append(canon.AppendIndent(nil, r.Body, "  "), '\n')
	if err := writeAtomic(dir, final, data, false); err != nil {
		return "", fmt.Errorf("persist: %w", err)
	}
	// The reference's index line (receipt_id, ts, model, task cut to
	// IndexTaskChars, outcome), so that its readers find what they
	// expect, and this implementation's file and signature.
	idx := canon.Obj(
		canon.M(RFieldID, canon.Str(r.ID)),
		canon.M(RFieldTS, canon.Str(r.TS)),
		canon.M(RFieldModel, canon.Str(r.Model)),
		canon.M(RFieldTask, canon.Str(IndexTask(r.Task))),
		canon.M(RFieldOutcome, canon.Str(string(r.Outcome))),
		canon.M("file", canon.Str(r.ID+".json")),
		canon.M(RFieldSignature, canon.Str(r.Signature)),
	)
	if err := appendLine(filepath.Join(dir, IndexFile), append(canon.AppendOrdered(nil, idx), '\n')); err != nil {
		return "", fmt.Errorf("persist: index: %w", err)
	}
	if testHookAfterWrite != nil {
		testHookAfterWrite(final)
	}
	if _, err := VerifyReceiptFile(final); err != nil {
		return "", fmt.Errorf("persist: the receipt written to %s does not verify: %w", final, err)
	}
	if err := writeAtomic(dir, filepath.Join(dir, LatestFile), []byte(r.ID+"\n"), true); err != nil {
		return "", fmt.Errorf("persist: LATEST: %w", err)
	}
	return final, nil
}

// testHookAfterWrite lets a test damage what Persist wrote before the
// round-trip verification reads it back.
var testHookAfterWrite func(path string)

// The store's bookkeeping files, beside the receipts of one producer.
const (
	IndexFile  = "index.jsonl"
	LatestFile = "LATEST"
)

// writeAtomic writes data to final through a synced temporary file and a
// rename, then syncs the directory. Unless replace is set, an existing final
// file is an error: testimony is never overwritten.
func writeAtomic(dir, final string, data []byte, replace bool) error {
	if !replace {
		if _, err := os.Lstat(final); err == nil {
			return fmt.Errorf("%s already exists; refusing to overwrite a receipt", final)
		}
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(final)+".tmp-*")
	if err != nil {
		return err
	}
	name := tmp.Name()
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(name)
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(name, final); err != nil {
		return err
	}
	ok = true
	return syncDir(dir)
}

// appendLine appends one line durably.
func appendLine(path string, line []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(line); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return syncDir(filepath.Dir(path))
}

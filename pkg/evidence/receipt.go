package evidence

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/deponent-dev/deponent-action/pkg/canon"
)

// ReceiptSchema is the one schema this kernel writes and verifies. A
// breaking change to the body, the signature or the chain hash bumps it.
const ReceiptSchema = "deponent-receipt/v1"

// TaskMaxChars is how many characters of the task a receipt keeps.
const TaskMaxChars = 160

// MaxReceiptBytes caps a receipt file. A bigger one is refused unread.
const MaxReceiptBytes = 64 << 20

// ReceiptLimits bound the JSON of a receipt: the size cap and 64 levels of
// nesting (a receipt needs 5, plus whatever provenance nests).
var ReceiptLimits = canon.Limits{MaxBytes: MaxReceiptBytes, MaxDepth: 64}

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

// VerifyReceipt recomputes a receipt: it parses the bytes strictly, checks
// every field's presence and type, re-links the chain from its genesis and
// recomputes every entry hash, then recomputes the signature over the
// canonical body. Anything missing, unparsable, duplicated or of the wrong
// type fails. Nothing stored is trusted: not a flag, not a count, not the
// signature itself.
func VerifyReceipt(data []byte) (*Receipt, error) {
	if len(data) == 0 {
		return nil, &ReceiptError{Msg: "file is empty: not a receipt"}
	}
	v, err := canon.Parse(data, ReceiptLimits)
	if err != nil {
		var pe *canon.Error
		if errors.As(err, &pe) {
			where := fmt.Sprintf("line %d, column %d (byte %d)", pe.Line, pe.Col, pe.Offset)
			msg := "not valid JSON: " + pe.Msg
			if strings.HasPrefix(pe.Msg, "unexpected data after the JSON value") && pe.Line > 1 {
				msg += " (a receipt is one JSON object; this looks like a JSONL ledger)"
			}
			return nil, &ReceiptError{Where: where, Msg: msg, Err: err}
		}
		return nil, &ReceiptError{Msg: err.Error(), Err: err}
	}
	if v.Kind() != canon.Object {
		return nil, &ReceiptError{Msg: fmt.Sprintf("receipt is a JSON %s, want an object", v.Kind())}
	}
	r := &Receipt{Body: v}
	var outcome string
	str := map[string]*string{
		RFieldID: &r.ID, RFieldSchema: &r.Schema, RFieldProducer: &r.Producer, RFieldTS: &r.TS,
		RFieldSession: &r.SessionID, RFieldModel: &r.Model, RFieldTask: &r.Task,
		RFieldOutcome: &outcome, RFieldSignature: &r.Signature,
	}
	for _, k := range receiptStringFields {
		m, ok := v.Get(k)
		if !ok {
			return nil, &ReceiptError{Where: k, Msg: fmt.Sprintf("missing field %q", k)}
		}
		s, ok := m.AsString()
		if !ok {
			return nil, &ReceiptError{Where: k, Msg: fmt.Sprintf("field %q is a %s, want a string", k, m.Kind())}
		}
		*str[k] = s
	}
	r.Outcome = Outcome(outcome)
	if r.Schema != ReceiptSchema {
		return nil, &ReceiptError{Where: RFieldSchema, Msg: fmt.Sprintf("unsupported schema %q (this verifier knows %s)", r.Schema, ReceiptSchema)}
	}
	if r.ID == "" {
		return nil, &ReceiptError{Where: RFieldID, Msg: "receipt_id is empty"}
	}
	if !isHexHash(r.Signature) {
		return nil, &ReceiptError{Where: RFieldSignature, Msg: fmt.Sprintf("signature %q is not 64 lowercase hex digits", r.Signature)}
	}
	prov, ok := v.Get(RFieldProvenance)
	if !ok {
		return nil, &ReceiptError{Where: RFieldProvenance, Msg: `missing field "provenance"`}
	}
	if prov.Kind() != canon.Object {
		return nil, &ReceiptError{Where: RFieldProvenance, Msg: fmt.Sprintf("provenance is a %s, want an object", prov.Kind())}
	}
	r.Provenance = prov
	if err := r.readChain(v); err != nil {
		return nil, err
	}
	r.Chain = VerifyEntries(r.Entries, r.Genesis, Anchors{})
	if b := r.Chain.Break; b != nil {
		return nil, &ReceiptError{Where: fmt.Sprintf("chain.entries[%d]", b.Index), Msg: fmt.Sprintf("%s: %s", b.Kind, b.Detail), Break: b}
	}
	if got := signature(v); got != r.Signature {
		return nil, &ReceiptError{Where: RFieldSignature, Msg: fmt.Sprintf("signature %s does not match the recomputed %s: the receipt was changed after it was signed", r.Signature, got)}
	}
	return r, nil
}

func (r *Receipt) readChain(v canon.Value) error {
	chain, ok := v.Get(RFieldChain)
	if !ok {
		return &ReceiptError{Where: RFieldChain, Msg: `missing field "chain"`}
	}
	if chain.Kind() != canon.Object {
		return &ReceiptError{Where: RFieldChain, Msg: fmt.Sprintf("chain is a %s, want an object", chain.Kind())}
	}
	g, ok := chain.Get(RFieldGenesis)
	if !ok {
		return &ReceiptError{Where: "chain.genesis", Msg: `missing field "genesis"`}
	}
	if r.Genesis, ok = g.AsString(); !ok {
		return &ReceiptError{Where: "chain.genesis", Msg: fmt.Sprintf("genesis is a %s, want a string", g.Kind())}
	}
	if r.Genesis == "" {
		return &ReceiptError{Where: "chain.genesis", Msg: "genesis is empty"}
	}
	es, ok := chain.Get(RFieldEntries)
	if !ok {
		return &ReceiptError{Where: "chain.entries", Msg: `missing field "entries"`}
	}
	if es.Kind() != canon.Array {
		return &ReceiptError{Where: "chain.entries", Msg: fmt.Sprintf("entries is a %s, want an array", es.Kind())}
	}
	r.Entries = es.Elems()
	return nil
}

// Persist writes a receipt under root as <root>/<producer>/<receipt_id>.json
// and returns its path. In order, it:
//
//  1. recomputes the chain and the signature, refusing a receipt that does
//     not verify;
//  2. writes the file atomically: a temporary file in the same directory,
//     fsync, rename (never over an existing receipt), fsync of the directory;
//  3. appends a line to <root>/<producer>/index.jsonl (fsync);
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
	idx := canon.Obj(
		canon.M(RFieldID, canon.Str(r.ID)),
		canon.M("file", canon.Str(r.ID+".json")),
		canon.M(RFieldTS, canon.Str(r.TS)),
		canon.M(RFieldOutcome, canon.Str(string(r.Outcome))),
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

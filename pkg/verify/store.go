package verify

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"

	"github.com/deponent-dev/deponent-action/pkg/canon"
	"github.com/deponent-dev/deponent-action/pkg/evidence"
)

// Caps of a store's bookkeeping files.
const (
	MaxIndexBytes  = 64 << 20 // index.jsonl
	MaxIndexLine   = 64 << 10 // one line of it
	maxLatestBytes = 512
)

// receiptIDPattern is what a LATEST pointer may hold: a receipt id as the
// kernel writes file names (a little longer allowed; the id must then also
// be indexed and present).
var receiptIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,254}$`)

// An index.jsonl line is an object of strings: receipt_id, ts and outcome
// always (the Python reference writes them, and model and task); file and
// signature as this implementation writes them too. Each field present is
// checked against the receipt; any other field is refused.
const (
	idxFile      = "file"
	idxSignature = "signature"
)

var (
	indexRequired = []string{evidence.RFieldID, evidence.RFieldTS, evidence.RFieldOutcome}
	indexOptional = []string{evidence.RFieldModel, evidence.RFieldTask, idxFile, idxSignature}
)

// indexLimits bound one index line's JSON.
var indexLimits = canon.Limits{MaxBytes: MaxIndexLine, MaxDepth: 2, MaxValues: 16, MaxMembers: 16}

// checkStore checks one directory that holds a store's bookkeeping
// (index.jsonl or LATEST) against the receipts beside it; see the package
// doc for the rules. A directory without either is a plain directory of
// receipts and has no store rules.
func (r *runner) checkStore(c *container, g *group) {
	if g.index == nil && g.latest == nil {
		return
	}
	names := make([]string, 0, len(g.receipts))
	for n := range g.receipts {
		names = append(names, n)
	}
	slices.Sort(names)
	dirName := c.dirName(g.dir)
	for _, name := range names {
		it := &r.items[g.receipts[name]]
		if !it.Verified {
			continue // it failed on its own already
		}
		if name != it.ReceiptID+".json" {
			it.fail("file name", "a store names each receipt <receipt_id>.json, and this file holds receipt %q", it.ReceiptID)
		}
		switch {
		case dirName == "":
			it.fail("directory", "a store keeps receipts in a directory named after their producer (%q), and this one sits at the archive's root", it.Producer)
		case dirName != it.Producer:
			it.fail("directory", "a receipt of producer %q sits in directory %q", it.Producer, dirName)
		}
	}
	listed := &indexList{}
	if g.index != nil {
		listed = r.checkIndex(g)
		for _, name := range names {
			it := &r.items[g.receipts[name]]
			if it.Verified && listed.files[it.ReceiptID] != name {
				it.fail("store", "not listed in the index.jsonl beside it")
			}
		}
	}
	r.checkLatest(g, listed)
}

// checkIndex reads index.jsonl line by line (bounded) and checks each line
// against the receipt it names. It returns the ids it lists.
func (r *runner) checkIndex(g *group) *indexList {
	it := &r.items[g.index.slot]
	defer r.recoverInto(g.index.slot)
	listed := &indexList{}
	rc, _, err := g.index.open()
	if err != nil {
		it.fail("", "cannot read: %v", err)
		return listed
	}
	defer rc.Close()
	br := bufio.NewReaderSize(io.LimitReader(rc, MaxIndexBytes+1), 64<<10)
	var line []byte
	var read int64
	for ln := 1; ; ln++ {
		where := fmt.Sprintf("line %d", ln)
		line, err = readLine(br, line[:0], MaxIndexLine)
		eof := errors.Is(err, io.EOF)
		if !eof || len(line) > 0 {
			read += int64(len(line)) + 1
		}
		switch {
		case eof && len(line) == 0:
		case read > MaxIndexBytes:
			it.fail("", "index.jsonl is over the %d-byte cap", MaxIndexBytes)
		case errors.Is(err, errLineTooLong):
			it.fail(where, "longer than the %d-byte cap", MaxIndexLine)
		case eof:
			it.fail(where, "torn last line: no newline at the end (an append was interrupted)")
		case err != nil:
			it.fail("", "cannot read: %v", err)
		default:
			r.indexLine(it, g, where, line, listed)
			continue
		}
		break
	}
	it.Receipts = len(listed.ids)
	return listed
}

func (r *runner) indexLine(it *Item, g *group, where string, line []byte, listed *indexList) {
	v, err := canon.Parse(line, indexLimits)
	if err != nil {
		it.fail(where, "not JSON: %v", err)
		return
	}
	if v.Kind() != canon.Object {
		it.fail(where, "a JSON %s, want an object", v.Kind())
		return
	}
	f := map[string]string{}
	for _, m := range v.Members() {
		if !slices.Contains(indexRequired, m.Key) && !slices.Contains(indexOptional, m.Key) {
			it.fail(where, "unknown field %q (an index line holds %s)", m.Key, strings.Join(append(slices.Clone(indexRequired), indexOptional...), ", "))
			return
		}
		s, ok := m.Value.AsString()
		if !ok {
			it.fail(where, "field %q is a %s, want a string", m.Key, m.Value.Kind())
			return
		}
		f[m.Key] = s
	}
	for _, k := range indexRequired {
		if _, ok := f[k]; !ok {
			it.fail(where, "missing field %q", k)
			return
		}
	}
	id := f[evidence.RFieldID]
	file := id + ".json"
	if listed.has(id) {
		it.fail(where, "lists receipt %s a second time", id)
		return
	}
	if name, ok := f[idxFile]; ok && name != file {
		it.fail(where, "file %q is not <receipt_id>.json", name)
		return
	}
	listed.add(id, file)
	slot, ok := g.receipts[file]
	switch {
	case g.bad[file]:
		it.fail(where, "lists %s, which was refused (see its own line)", file)
		return
	case !ok:
		it.fail(where, "lists %s, which is not beside it: an indexed receipt is missing", file)
		return
	}
	rc := &r.items[slot]
	if !rc.Verified {
		it.fail(where, "lists %s, which does not verify", file)
		return
	}
	if rc.ReceiptID != id {
		it.fail(where, "lists receipt %s, but %s holds receipt %s", id, file, rc.ReceiptID)
		return
	}
	for _, c := range []struct {
		key, want string
	}{
		{evidence.RFieldOutcome, string(rc.Outcome)},
		{evidence.RFieldTS, rc.TS},
		{evidence.RFieldModel, rc.model},
		{evidence.RFieldTask, evidence.IndexTask(rc.task)},
		{idxSignature, rc.Signature},
	} {
		if got, ok := f[c.key]; ok && got != c.want {
			it.fail(where, "%s %q, but the receipt %s says %q", c.key, got, file, c.want)
		}
	}
}

// indexList is what an index.jsonl lists, in order.
type indexList struct {
	ids   []string
	files map[string]string // receipt id → file
}

func (l *indexList) has(id string) bool { _, ok := l.files[id]; return ok }

func (l *indexList) add(id, file string) {
	if l.files == nil {
		l.files = map[string]string{}
	}
	l.ids = append(l.ids, id)
	l.files[id] = file
}

// checkLatest checks the LATEST pointer: one receipt id, with or without
// a newline after it (this implementation writes one, the reference
// none), naming the newest receipt the index lists (its last line), which
// is beside it and verifies. An index that lists receipts with no LATEST
// beside it fails: evidence.Persist moves LATEST only after a receipt
// passed its write-time verification, so a missing LATEST means the last
// persist did not complete.
func (r *runner) checkLatest(g *group, listed *indexList) {
	if g.latest == nil {
		if g.index != nil && len(listed.ids) > 0 {
			r.items[g.index.slot].fail(evidence.LatestFile, "missing: the index lists %d receipts but no LATEST names one (a persist that did not pass its write-time verification never moves LATEST)", len(listed.ids))
		}
		return
	}
	defer r.recoverInto(g.latest.slot)
	it := &r.items[g.latest.slot]
	rc, _, err := g.latest.open()
	if err != nil {
		it.fail("", "cannot read: %v", err)
		return
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, maxLatestBytes+1))
	if err != nil {
		it.fail("", "cannot read: %v", err)
		return
	}
	if len(data) > maxLatestBytes {
		it.fail("", "over %d bytes: not a LATEST pointer", maxLatestBytes)
		return
	}
	id := string(bytes.TrimSuffix(data, []byte{'\n'}))
	if !receiptIDPattern.MatchString(id) {
		it.fail("", "want one receipt id (and at most a newline), found %q", data)
		return
	}
	it.ReceiptID = id
	if g.index == nil {
		it.fail("", "no index.jsonl beside it: a store indexes a receipt before LATEST may name it")
		return
	}
	if !listed.has(id) {
		it.fail("", "names %s, which index.jsonl does not list", id)
		return
	}
	if last := listed.ids[len(listed.ids)-1]; last != id {
		it.fail("", "names %s, but the newest receipt index.jsonl lists (its last line) is %s", id, last)
		return
	}
	slot, ok := g.receipts[id+".json"]
	switch {
	case !ok:
		it.fail("", "names %s, but %s.json is not beside it", id, id)
	case !r.items[slot].Verified:
		it.fail("", "names %s, which does not verify", id)
	}
}

// LedgerPrefix starts the name of the ledger the action writes beside its
// receipts: <producer>/ledger-<session>.jsonl holds the same chain as the
// receipt <ts>_<session>.json.
const LedgerPrefix = "ledger-"

// checkLedgers pairs each ledger-<session>.jsonl with the receipts of that
// session beside it. The receipt, content-hashed, anchors the ledger: the
// same number of entries and the same head, else the ledger was cut short
// or changed after the receipt was written. In a store, a ledger whose
// session has no receipt fails: the run that wrote it did not finish.
func (r *runner) checkLedgers(g *group) {
	inStore := g.index != nil || g.latest != nil
	names := make([]string, 0, len(g.ledgers))
	for n := range g.ledgers {
		names = append(names, n)
	}
	slices.Sort(names)
	receipts := make([]string, 0, len(g.receipts))
	for n := range g.receipts {
		receipts = append(receipts, n)
	}
	slices.Sort(receipts)
	for _, name := range names {
		slot := g.ledgers[name]
		it := &r.items[slot]
		session, ok := strings.CutPrefix(name[:len(name)-len(".jsonl")], LedgerPrefix)
		if !ok || session == "" {
			continue // a bare ledger of its own
		}
		paired, unverified := 0, ""
		for _, rn := range receipts {
			rc := &r.items[g.receipts[rn]]
			switch {
			case rc.Verified && rc.SessionID == session:
				paired++
				if !it.Verified {
					continue
				}
				if rc.Entries != it.Entries || rc.Head != it.Head {
					it.fail("", "the receipt %s beside it records %d entries ending %s, this ledger %d ending %s: one of them was cut short or changed after the receipt was written",
						rc.ReceiptID, rc.Entries, rc.Head, it.Entries, it.Head)
				} else if it.AnchoredBy == "" {
					it.AnchoredBy = rc.ReceiptID
				}
			case !rc.Verified && strings.HasSuffix(strings.TrimSuffix(rn, ".json"), "_"+session):
				unverified = rn
			}
		}
		switch {
		case paired > 0:
		case unverified != "":
			it.note("the receipt of its session, %s, does not verify: nothing anchors this ledger", unverified)
		case inStore:
			it.fail("", "no receipt of session %q beside it: the run that wrote this ledger did not finish", session)
		}
	}
}

package evidence

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/deponent-dev/deponent-action/pkg/canon"
)

// Genesis is the prev_hash of a chain's first entry, as the reference writes
// it.
const Genesis = "GENESIS"

// ParamMaxChars is how many characters (code points, never bytes) of each
// stringified parameter value an entry keeps, as the reference does.
const ParamMaxChars = 200

// MaxLedgerLine caps one ledger line (one entry) in bytes. A longer line is
// refused as a malformed entry instead of being read into memory.
const MaxLedgerLine = 1 << 20

// MaxEntryValues caps the JSON values of one entry (an entry the action
// writes holds about 20; its params are flat strings). Memory follows the
// values a reader holds, not the bytes (see package canon): 2^14 values is
// at most about a megabyte as a tree.
const MaxEntryValues = 1 << 14

// EntryLimits bound the JSON of one ledger line: the line cap, 64 levels of
// nesting (an entry needs 2), MaxEntryValues values and as many members.
var EntryLimits = canon.Limits{MaxBytes: MaxLedgerLine, MaxDepth: 64, MaxValues: MaxEntryValues, MaxMembers: MaxEntryValues}

// MaxReceiptEntryBytes caps the text of one entry inside a receipt: a
// ledger line's cap, with room for a receipt's indentation.
const MaxReceiptEntryBytes = 4 * MaxLedgerLine

// ReceiptEntryLimits bound one entry read inside a receipt, as EntryLimits
// bound a ledger line.
var ReceiptEntryLimits = canon.Limits{MaxBytes: MaxReceiptEntryBytes, MaxDepth: 64, MaxValues: MaxEntryValues, MaxMembers: MaxEntryValues}

// The fields every entry holds, in the order the reference writes them.
// prev_hash and entry_hash are not part of the hashed payload.
const (
	FieldTS            = "ts"
	FieldAgent         = "agent"
	FieldTool          = "tool"
	FieldParams        = "params"
	FieldVerdict       = "verdict"
	FieldBlastClass    = "blast_class"
	FieldReason        = "reason"
	FieldOutcomeSHA256 = "outcome_sha256"
	FieldPrevHash      = "prev_hash"
	FieldEntryHash     = "entry_hash"
)

// Extra fields this kernel adds to entries it writes. They are hashed like
// the rest; the reference's verifier accepts them (see the interop vector
// ledgers/valid-numbers.jsonl).
const (
	FieldExitCode   = "exit_code"   // int: the command's exit code (-1 when killed or not run)
	FieldDurationMS = "duration_ms" // int: wall time of the execution in milliseconds
	FieldJail       = "jail"        // string: backend that confined the execution ("bwrap", "seatbelt", "none")
	FieldKilled     = "killed"      // string: why the jail stopped it ("memory>2048MB", "wallclock>90s", "no-jail", …)
	FieldUnjailed   = "unjailed"    // bool: true when the action executed without a jail (explicit opt-in)
	FieldDryRun     = "dry_run"     // bool: true when the action was gated and recorded, not executed
	FieldError      = "error"       // string: why an allowed action failed to execute (fail-soft)
	FieldCanary     = "canary"      // string: the canary a harness probe stands for
	FieldTampered   = "tampered"    // array of strings: protected paths the action created, changed or removed
	// FieldMemoryGuard names how the jail capped memory ("cgroup" or
	// "rss-poll").
	FieldMemoryGuard = "memory_guard"
	// FieldTaskGuard names how the jail capped tasks ("cgroup", "rlimit"
	// or "poll").
	FieldTaskGuard = "task_guard"
	// FieldOutputBytes is the size of a command's full output, whose
	// sha256 is outcome_sha256.
	FieldOutputBytes = "output_bytes"
	// FieldToolCalls is how many tool calls a live agent's session made
	// (on the harness's agent_session entry).
	FieldToolCalls = "tool_calls"
)

var reservedFields = []string{FieldTS, FieldAgent, FieldTool, FieldParams, FieldVerdict, FieldBlastClass,
	FieldReason, FieldOutcomeSHA256, FieldPrevHash, FieldEntryHash}

// Record is what a caller appends: the decision and the hash of the outcome.
type Record struct {
	Agent      string
	Tool       string
	Params     map[string]any // values are stringified and cut to ParamMaxChars characters
	Verdict    Verdict        // VerdictAllow or VerdictBlock
	BlastClass Class
	Reason     string
	// OutcomeSHA256 is the hex sha256 of what the action produced ("" when
	// nothing was produced). The outcome itself is never stored: the ledger
	// testifies that an output occurred without becoming a copy of it.
	OutcomeSHA256 string
	// Extra fields, hashed like the rest (e.g. FieldExitCode). They may not
	// reuse a reference field's name.
	Extra []canon.Member
}

// HashOutcome returns the hex sha256 of an outcome.
func HashOutcome(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// LedgerOptions configure OpenLedger.
type LedgerOptions struct {
	// Genesis anchors the chain; "" means Genesis.
	Genesis string
	// Path is the JSONL file the chain is appended to; "" keeps it in memory
	// only. An existing file is verified first and extended only if intact.
	Path string
	// NoSync skips the fsync after each append. Only benchmarks and tests
	// should set it: without it an append is durable when it returns.
	NoSync bool
	// Discard does not keep entries in memory (Entries returns nil). For
	// very long file-backed chains.
	Discard bool
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Ledger is an append-only, genesis-anchored sha256 hash chain of decisions.
// It is safe for concurrent use: appends are serialised under one lock, and
// the chain order is the order in which appends took it.
type Ledger struct {
	mu      sync.Mutex
	genesis string
	head    string
	n       int64
	retain  bool
	entries []canon.Value
	file    *os.File
	unlock  func()
	sync    bool
	failed  error // sticky: after a failed write nothing more is appended
	now     func() time.Time
	h       hash.Hash
	buf     []byte
	line    []byte
}

// OpenLedger starts a chain, or continues the one in opt.Path after checking
// that it verifies: a broken ledger is never extended.
func OpenLedger(opt LedgerOptions) (*Ledger, error) {
	l := &Ledger{
		genesis: opt.Genesis,
		retain:  !opt.Discard,
		sync:    !opt.NoSync,
		now:     opt.Now,
		h:       sha256.New(),
	}
	if l.genesis == "" {
		l.genesis = Genesis
	}
	l.head = l.genesis
	if l.now == nil {
		l.now = time.Now
	}
	if opt.Path == "" {
		return l, nil
	}
	if err := l.openFile(opt.Path); err != nil {
		return nil, err
	}
	return l, nil
}

func (l *Ledger) openFile(path string) error {
	created := false
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND, 0)
	if errors.Is(err, os.ErrNotExist) {
		f, err = os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE|os.O_EXCL, 0o644)
		created = true
	}
	if err != nil {
		return fmt.Errorf("ledger %s: %w", path, err)
	}
	unlock, err := lockFile(f)
	if err != nil {
		f.Close()
		return fmt.Errorf("ledger %s: another process is writing it (%v)", path, err)
	}
	l.file, l.unlock = f, unlock
	if created {
		if err := syncDir(filepath.Dir(path)); err != nil {
			l.Close()
			return fmt.Errorf("ledger %s: %w", path, err)
		}
		return nil
	}
	// Continue an existing chain only if it verifies, from our own handle.
	if _, err := f.Seek(0, 0); err != nil {
		l.Close()
		return fmt.Errorf("ledger %s: %w", path, err)
	}
	var keep func(canon.Value)
	if l.retain {
		keep = func(v canon.Value) { l.entries = append(l.entries, v) }
	}
	rep, err := verifyStream(f, VerifyOptions{Genesis: l.genesis}, keep)
	if err == nil && rep.Break != nil {
		err = rep.Break
	}
	if err != nil {
		l.Close()
		return fmt.Errorf("ledger %s does not verify; refusing to extend it: %w", path, err)
	}
	l.head, l.n = rep.Head, rep.Entries
	return nil
}

// Append records one decision at the end of the chain and returns the entry
// as written. With a file, the entry is on disk (fsync) when Append returns.
func (l *Ledger) Append(r Record) (canon.Value, error) {
	payload, err := r.payload()
	if err != nil {
		return canon.Value{}, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.failed != nil {
		return canon.Value{}, fmt.Errorf("ledger: refusing to append after an earlier write failed: %w", l.failed)
	}
	ts := l.now().UTC().Format("2006-01-02T15:04:05+00:00")
	members := append([]canon.Member{canon.M(FieldTS, canon.Str(ts))}, payload...)
	prev := l.head
	l.buf = canon.AppendCanonical(l.buf[:0], canon.Obj(members...))
	hash := chainHash(l.h, prev, l.buf)
	members = append(members, canon.M(FieldPrevHash, canon.Str(prev)), canon.M(FieldEntryHash, canon.Str(hash)))
	entry := canon.Obj(members...)
	if l.file != nil {
		// Each line is the canonical form of its entry: valid JSON that any
		// reader accepts, and that the verifier can hash in place.
		l.line = append(canon.AppendCanonical(l.line[:0], entry), '\n')
		if err := l.write(l.line); err != nil {
			l.failed = err
			return canon.Value{}, fmt.Errorf("ledger %s: %w", l.file.Name(), err)
		}
	}
	l.head = hash
	l.n++
	if l.retain {
		l.entries = append(l.entries, entry)
	}
	return entry, nil
}

func (l *Ledger) write(line []byte) error {
	if _, err := l.file.Write(line); err != nil {
		return err
	}
	if l.sync {
		return l.file.Sync()
	}
	return nil
}

// payload builds the hashed members after ts, in the reference's order.
func (r Record) payload() ([]canon.Member, error) {
	if r.Verdict != VerdictAllow && r.Verdict != VerdictBlock {
		return nil, fmt.Errorf("ledger: verdict %q is neither %s nor %s", r.Verdict, VerdictAllow, VerdictBlock)
	}
	if r.OutcomeSHA256 != "" && !isHexHash(r.OutcomeSHA256) {
		return nil, fmt.Errorf("ledger: outcome_sha256 %q is not 64 lowercase hex digits", r.OutcomeSHA256)
	}
	ms := []canon.Member{
		canon.M(FieldAgent, canon.Str(r.Agent)),
		canon.M(FieldTool, canon.Str(r.Tool)),
		canon.M(FieldParams, stringifyParams(r.Params)),
		canon.M(FieldVerdict, canon.Str(string(r.Verdict))),
		canon.M(FieldBlastClass, canon.Str(string(r.BlastClass))),
		canon.M(FieldReason, canon.Str(r.Reason)),
		canon.M(FieldOutcomeSHA256, canon.Str(r.OutcomeSHA256)),
	}
	for _, m := range r.Extra {
		if slices.Contains(reservedFields, m.Key) {
			return nil, fmt.Errorf("ledger: extra field %q would shadow a reference field", m.Key)
		}
		for _, o := range ms {
			if o.Key == m.Key {
				return nil, fmt.Errorf("ledger: extra field %q given twice", m.Key)
			}
		}
		ms = append(ms, m)
	}
	return ms, nil
}

// stringifyParams renders each parameter as a string cut to ParamMaxChars
// characters. Strings stay as they are; anything else is written as its
// canonical JSON text.
func stringifyParams(p map[string]any) canon.Value {
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	ms := make([]canon.Member, 0, len(keys))
	for _, k := range keys {
		ms = append(ms, canon.M(k, canon.Str(cutChars(stringify(p[k]), ParamMaxChars))))
	}
	return canon.Obj(ms...)
}

func stringify(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case canon.Value:
		if s, ok := x.AsString(); ok {
			return s
		}
		return x.String()
	case nil:
		return "null"
	case bool:
		return strconv.FormatBool(x)
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		if f, err := canon.Float(x); err == nil {
			return f.String()
		}
	}
	return fmt.Sprint(v)
}

// cutChars keeps the first n characters (code points) of s, as Python's
// s[:n] does.
func cutChars(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := 0
	for j := range s {
		if i == n {
			return s[:j]
		}
		i++
	}
	return s
}

// chainHash is hex(sha256(prev + "\n" + payload)).
func chainHash(h hash.Hash, prev string, payload []byte) string {
	var sum [sha256.Size]byte
	h.Reset()
	h.Write([]byte(prev))
	h.Write(newline)
	h.Write(payload)
	return hex.EncodeToString(h.Sum(sum[:0]))
}

var newline = []byte{'\n'}

// isHexHash reports whether s is 64 lowercase hex digits (a sha256).
func isHexHash[T string | []byte](s T) bool {
	if len(s) != 64 {
		return false
	}
	ok := true
	for i := 0; i < len(s); i++ {
		ok = ok && lowerHex[s[i]] // no early exit: the loop stays branch-free
	}
	return ok
}

var lowerHex = func() (t [256]bool) {
	for _, c := range "0123456789abcdef" {
		t[c] = true
	}
	return t
}()

// Err returns why the ledger refuses appends (an earlier write failed, or it
// was closed), or nil.
func (l *Ledger) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.failed
}

// Entries returns the chain's entries in order (nil with Discard).
func (l *Ledger) Entries() []canon.Value {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.entries)
}

// Head returns the last entry_hash (the genesis for an empty chain).
func (l *Ledger) Head() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.head
}

// Len returns the number of entries.
func (l *Ledger) Len() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n
}

// Genesis returns the chain's genesis.
func (l *Ledger) Genesis() string { return l.genesis }

// Verify recomputes the retained chain from genesis; it trusts nothing the
// ledger remembers about itself except the entries.
func (l *Ledger) Verify() ChainReport {
	l.mu.Lock()
	entries := slices.Clone(l.entries)
	l.mu.Unlock()
	return VerifyEntries(entries, l.genesis, Anchors{})
}

// Close releases the ledger file. Appends after Close fail.
func (l *Ledger) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.file == nil {
		return nil
	}
	if l.unlock != nil {
		l.unlock()
	}
	err := l.file.Close()
	l.failed = errors.New("ledger closed")
	l.file = nil
	return err
}

// syncDir makes a directory entry (a new or renamed file) durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return fsyncDir(d)
}

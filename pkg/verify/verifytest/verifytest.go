// Package verifytest builds the evidence the verifier's tests and
// benchmarks run on: governed receipts written by the kernel exactly as the
// action writes them (evidence.BuildReceipt with a governance object from
// evidence.Governance.Value(evidence.Assess(…)) and a provenance that binds them
// to a repository and commit), receipt stores (evidence.Persist), bare
// ledgers, and zip archives, hostile ones included.
package verifytest

import (
	"archive/zip"
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/deponent-dev/deponent-action/pkg/canon"
	"github.com/deponent-dev/deponent-action/pkg/evidence"
)

// Defaults of a Spec.
const (
	Repo     = "deponent-dev/deponent-action"
	Commit   = "0123456789abcdef0123456789abcdef01234567"
	Jail     = "bwrap"
	PolicySH = "5f70bf18a086007016e948b04aed3b82103a36bea41755b6cddfaf10ace3c6ef"
)

// Spec describes a receipt. The zero value is a governed GOVERNED_PASS run,
// jailed with bwrap, bound to Repo and Commit.
type Spec struct {
	Producer  string    // default "deponent"
	SessionID string    // default "s1"
	Now       time.Time // default 2026-01-02T03:04:05Z
	Jail      string    // default Jail; "-" records none anywhere
	Repo      string    // default Repo; "-" leaves it out
	Commit    string    // default Commit; "-" leaves it out
	// Records are the chain; nil means Good(jail).
	Records []evidence.Record
	// NoGovernance writes a receipt like the Python reference's.
	NoGovernance bool
	// Governance overrides the configuration the chain is judged under.
	Governance *evidence.Governance
	// Outcome overrides the stored outcome ("" = the recomputed one).
	Outcome evidence.Outcome
	// EditGovernance changes the governance object before signing: a
	// summary that lies, but is signed (the content hash covers a lie as
	// well as the truth).
	EditGovernance func(canon.Value) canon.Value
	// Extra provenance members.
	Provenance []canon.Member
}

func (s Spec) jail() string {
	switch s.Jail {
	case "":
		return Jail
	case "-":
		return ""
	}
	return s.Jail
}

// Canaries are the canary entries of a clean run, as evidence.Assess wants
// them: every gate canary blocked and, when a jail ran, every jail probe
// run and held (exit 0).
func Canaries(jail string) []evidence.Record {
	var rs []evidence.Record
	tools := map[string]string{evidence.CanaryWriteOutside: "write_file", evidence.CanaryUnknownTool: "delete_database"}
	for _, name := range evidence.GateCanaries {
		tool := tools[name]
		if tool == "" {
			tool = "run_cmd"
		}
		rs = append(rs, Step(evidence.AgentCanary, tool, evidence.VerdictBlock, canon.M(evidence.FieldCanary, canon.Str(name))))
	}
	if jail != "" {
		for _, name := range evidence.JailCanaries {
			rs = append(rs, Ran(evidence.AgentCanary, jail, 0, canon.M(evidence.FieldCanary, canon.Str(name))))
		}
	}
	return rs
}

// Good is a clean governed run: the canaries, then a write, a build step
// and the out-of-band verify command. Every executed command names jail.
// The build step is the second-last entry.
func Good(jail string) []evidence.Record {
	return append(Canaries(jail),
		Step("builder", "write_file", evidence.VerdictAllow),
		Ran("builder", jail, 0),
		Ran(evidence.AgentHarness, jail, 0),
	)
}

// GoodWith is Good with the agent's further actions recorded where a run
// records them: before the verify command, which the harness runs last.
func GoodWith(jail string, steps ...evidence.Record) []evidence.Record {
	good := Good(jail)
	n := len(good) - 1
	return slices.Concat(good[:n:n], steps, good[n:])
}

// Unverified is Good without the verify command, the chain of a run
// configured without one.
func Unverified(jail string) []evidence.Record {
	good := Good(jail)
	return good[:len(good)-1]
}

// Tally counts entries, allowed and blocked as the verifier prints them.
func Tally(rs []evidence.Record) (entries, allowed, blocked int) {
	for _, r := range rs {
		if r.Verdict == evidence.VerdictAllow {
			allowed++
		} else {
			blocked++
		}
	}
	return len(rs), allowed, blocked
}

// Step is a recorded action.
func Step(agent, tool string, verdict evidence.Verdict, extra ...canon.Member) evidence.Record {
	return evidence.Record{
		Agent: agent, Tool: tool, Verdict: verdict, Params: map[string]any{"cmd": "go test ./..."},
		BlastClass: evidence.ClassLocalExec, Reason: "allowlisted", Extra: extra,
		OutcomeSHA256: evidence.HashOutcome([]byte(agent + tool)),
	}
}

// Ran is an executed run_cmd with its exit code, confined by jail ("" =
// no jail field).
func Ran(agent, jail string, exit int64, extra ...canon.Member) evidence.Record {
	ms := append([]canon.Member{canon.M(evidence.FieldExitCode, canon.Int(exit))}, extra...)
	if jail != "" {
		ms = append(ms, canon.M(evidence.FieldJail, canon.Str(jail)))
	}
	return Step(agent, "run_cmd", evidence.VerdictAllow, ms...)
}

// Chain appends records to a fresh in-memory ledger.
func Chain(tb testing.TB, rs []evidence.Record) []canon.Value {
	tb.Helper()
	return chainAt(tb, rs, fixedClock)
}

func chainAt(tb testing.TB, rs []evidence.Record, now func() time.Time) []canon.Value {
	tb.Helper()
	l, err := evidence.OpenLedger(evidence.LedgerOptions{Now: now})
	if err != nil {
		tb.Fatal(err)
	}
	for _, r := range rs {
		if _, err := l.Append(r); err != nil {
			tb.Fatal(err)
		}
	}
	return l.Entries()
}

func fixedClock() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }

// sessionClock is fixedClock for the default session "s1" and a few
// minutes off it, by the session's name, for any other.
func sessionClock(session string) time.Time {
	if session == "s1" {
		return fixedClock()
	}
	h := fnv.New32a()
	h.Write([]byte(session))
	return fixedClock().Add(time.Duration(1+h.Sum32()%86400) * time.Second)
}

// Build signs a receipt as the action does.
func Build(tb testing.TB, s Spec) *evidence.Receipt {
	tb.Helper()
	jail := s.jail()
	rs := s.Records
	if rs == nil {
		rs = Good(jail)
	}
	// Each run's entries carry its own time (its Now, offset by its
	// session), as two runs' do: no two runs share a chain (the verifier
	// fails two ids for one chain).
	at := sessionClock(or(s.SessionID, "s1"))
	if !s.Now.IsZero() {
		at = at.Add(s.Now.Sub(fixedClock()))
	}
	entries := chainAt(tb, rs, func() time.Time { return at })
	g := evidence.Governance{Canaries: true, JailCanaries: jail != "", VerifyCommand: "go test ./...", Jail: jail, PolicySHA256: PolicySH}
	if s.Governance != nil {
		g = *s.Governance
		if g.PolicySHA256 == "" {
			g.PolicySHA256 = PolicySH // as the provenance records it
		}
	}
	a := evidence.Assess(entries, g)
	outcome := a.Outcome
	if s.Outcome != "" {
		outcome = s.Outcome
	}
	var extra []canon.Member
	if !s.NoGovernance {
		gv := g.Value(a)
		if s.EditGovernance != nil {
			gv = s.EditGovernance(gv)
		}
		extra = append(extra, canon.M(evidence.RFieldGovernance, gv))
	}
	in := evidence.ReceiptInput{
		Producer: or(s.Producer, "deponent"), SessionID: or(s.SessionID, "s1"),
		Model: "test-model", Task: "build and test", Outcome: outcome,
		Entries: entries, Provenance: provenance(s, jail), Extra: extra, Now: s.Now,
	}
	if in.Now.IsZero() {
		in.Now = fixedClock()
	}
	r, err := evidence.BuildReceipt(in)
	if err != nil {
		tb.Fatal(err)
	}
	return r
}

func provenance(s Spec, jail string) canon.Value {
	var ms []canon.Member
	if repo := or(s.Repo, Repo); repo != "-" {
		ms = append(ms, canon.M(evidence.ProvRepository, canon.Str(repo)))
	}
	if c := or(s.Commit, Commit); c != "-" {
		ms = append(ms, canon.M(evidence.ProvCommit, canon.Str(c)))
	}
	ms = append(ms, canon.M(evidence.ProvRef, canon.Str("refs/heads/main")), canon.M(evidence.ProvRunID, canon.Str("42")))
	if jail != "" {
		ms = append(ms, canon.M(evidence.ProvJail, canon.Str(jail)))
	}
	ms = append(ms, canon.M(evidence.ProvPolicySHA256, canon.Str(PolicySH)), canon.M(evidence.ProvTool, canon.Str("deponent-action")))
	ms = append(ms, s.Provenance...)
	return canon.Obj(ms...)
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Padded is a receipt of s that is hostile the cheap way: an extra signed
// field, "padding": [0,0,0,…], makes it about size bytes (at most), a
// value every two bytes. It is valid: the content hash covers the
// padding, as it covers any field a writer adds.
func Padded(tb testing.TB, s Spec, size int) []byte {
	tb.Helper()
	r := Build(tb, s)
	body := canon.AppendIndent(nil, r.Body.Without(evidence.RFieldSignature).With("padding", canon.Arr()), "  ")
	const sigMember = ",\n  \"signature\": \"\"\n}\n" // and 64 hex digits
	n := (size - len(body) - len(sigMember) - 64) / 2
	if n < 1 {
		tb.Fatalf("a receipt of %d bytes has no room for padding", size)
	}
	zeros := bytes.Repeat([]byte("0,"), n)
	zeros[len(zeros)-1] = ']'
	i := bytes.LastIndex(body, []byte(`"padding": []`))
	var out bytes.Buffer
	out.Grow(size)
	out.Write(body[:i])
	out.WriteString(`"padding": [`)
	out.Write(zeros)
	out.Write(body[i+len(`"padding": []`):])
	d, err := canon.NewDoc(out.Bytes(), evidence.ReceiptLimits)
	if err != nil {
		tb.Fatal(err)
	}
	h := sha256.New()
	w := bufio.NewWriterSize(h, 64<<10)
	if _, err := d.WriteCanonical(w, d.Root(), 0); err != nil {
		tb.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	data := bytes.TrimSuffix(out.Bytes(), []byte("\n}"))
	data = append(data, ",\n  \"signature\": \""+hex.EncodeToString(h.Sum(nil))+"\"\n}\n"...)
	if len(data) > size {
		tb.Fatalf("padded to %d bytes, over %d", len(data), size)
	}
	return data
}

// Bytes is the receipt file as Persist writes it.
func Bytes(r *evidence.Receipt) []byte {
	return append(canon.AppendIndent(nil, r.Body, "  "), '\n')
}

// WriteFile writes a receipt to path, outside any store.
func WriteFile(tb testing.TB, path string, r *evidence.Receipt) string {
	tb.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, Bytes(r), 0o644); err != nil {
		tb.Fatal(err)
	}
	return path
}

// Persist writes receipts into the store at root with evidence.Persist,
// each a second apart so their ids differ, and returns their paths.
func Persist(tb testing.TB, root string, specs ...Spec) []string {
	tb.Helper()
	var paths []string
	for i, s := range specs {
		if s.Now.IsZero() {
			s.Now = fixedClock().Add(time.Duration(i) * time.Second)
		}
		p, err := evidence.Persist(root, Build(tb, s))
		if err != nil {
			tb.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

// ActionRun writes what the action leaves in its receipts directory for
// one run: the receipt, persisted into the store at root, and beside it
// the ledger file the chain was appended to, <producer>/ledger-<session>.jsonl.
// It returns both paths.
func ActionRun(tb testing.TB, root string, s Spec) (receipt, ledger string) {
	tb.Helper()
	r := Build(tb, s)
	ledger = filepath.Join(root, r.Producer, "ledger-"+r.SessionID+".jsonl")
	if err := os.MkdirAll(filepath.Dir(ledger), 0o755); err != nil {
		tb.Fatal(err)
	}
	WriteLedger(tb, ledger, r.Entries)
	receipt, err := evidence.Persist(root, r)
	if err != nil {
		tb.Fatal(err)
	}
	return receipt, ledger
}

// WriteLedger writes entries as a ledger file: one canonical entry a line.
func WriteLedger(tb testing.TB, path string, entries []canon.Value) {
	tb.Helper()
	var b []byte
	for _, e := range entries {
		b = append(canon.AppendCanonical(b, e), '\n')
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		tb.Fatal(err)
	}
}

// Ledger writes a bare ledger of n typical entries (about 450 bytes each)
// to path and returns its head.
func Ledger(tb testing.TB, path string, n int, rec func(i int) evidence.Record) string {
	tb.Helper()
	l, err := evidence.OpenLedger(evidence.LedgerOptions{Path: path, NoSync: true, Discard: true})
	if err != nil {
		tb.Fatal(err)
	}
	if rec == nil {
		rec = Typical
	}
	for i := range n {
		if _, err := l.Append(rec(i)); err != nil {
			tb.Fatal(err)
		}
	}
	head := l.Head()
	if err := l.Close(); err != nil {
		tb.Fatal(err)
	}
	return head
}

// Plain is an entry of the size the kernel's benchmarks call typical
// (about 450 bytes on disk): a command, its verdict and reason, and the
// outcome hash.
func Plain(i int) evidence.Record {
	return evidence.Record{
		Agent: "builder", Tool: "run_cmd",
		Params:  map[string]any{"cmd": fmt.Sprintf("pytest -q tests/t%04d.py", i%10000)},
		Verdict: evidence.VerdictAllow, BlastClass: evidence.ClassLocalExec, Reason: "allowlisted, in-sandbox, non-chained-to-deny",
		OutcomeSHA256: evidence.HashOutcome([]byte(fmt.Sprint(i))),
	}
}

// Typical is Plain as the action records an executed command: with its
// exit code and jail (about 520 bytes).
func Typical(i int) evidence.Record {
	r := Plain(i)
	r.Extra = []canon.Member{canon.M(evidence.FieldExitCode, canon.Int(0)), canon.M(evidence.FieldJail, canon.Str(Jail))}
	return r
}

// ZipFile is one member of a test archive.
type ZipFile struct {
	Name  string
	Data  []byte
	Store bool        // stored, not deflated
	Mode  os.FileMode // 0 = 0644 regular file
}

// Zip builds an archive in memory.
func Zip(tb testing.TB, files []ZipFile) []byte {
	tb.Helper()
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for _, f := range files {
		h := &zip.FileHeader{Name: f.Name, Method: zip.Deflate}
		if f.Store {
			h.Method = zip.Store
		}
		mode := f.Mode
		if mode == 0 {
			mode = 0o644
		}
		h.SetMode(mode)
		fw, err := w.CreateHeader(h)
		if err != nil {
			tb.Fatal(err)
		}
		if _, err := fw.Write(f.Data); err != nil {
			tb.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// ZipDir builds an archive of every regular file under root, named by
// their paths relative to root, as upload-artifact does.
func ZipDir(tb testing.TB, root string) []byte {
	tb.Helper()
	var files []ZipFile
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		files = append(files, ZipFile{Name: filepath.ToSlash(rel), Data: data})
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
	return Zip(tb, files)
}

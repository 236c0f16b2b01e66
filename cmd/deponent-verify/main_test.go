package main_test

// These tests run the built binary as a user would: flags, paths, stdin,
// environment in; stdout, stderr and the exit status out.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/deponent-dev/deponent-action/internal/version"
	"github.com/deponent-dev/deponent-action/pkg/canon"
	"github.com/deponent-dev/deponent-action/pkg/evidence"
	"github.com/deponent-dev/deponent-action/pkg/verify/verifytest"
)

var binary string

// TestMain builds deponent-verify once into a temporary directory (with
// -race when the tests run with it). DEPONENT_VERIFY_BIN names a binary
// to test instead, e.g. an installed release, or a build run by another
// user than the tests.
func TestMain(m *testing.M) {
	if bin := os.Getenv("DEPONENT_VERIFY_BIN"); bin != "" {
		binary = bin
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "deponent-verify-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "deponent-verify")
	if runtime.GOOS == "windows" {
		binary += ".exe"
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		fmt.Fprintln(os.Stderr, "building deponent-verify: the go command is not on PATH:", err)
		os.Exit(1)
	}
	build := exec.Command(goTool, append(append([]string{"build"}, raceFlags...), "-o", binary, ".")...)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building deponent-verify:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type result struct {
	stdout, stderr string
	code           int
}

// run executes the binary outside GitHub Actions unless env says so.
func run(t *testing.T, stdin []byte, env []string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = append(cleanEnv(), env...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	require.NoError(t, ctx.Err(), "deponent-verify %v timed out", args)
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return result{out.String(), errb.String(), code}
}

// cleanEnv is the environment without GitHub's variables, so the tests
// behave the same in and out of Actions.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GITHUB_") {
			env = append(env, kv)
		}
	}
	return env
}

// line returns the output line for path, failing the test if none.
func line(t *testing.T, out, path string) string {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		fields := strings.Fields(l)
		if len(fields) >= 2 && fields[1] == path {
			return l
		}
	}
	t.Fatalf("no line for %s in:\n%s", path, out)
	return ""
}

func assertOK(t *testing.T, r result) {
	t.Helper()
	assert.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	for _, l := range strings.Split(r.stdout, "\n") {
		assert.False(t, strings.HasPrefix(l, "FAIL"), l)
	}
}

// assertFail checks exit status 1 and that some FAIL line holds every
// fragment.
func assertFail(t *testing.T, r result, fragments ...string) {
	t.Helper()
	require.Equal(t, 1, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	for _, l := range strings.Split(r.stdout, "\n") {
		if !strings.HasPrefix(l, "FAIL") {
			continue
		}
		all := true
		for _, f := range fragments {
			all = all && strings.Contains(l, f)
		}
		if all {
			return
		}
	}
	t.Fatalf("no FAIL line holds %q in:\n%s", fragments, r.stdout)
}

func assertUsage(t *testing.T, r result, fragment string) {
	t.Helper()
	assert.Equal(t, 2, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Contains(t, r.stderr, fragment)
	assert.Empty(t, r.stdout)
}

// goodCounts is the "entries=… allowed=… blocked=…" of verifytest.Good.
func goodCounts() string {
	e, a, b := verifytest.Tally(verifytest.Good(verifytest.Jail))
	return fmt.Sprintf("entries=%d allowed=%d blocked=%d", e, a, b)
}

// ---- interop vectors ----

func TestInteropVectors(t *testing.T) {
	dir := filepath.Join("..", "..", "pkg", "evidence", "testdata", "interop")
	data, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	require.NoError(t, err)
	var manifest []struct{ File, Kind, Expect, Why string }
	require.NoError(t, json.Unmarshal(data, &manifest))
	require.NotEmpty(t, manifest)
	for _, v := range manifest {
		t.Run(v.File, func(t *testing.T) {
			p := filepath.Join(dir, filepath.FromSlash(v.File))
			r := run(t, nil, nil, p)
			switch v.Expect {
			case "valid":
				assertOK(t, r)
				assert.True(t, strings.HasPrefix(line(t, r.stdout, p), "OK"))
			case "invalid":
				assertFail(t, r, p)
			default:
				t.Fatalf("manifest: unknown expectation %q", v.Expect)
			}
		})
	}
	// The reference's receipts carry no governance object: their outcome
	// is stored, not recomputed, and the output says so.
	r := run(t, nil, nil, filepath.Join(dir, "receipts", "valid-0.json"))
	assert.Contains(t, r.stdout, "outcome=GOVERNED_PASS(stored)")
	assert.Contains(t, r.stdout, "not signed")
}

// ---- receipts the kernel wrote, as the action does ----

func TestStoreWrittenByKernel(t *testing.T) {
	root := t.TempDir()
	paths := verifytest.Persist(t, root, verifytest.Spec{}, verifytest.Spec{SessionID: "s2"}, verifytest.Spec{SessionID: "s3"})
	r := run(t, nil, nil, "--require-outcome", "GOVERNED_PASS", "--require-jailed", "--max-blocked", "0",
		"--expect-commit", verifytest.Commit, "--expect-repo", verifytest.Repo, root)
	assertOK(t, r)
	for _, p := range paths {
		l := line(t, r.stdout, p)
		assert.Contains(t, l, "outcome=GOVERNED_PASS(recomputed) "+goodCounts())
		assert.Contains(t, l, "receipt="+strings.TrimSuffix(filepath.Base(p), ".json"))
	}
	assert.Contains(t, line(t, r.stdout, filepath.Join(root, "deponent", "index.jsonl")), "index receipts=3")
	assert.Contains(t, line(t, r.stdout, filepath.Join(root, "deponent", "LATEST")), "latest receipt=20260102T030407Z_s3")
	assert.Contains(t, line(t, r.stdout, root), "directory receipts=3 ledgers=0")
	assert.Contains(t, r.stdout, "6 verified, 0 failed (3 receipts, 0 ledgers)")

	// Each receipt on its own, too.
	assertOK(t, run(t, nil, nil, paths...))
}

// TestActionArtifact: what the action uploads is a store with, beside each
// receipt, the ledger its chain was appended to. The receipt anchors the
// ledger (length and head); receipt-level policies apply to the receipts.
func TestActionArtifact(t *testing.T) {
	root := t.TempDir()
	rp, lp := verifytest.ActionRun(t, root, verifytest.Spec{SessionID: "4242-1-build"})
	policies := []string{"--require-outcome", "GOVERNED_PASS", "--require-jailed", "--max-blocked", "0",
		"--expect-commit", verifytest.Commit, "--expect-repo", verifytest.Repo}
	r := run(t, nil, nil, append(policies, root)...)
	assertOK(t, r)
	id := strings.TrimSuffix(filepath.Base(rp), ".json")
	assert.Contains(t, line(t, r.stdout, lp), "ledger "+goodCounts())
	assert.Contains(t, line(t, r.stdout, lp), "anchored-by="+id)
	assert.Contains(t, r.stdout, "5 verified, 0 failed (1 receipt, 1 ledger)")
	assert.NotContains(t, r.stdout, "bare chain cannot reveal", "the receipt anchors the ledger")

	z := writeZip(t, "artifact.zip", verifytest.ZipDir(t, root))
	assertOK(t, run(t, nil, nil, append(policies, z)...))

	// The ledger cut short after the receipt was written: a valid shorter
	// chain on its own, caught by the receipt beside it.
	data, err := os.ReadFile(lp)
	require.NoError(t, err)
	lines := bytes.SplitAfter(data, []byte("\n"))
	require.NoError(t, os.WriteFile(lp, bytes.Join(lines[:len(lines)-2], nil), 0o644))
	n := len(verifytest.Good(verifytest.Jail))
	assertFail(t, run(t, nil, nil, root), lp, fmt.Sprintf("records %d entries ending", n), fmt.Sprintf("this ledger %d ending", n-1), "cut short or changed")

	// A ledger of a session that has no receipt in a store: that run did
	// not finish.
	require.NoError(t, os.WriteFile(lp, data, 0o644))
	orphan := filepath.Join(root, "deponent", "ledger-4242-2-build.jsonl")
	require.NoError(t, os.WriteFile(orphan, data, 0o644))
	assertFail(t, run(t, nil, nil, root), orphan, `no receipt of session "4242-2-build" beside it: the run that wrote this ledger did not finish`)

	// A run killed before its receipt: only a ledger. Not a pass.
	unfinished := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(unfinished, "deponent"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(unfinished, "deponent", "ledger-9-1-build.jsonl"), data, 0o644))
	assertFail(t, run(t, nil, nil, "--require-outcome", "GOVERNED_PASS", unfinished), "holds 0 receipts")
}

// ---- policies, each both ways ----

// receipt writes one receipt built from s and returns its path.
func receipt(t *testing.T, s verifytest.Spec) string {
	t.Helper()
	return verifytest.WriteFile(t, filepath.Join(t.TempDir(), "r.json"), verifytest.Build(t, s))
}

// failingStep is a run whose out-of-band verify command (the last entry)
// exited 2: a failed run whatever the agent's own steps did.
func failingStep() []evidence.Record {
	rs := verifytest.Good(verifytest.Jail)
	rs[len(rs)-1] = verifytest.Ran(evidence.AgentHarness, verifytest.Jail, 2)
	return rs
}

func TestRequireOutcome(t *testing.T) {
	good := receipt(t, verifytest.Spec{})
	assertOK(t, run(t, nil, nil, "--require-outcome", "GOVERNED_PASS", good))
	assertFail(t, run(t, nil, nil, "--require-outcome", "GOVERNED_DRY_RUN", good), "outcome: outcome is GOVERNED_PASS; --require-outcome wants GOVERNED_DRY_RUN")

	// An honest failed run verifies, and fails the policy.
	failed := receipt(t, verifytest.Spec{Records: failingStep()})
	r := run(t, nil, nil, failed)
	assertOK(t, r)
	assert.Contains(t, r.stdout, "outcome=GOVERNED_FAIL(recomputed)")
	assertFail(t, run(t, nil, nil, "--require-outcome", "GOVERNED_PASS", failed), "outcome is GOVERNED_FAIL")

	// A signed lie: the stored outcome says pass, the chain says fail.
	// Never OK, with or without the flag.
	forged := receipt(t, verifytest.Spec{Records: failingStep(), Outcome: evidence.OutcomePass})
	msg := fmt.Sprintf("stored outcome GOVERNED_PASS but the chain recomputes to GOVERNED_FAIL: verify command (entry %d) exited 2", len(failingStep())-1)
	assertFail(t, run(t, nil, nil, forged), msg)
	assertFail(t, run(t, nil, nil, "--require-outcome", "GOVERNED_PASS", forged), msg)

	// Stored fail, chain pass: consistent with the flag only if asked
	// about the stored value, and then the recomputation disagrees.
	under := receipt(t, verifytest.Spec{Outcome: evidence.OutcomeFail})
	assertFail(t, run(t, nil, nil, "--require-outcome", "GOVERNED_FAIL", under), "stored outcome GOVERNED_FAIL but the chain recomputes to GOVERNED_PASS")

	// No governance object (the reference's receipts): stored, not
	// recomputed, and said so.
	plain := receipt(t, verifytest.Spec{NoGovernance: true, Records: failingStep(), Outcome: evidence.OutcomePass})
	r = run(t, nil, nil, "--require-outcome", "GOVERNED_PASS", "--json", plain)
	assert.Equal(t, 0, r.code, r.stdout)
	assert.Contains(t, r.stdout, "is stored, not recomputed: the receipt carries no governance object")
}

func TestRequireJailed(t *testing.T) {
	next := fmt.Sprintf("chain.entries[%d]", len(verifytest.Good("bwrap"))) // the entry appended to a good run
	good := receipt(t, verifytest.Spec{})
	assertOK(t, run(t, nil, nil, good))
	assertOK(t, run(t, nil, nil, "--require-jailed", good))
	seatbelt := receipt(t, verifytest.Spec{Jail: "seatbelt"})
	assertOK(t, run(t, nil, nil, "--require-jailed", seatbelt))

	cases := []struct {
		name string
		spec verifytest.Spec
		msg  string
	}{
		{"unjailed entry", verifytest.Spec{Records: append(verifytest.Good("bwrap"),
			verifytest.Ran("builder", "none", 0, canon.M(evidence.FieldUnjailed, canon.BoolValue(true))))},
			next + ": marked unjailed"},
		{"command without a jail field", verifytest.Spec{Records: append(verifytest.Good("bwrap"), verifytest.Ran("builder", "", 0))},
			next + ": run_cmd recorded no jail"},
		{"command in jail none", verifytest.Spec{Records: append(verifytest.Good("bwrap"), verifytest.Ran("builder", "none", 0))},
			`run_cmd ran with jail "none"`},
		{"governance opted in to unjailed", verifytest.Spec{Governance: &evidence.Governance{Canaries: true, VerifyCommand: "go test ./...", Jail: "bwrap", Unjailed: true}},
			"governance.unjailed: true"},
		{"records no jail at all", verifytest.Spec{Jail: "-", NoGovernance: true, Records: []evidence.Record{verifytest.Step("builder", "read_file", evidence.VerdictAllow)}},
			"the receipt records no jail"},
		{"provenance jail none", verifytest.Spec{Jail: "none"}, `provenance.jail: "none" is not a jail`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := receipt(t, c.spec)
			assertFail(t, run(t, nil, nil, "--require-jailed", p), c.msg, "--require-jailed")
		})
	}
	// The reference's receipts record no jail.
	assertFail(t, run(t, nil, nil, "--require-jailed", filepath.Join("..", "..", "pkg", "evidence", "testdata", "interop", "receipts", "valid-5.json")), "--require-jailed")
}

func TestMaxBlocked(t *testing.T) {
	// The good run's one blocked entry is a canary: blocked by design.
	good := receipt(t, verifytest.Spec{})
	assertOK(t, run(t, nil, nil, "--max-blocked", "0", good))

	onBlock := &evidence.Governance{Canaries: true, JailCanaries: true, VerifyCommand: "go test ./...", Jail: "bwrap", OnBlockContinue: true}
	blocked := receipt(t, verifytest.Spec{Governance: onBlock, Records: append(verifytest.Good("bwrap"),
		verifytest.Step("builder", "run_cmd", evidence.VerdictBlock), verifytest.Step("builder", "read_file", evidence.VerdictBlock))})
	assertOK(t, run(t, nil, nil, "--max-blocked", "2", blocked))
	_, _, canaries := verifytest.Tally(verifytest.Good("bwrap"))
	assertFail(t, run(t, nil, nil, "--max-blocked", "1", blocked), "chain: 2 blocked entries, not counting canaries; --max-blocked 1", fmt.Sprintf("blocked=%d", canaries+2))
}

func TestExpectCommitAndRepo(t *testing.T) {
	good := receipt(t, verifytest.Spec{})
	assertOK(t, run(t, nil, nil, "--expect-commit", verifytest.Commit, "--expect-repo", verifytest.Repo, good))
	// Case-insensitive hex and repository names.
	assertOK(t, run(t, nil, nil, "--expect-commit", strings.ToUpper(verifytest.Commit), "--expect-repo", strings.ToUpper(verifytest.Repo), good))

	other := strings.Repeat("f", 40)
	assertFail(t, run(t, nil, nil, "--expect-commit", other, good), "provenance.commit: the receipt is for commit", other)
	assertFail(t, run(t, nil, nil, "--expect-repo", "someone/else", good), `provenance.repository: the receipt is for repository "deponent-dev/deponent-action", not someone/else`)

	// A receipt bound to a short prefix does not match the full SHA.
	short := receipt(t, verifytest.Spec{Commit: verifytest.Commit[:7]})
	assertFail(t, run(t, nil, nil, "--expect-commit", verifytest.Commit, short), "provenance.commit")
	// A receipt bound to nothing fails closed.
	unbound := receipt(t, verifytest.Spec{Commit: "-", Repo: "-"})
	assertFail(t, run(t, nil, nil, "--expect-commit", verifytest.Commit, unbound), "provenance.commit: missing")
	assertFail(t, run(t, nil, nil, "--expect-repo", verifytest.Repo, unbound), "provenance.repository: missing")
	// A short flag value is a usage error, not a prefix match.
	assertUsage(t, run(t, nil, nil, "--expect-commit", verifytest.Commit[:7], good), "not a prefix")
	// A bare ledger has no provenance.
	ledger := filepath.Join(t.TempDir(), "l.jsonl")
	verifytest.Ledger(t, ledger, 3, nil)
	assertFail(t, run(t, nil, nil, "--expect-commit", verifytest.Commit, ledger), "--expect-commit: a bare ledger records no outcome and no provenance")
}

func TestMinReceipts(t *testing.T) {
	empty := t.TempDir()
	assertFail(t, run(t, nil, nil, empty), "holds 0 receipts; --min-receipts is 1")
	assertOK(t, run(t, nil, nil, "--min-receipts", "0", empty))

	root := t.TempDir()
	verifytest.Persist(t, root, verifytest.Spec{}, verifytest.Spec{SessionID: "s2"})
	assertOK(t, run(t, nil, nil, "--min-receipts", "2", root))
	assertFail(t, run(t, nil, nil, "--min-receipts", "3", root), "holds 2 receipts; --min-receipts is 3")
	// A policy that checked nothing is a failure.
	assertFail(t, run(t, nil, nil, "--min-receipts", "0", "--expect-commit", verifytest.Commit, empty), "--expect-commit", "no receipt was verified")
}

func TestLedgerAnchors(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "ledger.jsonl")
	head := verifytest.Ledger(t, p, 100, nil)
	r := run(t, nil, nil, p)
	assertOK(t, r)
	assert.Contains(t, line(t, r.stdout, p), "ledger entries=100 allowed=100 blocked=0 head="+head)
	assert.Contains(t, r.stdout, "cannot reveal that its last entries were dropped")
	assertOK(t, run(t, nil, nil, "--expect-len", "100", "--expect-head", strings.ToUpper(head), p))

	// Drop the last entry: still a valid chain, caught only by an anchor.
	data, err := os.ReadFile(p)
	require.NoError(t, err)
	lines := bytes.SplitAfter(data, []byte("\n"))
	cut := filepath.Join(dir, "cut.jsonl")
	require.NoError(t, os.WriteFile(cut, bytes.Join(lines[:99], nil), 0o644))
	assertOK(t, run(t, nil, nil, cut))
	assertFail(t, run(t, nil, nil, "--expect-len", "100", cut), "chain: length-mismatch: 99 entries, expected 100")
	assertFail(t, run(t, nil, nil, "--expect-head", head, cut), "chain: head-mismatch")

	// An empty ledger is a consistent chain that proves nothing: it fails
	// unless emptiness is what the caller expects.
	empty := filepath.Join(dir, "empty.jsonl")
	require.NoError(t, os.WriteFile(empty, nil, 0o644))
	assertFail(t, run(t, nil, nil, empty), "empty ledger: no entries to verify")
	assertOK(t, run(t, nil, nil, "--expect-len", "0", empty))

	// Entry-level policies apply to a ledger's lines.
	unjailed := filepath.Join(dir, "unjailed.jsonl")
	verifytest.Ledger(t, unjailed, 10, func(i int) evidence.Record {
		if i == 7 {
			return verifytest.Ran("builder", "", 0)
		}
		return verifytest.Typical(i)
	})
	assertOK(t, run(t, nil, nil, unjailed))
	assertFail(t, run(t, nil, nil, "--require-jailed", unjailed), "line 8 (entry 7): run_cmd recorded no jail")

	// An anchor with no ledger to check fails closed; bad anchors are
	// usage errors.
	assertFail(t, run(t, nil, nil, "--expect-len", "3", receipt(t, verifytest.Spec{})), "--expect-len", "no bare ledger was verified")
	assertUsage(t, run(t, nil, nil, "--expect-len", "-1", p), "must be 0 or more")
	assertUsage(t, run(t, nil, nil, "--expect-head", "abc", p), "--expect-head")
}

func TestSummaryCountsMustMatchTheChain(t *testing.T) {
	lie := receipt(t, verifytest.Spec{EditGovernance: func(g canon.Value) canon.Value {
		c, _ := g.Get("counts")
		return g.With("counts", c.With("blocked", canon.Int(0)))
	}})
	_, _, blocked := verifytest.Tally(verifytest.Good(verifytest.Jail))
	assertFail(t, run(t, nil, nil, lie), fmt.Sprintf("governance: the stored summary disagrees with the chain: governance.counts.blocked says 0, the chain recomputes %d", blocked))
}

// ---- zips ----

func writeZip(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, data, 0o644))
	return p
}

func TestZipArtifact(t *testing.T) {
	root := t.TempDir()
	paths := verifytest.Persist(t, root, verifytest.Spec{}, verifytest.Spec{SessionID: "s2"})
	z := writeZip(t, "artifact.zip", verifytest.ZipDir(t, root))
	r := run(t, nil, nil, "--require-outcome", "GOVERNED_PASS", "--expect-commit", verifytest.Commit, z)
	assertOK(t, r)
	for _, p := range paths {
		member := z + "!deponent/" + filepath.Base(p)
		assert.Contains(t, line(t, r.stdout, member), "outcome=GOVERNED_PASS(recomputed)")
	}
	assert.Contains(t, line(t, r.stdout, z), "zip receipts=2")
	assert.Contains(t, line(t, r.stdout, z+"!deponent/index.jsonl"), "index receipts=2")
	// Nothing was extracted beside the archive.
	ents, err := os.ReadDir(filepath.Dir(z))
	require.NoError(t, err)
	assert.Len(t, ents, 1)

	// An artifact saved without an extension is recognised by its magic.
	bare := writeZip(t, "artifact", verifytest.ZipDir(t, root))
	assertOK(t, run(t, nil, nil, bare))
}

func TestHostileZips(t *testing.T) {
	good := verifytest.Bytes(verifytest.Build(t, verifytest.Spec{}))
	id := "20260102T030405Z_s1"
	cases := []struct {
		name  string
		files []verifytest.ZipFile
		msg   []string
	}{
		{"dot-dot", []verifytest.ZipFile{{Name: "../" + id + ".json", Data: good}}, []string{"!../" + id + ".json", "could escape the archive's root"}},
		{"inner dot-dot", []verifytest.ZipFile{{Name: "a/../../x.json", Data: good}}, []string{"not a clean relative path"}},
		{"absolute", []verifytest.ZipFile{{Name: "/tmp/x.json", Data: good}}, []string{"absolute member name"}},
		{"drive letter", []verifytest.ZipFile{{Name: "C:/x.json", Data: good}}, []string{"absolute member name"}},
		{"backslash", []verifytest.ZipFile{{Name: `..\x.json`, Data: good}}, []string{"backslash"}},
		{"duplicate", []verifytest.ZipFile{{Name: "r.json", Data: good}, {Name: "r.json", Data: good}}, []string{"more than once"}},
		{"symlink member", []verifytest.ZipFile{{Name: "r.json", Data: []byte("/etc/passwd"), Mode: os.ModeSymlink | 0o777}}, []string{"symlink member not followed"}},
		{"bomb", []verifytest.ZipFile{{Name: "bomb.json", Data: bytes.Repeat([]byte(" "), 20<<20)}}, []string{"inflates more than 100:1"}},
		{"ledger bomb", []verifytest.ZipFile{{Name: "bomb.jsonl", Data: bytes.Repeat([]byte("\n"), 20<<20)}}, []string{"bomb.jsonl"}},
		{"store at the root", []verifytest.ZipFile{{Name: id + ".json", Data: good}, {Name: "index.jsonl", Data: indexLine(t, good)}, {Name: "LATEST", Data: []byte(id + "\n")}},
			[]string{"sits at the archive's root"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			z := writeZip(t, "a.zip", verifytest.Zip(t, c.files))
			assertFail(t, run(t, nil, nil, "--min-receipts", "0", z), c.msg...)
		})
	}

	t.Run("too many members", func(t *testing.T) {
		files := make([]verifytest.ZipFile, 20_001)
		for i := range files {
			files[i] = verifytest.ZipFile{Name: fmt.Sprintf("f%d.txt", i), Store: true}
		}
		z := writeZip(t, "many.zip", verifytest.Zip(t, files))
		assertFail(t, run(t, nil, nil, z), "20001 members, over the 20000-member cap")
	})
	t.Run("not a zip", func(t *testing.T) {
		z := writeZip(t, "junk.zip", []byte("PK\x03\x04 this is not an archive"))
		assertFail(t, run(t, nil, nil, z), "not a readable zip archive")
	})
	t.Run("empty zip", func(t *testing.T) {
		z := writeZip(t, "empty.zip", verifytest.Zip(t, nil))
		assertFail(t, run(t, nil, nil, z), "holds 0 receipts; --min-receipts is 1")
	})
	t.Run("tampered member", func(t *testing.T) {
		bad := bytes.Replace(good, []byte(`"ALLOW"`), []byte(`"BLOCK"`), 1)
		z := writeZip(t, "t.zip", verifytest.Zip(t, []verifytest.ZipFile{{Name: "r.json", Data: bad}}))
		assertFail(t, run(t, nil, nil, z), z+"!r.json", "hash-mismatch")
	})
}

// indexLine is the index.jsonl line Persist writes for a receipt.
func indexLine(t *testing.T, receipt []byte) []byte {
	t.Helper()
	r, err := evidence.VerifyReceipt(receipt)
	require.NoError(t, err)
	v := canon.Obj(canon.M("receipt_id", canon.Str(r.ID)), canon.M("file", canon.Str(r.ID+".json")),
		canon.M("ts", canon.Str(r.TS)), canon.M("outcome", canon.Str(string(r.Outcome))), canon.M("signature", canon.Str(r.Signature)))
	return append(canon.AppendOrdered(nil, v), '\n')
}

// ---- robustness ----

func TestSymlinks(t *testing.T) {
	root := t.TempDir()
	verifytest.Persist(t, root, verifytest.Spec{})
	require.NoError(t, os.Symlink(".", filepath.Join(root, "loop")))
	require.NoError(t, os.Symlink(filepath.Join(root, "deponent"), filepath.Join(root, "deponent", "again")))
	outside := receipt(t, verifytest.Spec{})
	require.NoError(t, os.Symlink(outside, filepath.Join(root, "linked.json")))
	require.NoError(t, os.Symlink(filepath.Join(root, "nowhere.json"), filepath.Join(root, "dangling.json")))
	r := run(t, nil, nil, root)
	for _, name := range []string{"loop", "deponent/again", "linked.json", "dangling.json"} {
		assert.Contains(t, line(t, r.stdout, filepath.Join(root, filepath.FromSlash(name))), "symlink not followed")
	}
	assertFail(t, r, "symlink not followed")
	assert.Contains(t, r.stdout, "4 verified, 4 failed (1 receipt, 0 ledgers)")

	// A symlink named on the command line is the user's choice: followed.
	link := filepath.Join(t.TempDir(), "chosen.json")
	require.NoError(t, os.Symlink(outside, link))
	assertOK(t, run(t, nil, nil, link))
}

func TestSpecialAndUnreadableFiles(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no FIFOs on Windows")
	}
	root := t.TempDir()
	verifytest.Persist(t, root, verifytest.Spec{})
	fifo := filepath.Join(root, "deponent", "pipe.json")
	require.NoError(t, mkfifo(fifo))
	r := run(t, nil, nil, root) // must not block on the FIFO
	assertFail(t, r, fifo, "not a regular file (named pipe)")

	t.Run("chmod 000", func(t *testing.T) {
		// As root (CI) the binary runs as "nobody": root reads a chmod 000
		// file regardless (see unprivileged).
		dir, runIt := unprivileged(t)
		p := verifytest.WriteFile(t, filepath.Join(dir, "locked.json"), verifytest.Build(t, verifytest.Spec{}))
		sub := filepath.Join(dir, "sealed")
		require.NoError(t, os.Mkdir(sub, 0o755))
		assertOK(t, runIt(dir)) // control: readable, the same files verify
		require.NoError(t, os.Chmod(p, 0))
		require.NoError(t, os.Chmod(sub, 0))
		t.Cleanup(func() { os.Chmod(sub, 0o755) })
		r := runIt(dir)
		assertFail(t, r, p, "cannot read: permission denied")
		assertFail(t, r, sub, "cannot read directory: permission denied")
	})
}

func TestLedgerAsReceiptAndBack(t *testing.T) {
	dir := t.TempDir()
	ledger := filepath.Join(dir, "ledger.jsonl")
	verifytest.Ledger(t, ledger, 5, nil)
	data, err := os.ReadFile(ledger)
	require.NoError(t, err)
	asReceipt := filepath.Join(dir, "20260102T030405Z_s1.json")
	require.NoError(t, os.WriteFile(asReceipt, data, 0o644))
	assertFail(t, run(t, nil, nil, asReceipt), "this looks like a JSONL ledger")

	asLedger := filepath.Join(dir, "receipt.jsonl")
	require.NoError(t, os.WriteFile(asLedger, verifytest.Bytes(verifytest.Build(t, verifytest.Spec{})), 0o644))
	assertFail(t, run(t, nil, nil, asLedger), "line 1 (entry 0): malformed-entry")
}

func TestHugeInputsAreRefusedUnread(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.json")
	require.NoError(t, os.WriteFile(big, nil, 0o644))
	require.NoError(t, os.Truncate(big, evidence.MaxReceiptBytes+1)) // sparse
	assertFail(t, run(t, nil, nil, big), "over the 67108864-byte receipt cap: not read")

	line := filepath.Join(dir, "line.jsonl")
	require.NoError(t, os.WriteFile(line, nil, 0o644))
	require.NoError(t, os.Truncate(line, 1<<30)) // one 1 GiB line of NULs
	assertFail(t, run(t, nil, nil, line), "line is longer than the 1048576-byte cap")
}

func TestStoreConsistency(t *testing.T) {
	store := func(t *testing.T, n int) (root, dir string, paths []string) {
		root = t.TempDir()
		specs := make([]verifytest.Spec, n)
		for i := range specs {
			specs[i].SessionID = fmt.Sprintf("s%d", i+1)
		}
		paths = verifytest.Persist(t, root, specs...)
		return root, filepath.Join(root, "deponent"), paths
	}
	index := func(dir string) string { return filepath.Join(dir, "index.jsonl") }
	latest := func(dir string) string { return filepath.Join(dir, "LATEST") }

	t.Run("indexed receipt missing", func(t *testing.T) {
		root, dir, paths := store(t, 2)
		require.NoError(t, os.Remove(paths[0]))
		assertFail(t, run(t, nil, nil, root), index(dir), "line 1: lists "+filepath.Base(paths[0])+", which is not beside it")
	})
	t.Run("index signature mismatch", func(t *testing.T) {
		root, dir, _ := store(t, 2)
		data, err := os.ReadFile(index(dir))
		require.NoError(t, err)
		lines := strings.SplitAfter(string(data), "\n")
		lines[1] = strings.Replace(lines[1], `"signature": "`, `"signature": "0`, 1)[:len(lines[1])-2] + "\"}\n"
		require.NoError(t, os.WriteFile(index(dir), []byte(strings.Join(lines, "")), 0o644))
		assertFail(t, run(t, nil, nil, root), index(dir), "line 2: signature 0", "does not match the recomputed signature")
	})
	t.Run("LATEST names a receipt that does not exist", func(t *testing.T) {
		root, dir, _ := store(t, 1)
		require.NoError(t, os.WriteFile(latest(dir), []byte("20990101T000000Z_ghost\n"), 0o644))
		assertFail(t, run(t, nil, nil, root), latest(dir), "names 20990101T000000Z_ghost, which index.jsonl does not list")
	})
	t.Run("LATEST malformed", func(t *testing.T) {
		root, dir, _ := store(t, 1)
		require.NoError(t, os.WriteFile(latest(dir), []byte("20260102T030405Z_s1"), 0o644))
		assertFail(t, run(t, nil, nil, root), latest(dir), "want one receipt id and a newline")
	})
	t.Run("LATEST missing while the index lists receipts", func(t *testing.T) {
		root, dir, _ := store(t, 1)
		require.NoError(t, os.Remove(latest(dir)))
		assertFail(t, run(t, nil, nil, root), index(dir), "LATEST: missing")
	})
	t.Run("LATEST without an index", func(t *testing.T) {
		root, dir, _ := store(t, 1)
		require.NoError(t, os.Remove(index(dir)))
		assertFail(t, run(t, nil, nil, root), latest(dir), "no index.jsonl beside it")
	})
	t.Run("receipt not in the index", func(t *testing.T) {
		root, dir, _ := store(t, 1)
		extra := verifytest.Build(t, verifytest.Spec{SessionID: "stray", Now: time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)})
		p := verifytest.WriteFile(t, filepath.Join(dir, extra.ID+".json"), extra)
		assertFail(t, run(t, nil, nil, root), p, "not listed in the index.jsonl beside it")
	})
	t.Run("receipt renamed", func(t *testing.T) {
		root, dir, paths := store(t, 1)
		renamed := filepath.Join(dir, "renamed.json")
		require.NoError(t, os.Rename(paths[0], renamed))
		r := run(t, nil, nil, root)
		assertFail(t, r, renamed, "file name: a store names each receipt <receipt_id>.json")
		assertFail(t, r, index(dir), "which is not beside it")
	})
	t.Run("receipt under another producer", func(t *testing.T) {
		root, dir, paths := store(t, 1)
		other := filepath.Join(root, "other")
		require.NoError(t, os.Rename(dir, other))
		assertFail(t, run(t, nil, nil, root), filepath.Join(other, filepath.Base(paths[0])), `a receipt of producer "deponent" sits in directory "other"`)
	})
	t.Run("indexed receipt tampered", func(t *testing.T) {
		root, _, paths := store(t, 1)
		data, err := os.ReadFile(paths[0])
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(paths[0], bytes.Replace(data, []byte(`"task": "build`), []byte(`"task": "Build`), 1), 0o644))
		r := run(t, nil, nil, root)
		assertFail(t, r, paths[0], "signature: signature")
		assertFail(t, r, "index.jsonl", "line 1: lists "+filepath.Base(paths[0])+", which does not verify")
		assertFail(t, r, "LATEST", "which does not verify")
		assert.Contains(t, r.stdout, "1 verified, 3 failed")
	})
}

func TestThousandsOfReceipts(t *testing.T) {
	dir := t.TempDir()
	const n = 3000
	r := verifytest.Build(t, verifytest.Spec{})
	data := verifytest.Bytes(r)
	for i := range n {
		sub := filepath.Join(dir, fmt.Sprintf("d%02d", i%50))
		require.NoError(t, os.MkdirAll(sub, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(sub, fmt.Sprintf("r%05d.json", i)), data, 0o644))
	}
	res := run(t, nil, nil, "--require-outcome", "GOVERNED_PASS", dir)
	assertOK(t, res)
	assert.Contains(t, res.stdout, fmt.Sprintf("%d verified, 0 failed (%d receipts, 0 ledgers)", n+1, n))
}

// ---- stdin, JSON, GitHub Actions, usage ----

func TestStdin(t *testing.T) {
	good := verifytest.Bytes(verifytest.Build(t, verifytest.Spec{}))
	r := run(t, good, nil, "--expect-commit", verifytest.Commit, "-")
	assertOK(t, r)
	assert.Contains(t, line(t, r.stdout, "-"), "receipt=20260102T030405Z_s1")
	assertFail(t, run(t, []byte("{}"), nil, "-"), `receipt_id: missing field "receipt_id"`)
	assertFail(t, run(t, []byte{}, nil, "-"), "file is empty")
	assertUsage(t, run(t, good, nil, "-", "-"), "more than once")
}

// report mirrors the documented --json shape.
type report struct {
	Tool     string `json:"tool"`
	Version  string `json:"version"`
	OK       bool   `json:"ok"`
	Verified int    `json:"verified"`
	Failed   int    `json:"failed"`
	Receipts int    `json:"receipts"`
	Ledgers  int    `json:"ledgers"`
	Policy   struct {
		RequireOutcome *string `json:"require_outcome"`
		MaxBlocked     *int64  `json:"max_blocked"`
		MinReceipts    int     `json:"min_receipts"`
	} `json:"policy"`
	Items []struct {
		Path       string `json:"path"`
		Kind       string `json:"kind"`
		OK         bool   `json:"ok"`
		Verified   bool   `json:"verified"`
		ReceiptID  string `json:"receipt_id"`
		Outcome    string `json:"outcome"`
		Recomputed string `json:"recomputed_outcome"`
		Entries    int64  `json:"entries"`
		Allowed    int64  `json:"allowed"`
		Blocked    int64  `json:"blocked"`
		Commit     string `json:"commit"`
		Repository string `json:"repository"`
		Jail       string `json:"jail"`
		Problems   []struct {
			Where   string `json:"where"`
			Message string `json:"message"`
		} `json:"problems"`
	} `json:"items"`
	Note string `json:"note"`
}

func TestJSON(t *testing.T) {
	good := receipt(t, verifytest.Spec{})
	forged := receipt(t, verifytest.Spec{Records: failingStep(), Outcome: evidence.OutcomePass})
	r := run(t, nil, nil, "--json", "--require-outcome", "GOVERNED_PASS", good, forged)
	assert.Equal(t, 1, r.code)
	var rep report
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	require.NoError(t, dec.Decode(&rep), r.stdout)
	assert.False(t, dec.More(), "stdout holds one document")
	assert.Equal(t, "deponent-verify", rep.Tool)
	assert.Equal(t, version.Version, rep.Version)
	assert.False(t, rep.OK)
	assert.Equal(t, 1, rep.Verified)
	assert.Equal(t, 1, rep.Failed)
	assert.Equal(t, 2, rep.Receipts)
	require.NotNil(t, rep.Policy.RequireOutcome)
	assert.Equal(t, "GOVERNED_PASS", *rep.Policy.RequireOutcome)
	assert.Nil(t, rep.Policy.MaxBlocked)
	assert.Contains(t, rep.Note, "not authorship")
	require.Len(t, rep.Items, 2)
	ok, bad := rep.Items[0], rep.Items[1]
	assert.Equal(t, good, ok.Path)
	assert.True(t, ok.OK && ok.Verified)
	assert.Equal(t, "receipt", ok.Kind)
	assert.Equal(t, "GOVERNED_PASS", ok.Recomputed)
	e, a, b := verifytest.Tally(verifytest.Good(verifytest.Jail))
	assert.Equal(t, []int64{int64(e), int64(a), int64(b)}, []int64{ok.Entries, ok.Allowed, ok.Blocked})
	assert.Equal(t, verifytest.Commit, ok.Commit)
	assert.Equal(t, "bwrap", ok.Jail)
	assert.False(t, bad.OK)
	assert.True(t, bad.Verified, "the chain and signature recompute; the summary lies")
	require.NotEmpty(t, bad.Problems)
	assert.Equal(t, "outcome", bad.Problems[0].Where)
	assert.Contains(t, bad.Problems[0].Message, "the chain recomputes to GOVERNED_FAIL")
}

func TestGitHubActions(t *testing.T) {
	dir := t.TempDir()
	good := verifytest.WriteFile(t, filepath.Join(dir, "good.json"), verifytest.Build(t, verifytest.Spec{}))
	hostile := filepath.Join(dir, "100%\nFAKE::error.json") // a name that tries to break out
	require.NoError(t, os.WriteFile(hostile, []byte("{"), 0o644))
	summary := filepath.Join(t.TempDir(), "summary.md")
	env := []string{"GITHUB_ACTIONS=true", "GITHUB_STEP_SUMMARY=" + summary}

	r := run(t, nil, env, dir)
	assert.Equal(t, 1, r.code)
	var annotations []string
	for _, l := range strings.Split(r.stdout, "\n") {
		if strings.HasPrefix(l, "::") {
			annotations = append(annotations, l)
		}
	}
	require.Len(t, annotations, 1, r.stdout)
	assert.Equal(t, "::error title=deponent-verify::"+filepath.Join(dir, "100%25%0AFAKE::error.json")+": line 1, column 2 (byte 1): not valid JSON: expected a string key in object, found end of input", annotations[0])
	// The text line keeps the name on one line.
	assert.Contains(t, r.stdout, `FAIL  "`+filepath.Join(dir, `100%\nFAKE::error.json`)+`"`)

	md, err := os.ReadFile(summary)
	require.NoError(t, err)
	s := string(md)
	assert.Contains(t, s, "deponent-verify: 2 verified, 1 failed")
	assert.Contains(t, s, "| Result | Path | Kind | Receipt | Outcome | Entries | Allowed | Blocked | Reason |")
	assert.Contains(t, s, "| ❌ FAIL | ")
	assert.Contains(t, s, `100\%\\nFAKE\:\:error\.json`)
	e, a, b := verifytest.Tally(verifytest.Good(verifytest.Jail))
	assert.Contains(t, s, fmt.Sprintf("| ✅ OK | %s | receipt | 20260102T030405Z\\_s1 | GOVERNED\\_PASS\\(recomputed\\) | %d | %d | %d |", strings.NewReplacer("_", `\_`, ".", `\.`, "-", `\-`).Replace(good), e, a, b))
	assert.Less(t, strings.Index(s, "❌ FAIL"), strings.Index(s, "✅ OK"), "failures first")
	assert.Contains(t, s, "not signed")

	// With --json the annotations go to stderr: stdout stays one document.
	r = run(t, nil, env, "--json", dir)
	assert.Equal(t, 1, r.code)
	var rep report
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rep))
	assert.Contains(t, r.stderr, "::error title=deponent-verify::")

	// Outside Actions: no annotations, no summary.
	require.NoError(t, os.Remove(summary))
	r = run(t, nil, []string{"GITHUB_STEP_SUMMARY=" + summary}, dir)
	assert.NotContains(t, r.stdout, "::error title=")
	assert.NoFileExists(t, summary)
}

func TestUsage(t *testing.T) {
	good := receipt(t, verifytest.Spec{})
	assertUsage(t, run(t, nil, nil), "no PATH given")
	assertUsage(t, run(t, nil, nil, "--frobnicate", good), "flag provided but not defined")
	assertUsage(t, run(t, nil, nil, "--max-blocked", "-1", good), "must be 0 or more")
	assertUsage(t, run(t, nil, nil, "--max-blocked", "many", good), "not an integer")
	assertUsage(t, run(t, nil, nil, "--expect-commit", "not-hex-at-all", good), "not a hexadecimal commit SHA")
	assertUsage(t, run(t, nil, nil, "--expect-repo", "just-a-name", good), "want OWNER/NAME")
	assertUsage(t, run(t, nil, nil, "--expect-repo", "", good), "empty value")
	assertUsage(t, run(t, nil, nil, "--min-receipts", "-1", good), "must be 0 or more")
	assertUsage(t, run(t, nil, nil, "--require-outcome"), "flag needs an argument")

	r := run(t, nil, nil, "--help")
	assert.Equal(t, 0, r.code)
	assert.Contains(t, r.stdout, "Usage: deponent-verify [flags] PATH...")
	assert.Equal(t, 0, run(t, nil, nil, "-h").code)
	r = run(t, nil, nil, "--version")
	assert.Equal(t, 0, r.code)
	assert.Equal(t, "deponent-verify "+version.Version+"\n", r.stdout)

	// Flags may follow the PATHs; "--" ends them.
	assertOK(t, run(t, nil, nil, good, "--expect-commit", verifytest.Commit))
	assertFail(t, run(t, nil, nil, "--", "--expect-commit"), "cannot read: no such file or directory")
	// A missing PATH is evidence missing, not a usage error.
	assertFail(t, run(t, nil, nil, filepath.Join(t.TempDir(), "absent.json")), "cannot read")
	assertFail(t, run(t, nil, nil, filepath.Join(t.TempDir(), "notes.txt")), "cannot read")
}

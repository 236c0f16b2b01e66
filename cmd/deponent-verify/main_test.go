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
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/deponent-dev/deponent-action/internal/version"
	"github.com/deponent-dev/deponent-action/pkg/canon"
	"github.com/deponent-dev/deponent-action/pkg/evidence"
	"github.com/deponent-dev/deponent-action/pkg/verify"
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

// foreign are the relaxations that make sense for receipts and ledgers
// the Python reference wrote: they carry no governance object, so nothing
// records the run's configuration and no outcome, canary or jail
// requirement can be recomputed. What is compared with the reference is
// the chains and the content hashes: exactly what these flags leave on.
var foreign = []string{"--allow-fail", "--allow-no-canaries", "--allow-unjailed"}

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
			args := slices.Clone(foreign)
			if v.Kind == "ledger" {
				args = append(args, "--min-receipts", "0") // a ledger is no receipt
			}
			r := run(t, nil, nil, append(args, p)...)
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
	// is stored, not recomputed, and the output says so. Strict, a stored
	// outcome does not pass; accepted on request, a stored pass does and a
	// stored failure does not.
	pass, fail := filepath.Join(dir, "receipts", "valid-0.json"), filepath.Join(dir, "receipts", "valid-1.json")
	r := run(t, nil, nil, append(slices.Clone(foreign), pass)...)
	assert.Contains(t, r.stdout, "outcome=GOVERNED_PASS(stored)")
	assert.Contains(t, r.stdout, "not signed")
	assertFail(t, run(t, nil, nil, pass), "outcome GOVERNED_PASS is stored, not recomputed", "--allow-stored-outcome")
	stored := []string{"--allow-stored-outcome", "--allow-no-canaries", "--allow-unjailed"}
	assertOK(t, run(t, nil, nil, append(slices.Clone(stored), pass)...))
	assertFail(t, run(t, nil, nil, append(slices.Clone(stored), fail)...), "stored outcome GOVERNED_FAIL; GOVERNED_PASS required")
}

// TestReferenceStoreFromTheCommand: a store written by the reference's own
// persist() (pkg/verify/testdata/REFERENCE-STORE.md) verifies as a
// directory, as its producer directory and as a zip, with the relaxations
// its receipts need (they carry no governance object), and not without.
func TestReferenceStoreFromTheCommand(t *testing.T) {
	store := filepath.Join("..", "..", "pkg", "verify", "testdata", "reference-store")
	z := writeZip(t, "reference.zip", verifytest.ZipDir(t, store))
	flags := []string{"--allow-stored-outcome", "--allow-no-canaries", "--allow-unjailed"}
	for _, p := range []string{store, filepath.Join(store, "deponent"), z} {
		r := run(t, nil, nil, append(slices.Clone(flags), p)...)
		assertOK(t, r)
		assert.Contains(t, r.stdout, "3 verified, 0 failed (3 receipts, 0 ledgers)")
		assert.Contains(t, r.stdout, "latest receipt=20261130T132049Z_sample0002")
		assert.Contains(t, r.stdout, "index receipts=3")
		assertFail(t, run(t, nil, nil, p), "outcome=GOVERNED_PASS(stored)", "--allow-stored-outcome")
	}
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
	assert.Contains(t, r.stdout, "3 verified, 0 failed (3 receipts, 0 ledgers)")

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
	assert.Contains(t, r.stdout, "2 verified, 0 failed (1 receipt, 1 ledger)")
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
	assertFail(t, run(t, nil, nil, "--require-outcome", "GOVERNED_PASS", unfinished), "holds no receipt")
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
	assertOK(t, run(t, nil, nil, good))
	assertOK(t, run(t, nil, nil, "--require-outcome", "GOVERNED_PASS", good))
	assertFail(t, run(t, nil, nil, "--require-outcome", "GOVERNED_DRY_RUN", good), "outcome: the chain recomputes to GOVERNED_PASS; GOVERNED_DRY_RUN required")

	// An honest failed run verifies, and fails the default requirement
	// unless --allow-fail.
	failed := receipt(t, verifytest.Spec{Records: failingStep()})
	entry := len(failingStep()) - 1
	e, a, b := verifytest.Tally(failingStep())
	assertFail(t, run(t, nil, nil, failed), fmt.Sprintf("outcome: the chain recomputes to GOVERNED_FAIL; GOVERNED_PASS required: verify command (entry %d) exited 2 (--allow-fail)", entry),
		fmt.Sprintf("entries=%d allowed=%d blocked=%d", e, a, b))
	r := run(t, nil, nil, "--allow-fail", failed)
	assertOK(t, r)
	assert.Contains(t, r.stdout, "outcome=GOVERNED_FAIL(recomputed)")
	assert.Contains(t, r.stdout, "verify=failed canaries=6/6 jailed=yes")
	assert.Contains(t, r.stdout, "relaxed: --allow-fail: any recomputed outcome passes")
	assertOK(t, run(t, nil, nil, "--require-outcome", "GOVERNED_FAIL", failed))

	// A signed lie: the stored outcome says pass, the chain says fail.
	// Never OK, whatever is relaxed.
	forged := receipt(t, verifytest.Spec{Records: failingStep(), Outcome: evidence.OutcomePass})
	msg := fmt.Sprintf("stored outcome GOVERNED_PASS but the chain recomputes to GOVERNED_FAIL: verify command (entry %d) exited 2", entry)
	assertFail(t, run(t, nil, nil, forged), msg)
	assertFail(t, run(t, nil, nil, "--chain-only", forged), msg)
	// Stored fail, chain pass: the other way round, as untrue.
	under := receipt(t, verifytest.Spec{Outcome: evidence.OutcomeFail})
	assertFail(t, run(t, nil, nil, "--allow-fail", under), "stored outcome GOVERNED_FAIL but the chain recomputes to GOVERNED_PASS")

	// No verify command: GOVERNED_UNVERIFIED, a pass only when asked.
	noVerify := receipt(t, verifytest.Spec{Records: verifytest.Unverified(verifytest.Jail), Governance: &evidence.Governance{Canaries: true, JailCanaries: true, Jail: verifytest.Jail}})
	assertFail(t, run(t, nil, nil, noVerify), "the chain recomputes to GOVERNED_UNVERIFIED; GOVERNED_PASS required: no verify command was configured", "--allow-no-verify-command")
	r = run(t, nil, nil, "--allow-no-verify-command", noVerify)
	assertOK(t, r)
	assert.Contains(t, r.stdout, "verify=none")
	assert.Contains(t, r.stdout, "relaxed: --allow-no-verify-command: a run configured without a verify command (GOVERNED_UNVERIFIED) passes")

	// No governance object (the reference's receipts): stored, not
	// recomputed: refused unless --allow-stored-outcome, and said so.
	plain := receipt(t, verifytest.Spec{NoGovernance: true, Records: failingStep(), Outcome: evidence.OutcomePass})
	assertFail(t, run(t, nil, nil, plain), "outcome: outcome GOVERNED_PASS is stored, not recomputed", "(--allow-stored-outcome accepts a stored outcome)")
	assertFail(t, run(t, nil, nil, "--require-outcome", "GOVERNED_PASS", plain), "is stored, not recomputed")
	r = run(t, nil, nil, "--allow-stored-outcome", "--allow-no-canaries", "--allow-unjailed", "--json", plain)
	assert.Equal(t, 0, r.code, r.stdout)
	assert.Contains(t, r.stdout, "is stored, not recomputed: the receipt carries no governance object")
	assert.Contains(t, r.stdout, `"outcome_source": "stored"`)
	// Each requirement that needs the configuration says so on its own.
	r = run(t, nil, nil, "--allow-stored-outcome", "--json", plain)
	assert.Contains(t, problems(t, r), "nothing shows the canaries ran and held (--allow-no-canaries)")
	assert.Contains(t, problems(t, r), "nothing shows its commands ran in a real jail (--allow-unjailed)")

	// Unknown values are usage errors, not a requirement nothing meets.
	for _, bad := range []string{"PASS", "governed_pass", "GOVERNED_PASS ", ""} {
		assertUsage(t, run(t, nil, nil, "--require-outcome", bad, good), "--require-outcome")
	}
}

// TestForgeriesFailByDefault: receipts rewritten after the fact and
// re-signed (anyone can: the "signature" is a content hash) so that a
// reader trusting a stored field would pass them. Each fails with no flag,
// and with the release manager's flags of old.
func TestForgeriesFailByDefault(t *testing.T) {
	good := verifytest.Good(verifytest.Jail)
	build := len(good) - 2 // the agent's command
	with := func(i int, extra ...canon.Member) []evidence.Record {
		rs := slices.Clone(good)
		rs[i].Extra = append(slices.Clone(rs[i].Extra), extra...)
		return rs
	}
	blocked := slices.Clone(good)
	blocked[build] = verifytest.Step("builder", "run_cmd", evidence.VerdictBlock)
	exit1 := slices.Clone(good)
	exit1[build] = verifytest.Ran("builder", "none", 1, canon.M(evidence.FieldDryRun, canon.BoolValue(true)))
	trailing := slices.Clone(good)
	trailing[build].Tool = "run_cmd "
	editGov := func(f func(canon.Value) canon.Value) func(canon.Value) canon.Value { return f }
	// A forger's governance edit: the stored summary as the chain counts it
	// (Build recounts), with no reason to fail, and a stored pass.
	noReasons := editGov(func(g canon.Value) canon.Value { return g.With("reasons", canon.Arr()) })
	// The verify entry ran another command than the configured one: the
	// "verify=passed" would be the stored verify_command's word.
	otherVerify := slices.Clone(good)
	otherVerify[len(good)-1].Params = map[string]any{"cmd": "true"}
	// The agent broke the build after the verify command passed.
	afterVerify := append(slices.Clone(good), verifytest.Step("builder", "write_file", evidence.VerdictAllow))
	// A jail canary "proven" by a file tool, which records no exit code.
	fileCanary := slices.Clone(good)
	for i, r := range fileCanary {
		if slices.ContainsFunc(r.Extra, func(m canon.Member) bool { s, _ := m.Value.AsString(); return s == evidence.CanaryJailNetwork }) {
			fileCanary[i] = verifytest.Step(evidence.AgentCanary, "read_file", evidence.VerdictAllow, canon.M(evidence.FieldCanary, canon.Str(evidence.CanaryJailNetwork)))
		}
	}
	cases := []struct {
		name string
		spec verifytest.Spec
		msg  string
	}{
		{"governance schema changed", verifytest.Spec{Records: blocked, Outcome: evidence.OutcomePass,
			EditGovernance: editGov(func(g canon.Value) canon.Value { return g.With("schema", canon.Str("deponent-governance/v9")) })},
			"governance: governance.schema is \"deponent-governance/v9\""},
		{"governance schema of the old version", verifytest.Spec{Records: blocked, Outcome: evidence.OutcomePass,
			EditGovernance: editGov(func(g canon.Value) canon.Value { return g.With("schema", canon.Str("deponent-governance/v1")) })},
			"this verifier reads \"deponent-governance/v2\" only"},
		{"governance deleted", verifytest.Spec{Records: blocked, Outcome: evidence.OutcomePass, NoGovernance: true},
			"outcome GOVERNED_PASS is stored, not recomputed"},
		{"governance without a schema", verifytest.Spec{Records: blocked, Outcome: evidence.OutcomePass,
			EditGovernance: editGov(func(g canon.Value) canon.Value { return g.Without("schema") })},
			"outcome GOVERNED_PASS is stored, not recomputed"},
		{"killed true", verifytest.Spec{Records: with(build, canon.M(evidence.FieldKilled, canon.BoolValue(true))), Outcome: evidence.OutcomePass},
			`field "killed" is a boolean, want a string`},
		{"killed {}", verifytest.Spec{Records: with(build, canon.M(evidence.FieldKilled, canon.Obj())), Outcome: evidence.OutcomePass},
			`field "killed" is a object, want a string`},
		{"killed []", verifytest.Spec{Records: with(build, canon.M(evidence.FieldKilled, canon.Arr())), Outcome: evidence.OutcomePass},
			`field "killed" is a array, want a string`},
		{"a dry run entry hides exit 1 and jail none", verifytest.Spec{Records: exit1, Outcome: evidence.OutcomePass},
			"claims dry_run in a run that was not a dry run"},
		{"unjailed \"true\"", verifytest.Spec{Records: with(build, canon.M(evidence.FieldUnjailed, canon.Str("true"))), Outcome: evidence.OutcomePass},
			`field "unjailed" is a string, want the boolean true`},
		{"unjailed 1", verifytest.Spec{Records: with(build, canon.M(evidence.FieldUnjailed, canon.Int(1))), Outcome: evidence.OutcomePass},
			`field "unjailed" is a number, want the boolean true`},
		{"tool \"run_cmd \"", verifytest.Spec{Records: trailing, Outcome: evidence.OutcomePass},
			`allowed tool "run_cmd ", which nothing executes`},
		{"verify entry ran another command", verifytest.Spec{Records: otherVerify, Outcome: evidence.OutcomePass,
			EditGovernance: noReasons},
			`the harness ran "true", not the run's verify command "go test ./..."`},
		{"agent acted after the verify command", verifytest.Spec{Records: afterVerify, Outcome: evidence.OutcomePass,
			EditGovernance: noReasons},
			"(builder write_file) was recorded after the verify command"},
		{"jail canary proven by a file tool", verifytest.Spec{Records: fileCanary, Outcome: evidence.OutcomePass,
			EditGovernance: noReasons},
			`entry 5: canary "jail-network" recorded tool "read_file", which is not the action that canary attempts`},
		{"reasons rewritten", verifytest.Spec{Records: blocked,
			EditGovernance: editGov(func(g canon.Value) canon.Value { return g.With("reasons", canon.Arr(canon.Str("all good"))) })},
			"governance.reasons (1) are not the 1 the chain recomputes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := receipt(t, c.spec)
			r := run(t, nil, nil, "--json", p)
			require.Equal(t, 1, r.code, r.stdout)
			assert.Contains(t, problems(t, r), c.msg)
			assertFail(t, run(t, nil, nil, p), p)
			assertFail(t, run(t, nil, nil, "--require-outcome", "GOVERNED_PASS", "--require-jailed", p), p)
		})
	}
}

// TestChainStartsAtGenesis: a governed receipt holding the tail of a
// chain (its first entries dropped, the genesis set to the last dropped
// entry's hash, no entry re-hashed) fails, even with the canaries relaxed.
func TestChainStartsAtGenesis(t *testing.T) {
	rs := verifytest.GoodWith(verifytest.Jail, verifytest.Step("builder", "run_cmd", evidence.VerdictBlock))
	// The blocked step first, then the canaries: the tail drops the block.
	rs = append([]evidence.Record{rs[len(rs)-2]}, slices.Delete(rs, len(rs)-2, len(rs)-1)...)
	full := verifytest.Build(t, verifytest.Spec{Records: rs})
	require.Equal(t, evidence.OutcomeFail, full.Outcome, "control: the full chain fails on its block")
	cut := len(verifytest.Canaries(verifytest.Jail)) + 1
	genesis := evidence.EntryString(full.Entries[cut-1], evidence.FieldEntryHash)
	g := evidence.Governance{VerifyCommand: "go test ./...", Jail: verifytest.Jail, PolicySHA256: verifytest.PolicySH}
	tail := full.Entries[cut:]
	a := evidence.Assess(tail, g)
	require.Equal(t, evidence.OutcomePass, a.Outcome, a.Reasons)
	forged, err := evidence.BuildReceipt(evidence.ReceiptInput{Producer: "deponent", SessionID: "s1", Outcome: a.Outcome,
		Genesis: genesis, Entries: tail, Provenance: full.Provenance,
		Extra: []canon.Member{canon.M(evidence.RFieldGovernance, g.Value(a))}, Now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)})
	require.NoError(t, err)
	p := verifytest.WriteFile(t, filepath.Join(t.TempDir(), "r.json"), forged)
	assertFail(t, run(t, nil, nil, "--allow-no-canaries", p), "chain.genesis", `starts at genesis "`+genesis+`", not "GENESIS"`)
	// Control: the same tail re-chained from GENESIS passes the same flags.
	assertOK(t, run(t, nil, nil, "--allow-no-canaries", receipt(t, verifytest.Spec{Records: rs[cut:], Governance: &g})))
}

// TestCanaries: a run must have enabled, run and held the canaries, the
// jail's own when it ran jailed.
func TestCanaries(t *testing.T) {
	noCanaries := receipt(t, verifytest.Spec{Records: verifytest.Good(verifytest.Jail)[6:],
		Governance: &evidence.Governance{VerifyCommand: "go test ./...", Jail: verifytest.Jail}})
	assertFail(t, run(t, nil, nil, noCanaries), "canaries: the run did not enable the canaries: nothing shows that the gate held (--allow-no-canaries)")
	r := run(t, nil, nil, "--allow-no-canaries", noCanaries)
	assertOK(t, r)
	assert.Contains(t, r.stdout, "relaxed: --allow-no-canaries")

	gateOnly := receipt(t, verifytest.Spec{Records: slices.Concat(verifytest.Good(verifytest.Jail)[:4], verifytest.Good(verifytest.Jail)[6:]),
		Governance: &evidence.Governance{Canaries: true, VerifyCommand: "go test ./...", Jail: verifytest.Jail}})
	assertFail(t, run(t, nil, nil, gateOnly), "the run was jailed (bwrap) but did not run the jail's own canaries", "(--allow-no-jail-canaries)")
	assertOK(t, run(t, nil, nil, "--allow-no-jail-canaries", gateOnly))

	// A canary that did not hold fails the outcome and the canary
	// requirement, each on its own.
	leaked := slices.Clone(verifytest.Good(verifytest.Jail))
	leaked[0].Verdict = evidence.VerdictAllow
	p := receipt(t, verifytest.Spec{Records: leaked})
	r = run(t, nil, nil, "--allow-fail", p)
	assertFail(t, r, `canaries: not every canary ran and held: canary "destructive" (entry 0) was not blocked (--allow-no-canaries)`)
}

func TestRequireJailed(t *testing.T) {
	next := fmt.Sprintf("entry %d", len(verifytest.Good("bwrap"))) // the entry appended to a good run
	good := receipt(t, verifytest.Spec{})
	assertOK(t, run(t, nil, nil, good))
	assertOK(t, run(t, nil, nil, "--require-jailed", good))
	seatbelt := receipt(t, verifytest.Spec{Jail: "seatbelt"})
	assertOK(t, run(t, nil, nil, seatbelt))

	cases := []struct {
		name string
		spec verifytest.Spec
		msg  string
	}{
		{"unjailed entry", verifytest.Spec{Records: append(verifytest.Good("bwrap"),
			verifytest.Ran("builder", "bwrap", 0, canon.M(evidence.FieldUnjailed, canon.BoolValue(true))))},
			next + " is marked unjailed: it ran without a jail"},
		{"command without a jail field", verifytest.Spec{Records: append(verifytest.Good("bwrap"), verifytest.Ran("builder", "", 0))},
			next + ": an executed command records no jail"},
		{"command in jail none", verifytest.Spec{Records: append(verifytest.Good("bwrap"), verifytest.Ran("builder", "none", 0))},
			next + ` ran under jail "none", not the run's "bwrap"`},
		{"governance opted in to unjailed", verifytest.Spec{Governance: &evidence.Governance{Canaries: true, JailCanaries: true, VerifyCommand: "go test ./...", Jail: "bwrap", Unjailed: true}},
			"the run allowed commands to run unjailed"},
		{"records no jail at all", verifytest.Spec{Jail: "-", NoGovernance: true, Records: []evidence.Record{verifytest.Step("builder", "read_file", evidence.VerdictAllow)}},
			"the receipt records no run configuration: nothing shows its commands ran in a real jail"},
		{"jail none", verifytest.Spec{Jail: "none"}, `the run recorded jail "none", not a real one`},
		{"provenance says another jail", verifytest.Spec{Provenance: []canon.Member{canon.M("jail", canon.Str("seatbelt"))}}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.msg == "" {
				return
			}
			p := receipt(t, c.spec)
			// --allow-fail, so that the jail problem is the one shown (the
			// outcome of most of these also fails).
			r := run(t, nil, nil, "--allow-fail", "--allow-stored-outcome", "--allow-no-canaries", p)
			assertFail(t, r, "jail: ", c.msg, "(--allow-unjailed)")
			r = run(t, nil, nil, "--allow-fail", "--allow-stored-outcome", "--allow-no-canaries", "--allow-unjailed", p)
			assert.NotContains(t, r.stdout, "(--allow-unjailed)", "--allow-unjailed relaxes it")
			assert.Contains(t, r.stdout, "relaxed: --allow-unjailed: commands may have run outside a real jail")
		})
	}
	// The receipt contradicting itself on its jail is never OK.
	two := receipt(t, verifytest.Spec{Jail: "-", Governance: &evidence.Governance{Canaries: true, VerifyCommand: "go test ./...", Jail: "bwrap"},
		Provenance: []canon.Member{canon.M("jail", canon.Str("none"))}})
	assertFail(t, run(t, nil, nil, "--chain-only", two), `provenance.jail: "none", but the governance object records "bwrap"`)
	// The reference's receipts record no jail.
	assertFail(t, run(t, nil, nil, "--allow-stored-outcome", "--allow-no-canaries", filepath.Join("..", "..", "pkg", "evidence", "testdata", "interop", "receipts", "valid-5.json")), "--allow-unjailed")
	assertUsage(t, run(t, nil, nil, "--require-jailed", "--allow-unjailed", good), "contradict")
}

func TestMaxBlocked(t *testing.T) {
	// The good run's blocked entries are canaries: blocked by design.
	good := receipt(t, verifytest.Spec{})
	assertOK(t, run(t, nil, nil, "--max-blocked", "0", good))

	onBlock := &evidence.Governance{Canaries: true, JailCanaries: true, VerifyCommand: "go test ./...", Jail: "bwrap", OnBlockContinue: true}
	blocked := receipt(t, verifytest.Spec{Governance: onBlock, Records: verifytest.GoodWith("bwrap",
		verifytest.Step("builder", "run_cmd", evidence.VerdictBlock), verifytest.Step("builder", "read_file", evidence.VerdictBlock))})
	assertOK(t, run(t, nil, nil, "--max-blocked", "2", blocked))
	_, _, canaries := verifytest.Tally(verifytest.Good("bwrap"))
	assertFail(t, run(t, nil, nil, "--max-blocked", "1", blocked), "chain: 2 blocked entries, not counting canaries; --max-blocked 1", fmt.Sprintf("blocked=%d", canaries+2))
}

func TestExpectCommitRepoAndPolicy(t *testing.T) {
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
	assertFail(t, run(t, nil, nil, "--chain-only", "--expect-commit", verifytest.Commit, ledger), "a bare ledger records no outcome, no run configuration and no provenance, so it cannot show --expect-commit")

	// The policy: pinned by its hash, in the governance object and the
	// provenance alike.
	assertOK(t, run(t, nil, nil, "--expect-policy-sha256", strings.ToUpper(verifytest.PolicySH), good))
	otherPolicy := strings.Repeat("0", 64)
	assertFail(t, run(t, nil, nil, "--expect-policy-sha256", otherPolicy, good), "governance.policy_sha256: the run's policy hashes to", "not "+otherPolicy)
	reference := filepath.Join("..", "..", "pkg", "evidence", "testdata", "interop", "receipts", "valid-0.json")
	assertFail(t, run(t, nil, nil, append(slices.Clone(foreign), "--expect-policy-sha256", otherPolicy, reference)...), "provenance.policy_sha256: missing")
	assertUsage(t, run(t, nil, nil, "--expect-policy-sha256", "abc", good), "64-hex-digit")
}

// TestBoundInsideActions: with GITHUB_SHA and GITHUB_REPOSITORY set, every
// receipt must be of that commit and repository, unless told otherwise.
func TestBoundInsideActions(t *testing.T) {
	good := receipt(t, verifytest.Spec{})
	env := []string{"GITHUB_SHA=" + verifytest.Commit, "GITHUB_REPOSITORY=" + verifytest.Repo}
	assertOK(t, run(t, nil, env, good))
	other := []string{"GITHUB_SHA=" + strings.Repeat("e", 40), "GITHUB_REPOSITORY=" + verifytest.Repo}
	assertFail(t, run(t, nil, other, good), "provenance.commit: the receipt is for commit", "($GITHUB_SHA)")
	assertFail(t, run(t, nil, []string{"GITHUB_REPOSITORY=o/other"}, good), "provenance.repository", "($GITHUB_REPOSITORY)")
	// An explicit expectation wins; --allow-any-commit unbinds.
	assertOK(t, run(t, nil, other, "--expect-commit", verifytest.Commit, good))
	r := run(t, nil, other, "--allow-any-commit", good)
	assertOK(t, r)
	assert.Contains(t, r.stdout, "relaxed: --allow-any-commit: receipts of any commit pass")
	// A malformed variable is a usage error naming it.
	assertUsage(t, run(t, nil, []string{"GITHUB_SHA=abc"}, good), "$GITHUB_SHA \"abc\": not a full commit SHA")
	r = run(t, nil, env, "--json", good)
	assert.Contains(t, r.stdout, `"expect_commit_from": "GITHUB_SHA"`)
}

func TestMinReceipts(t *testing.T) {
	empty := t.TempDir()
	assertFail(t, run(t, nil, nil, empty), "holds no receipt: an empty artifact proves nothing")
	r := run(t, nil, nil, "--min-receipts", "0", empty)
	assertOK(t, r)
	assert.Contains(t, r.stdout, "relaxed: --min-receipts 0")

	root := t.TempDir()
	verifytest.Persist(t, root, verifytest.Spec{}, verifytest.Spec{SessionID: "s2"})
	assertOK(t, run(t, nil, nil, "--min-receipts", "2", root))
	assertFail(t, run(t, nil, nil, "--min-receipts", "3", root), "2 distinct receipts verified; at least 3 required")

	// One file is honoured: it holds one receipt.
	one := receipt(t, verifytest.Spec{})
	assertOK(t, run(t, nil, nil, "--min-receipts", "1", one))
	assertFail(t, run(t, nil, nil, "--min-receipts", "5", one), "1 distinct receipt verified; at least 5 required")
	// Three copies of one receipt are one receipt.
	dir := t.TempDir()
	for _, name := range []string{"a.json", "b.json", "c.json"} {
		verifytest.WriteFile(t, filepath.Join(dir, name), verifytest.Build(t, verifytest.Spec{}))
	}
	r = run(t, nil, nil, "--min-receipts", "3", dir)
	assertFail(t, r, "1 distinct receipt verified; at least 3 required")
	assert.Contains(t, r.stdout, "(3 receipts, 1 distinct, 0 ledgers)")
	assert.Contains(t, line(t, r.stdout, filepath.Join(dir, "b.json")), "OK")
	r = run(t, nil, nil, "--json", dir)
	assert.Contains(t, r.stdout, `"duplicate_of": "`+filepath.Join(dir, "a.json")+`"`)
	// Two receipts claiming one id with different content both fail.
	clash := t.TempDir()
	verifytest.WriteFile(t, filepath.Join(clash, "a.json"), verifytest.Build(t, verifytest.Spec{}))
	verifytest.WriteFile(t, filepath.Join(clash, "b.json"), verifytest.Build(t, verifytest.Spec{Repo: "o/other"}))
	r = run(t, nil, nil, "--allow-any-commit", clash)
	assertFail(t, r, filepath.Join(clash, "a.json"), "two testimonies claim one id")
	assertFail(t, r, filepath.Join(clash, "b.json"), "two testimonies claim one id")

	// One run's chain re-signed as a second receipt (another id and
	// session) is not a second run: both fail, and --min-receipts 2 is
	// not met by it. Its replay for another commit fails the same way.
	orig := verifytest.Build(t, verifytest.Spec{})
	for _, c := range []struct {
		name string
		prov canon.Value
	}{{"another session", orig.Provenance}, {"another commit", orig.Provenance.With(evidence.ProvCommit, canon.Str(strings.Repeat("ab", 20)))}} {
		t.Run(c.name, func(t *testing.T) {
			gov, _ := orig.Body.Get(evidence.RFieldGovernance)
			replay, err := evidence.BuildReceipt(evidence.ReceiptInput{Producer: orig.Producer, SessionID: "s2", Model: orig.Model, Task: orig.Task,
				Outcome: orig.Outcome, Entries: orig.Entries, Provenance: c.prov,
				Extra: []canon.Member{canon.M(evidence.RFieldGovernance, gov)}, Now: time.Date(2026, 2, 3, 4, 5, 6, 0, time.UTC)})
			require.NoError(t, err)
			require.NotEqual(t, orig.ID, replay.ID)
			two := t.TempDir()
			a := verifytest.WriteFile(t, filepath.Join(two, "a.json"), orig)
			b := verifytest.WriteFile(t, filepath.Join(two, "b.json"), replay)
			assertOK(t, run(t, nil, nil, "--allow-any-commit", a))
			assertOK(t, run(t, nil, nil, "--allow-any-commit", b))
			r := run(t, nil, nil, "--allow-any-commit", "--min-receipts", "2", two)
			assertFail(t, r, a, "chain: receipt "+orig.ID+" has the same chain", "one run's testimony claimed twice")
			assertFail(t, r, b, "chain: receipt "+replay.ID+" has the same chain")
		})
	}

	// An expectation that checked nothing is a failure.
	assertFail(t, run(t, nil, nil, "--min-receipts", "0", "--expect-commit", verifytest.Commit, empty), "--expect-commit", "no receipt was verified")
}

func TestLedgerAnchors(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "ledger.jsonl")
	head := verifytest.Ledger(t, p, 100, nil)
	// Alone, a bare ledger cannot meet a receipt's requirements.
	assertFail(t, run(t, nil, nil, p), "a bare ledger records no outcome, no run configuration and no provenance", "--chain-only")
	r := run(t, nil, nil, "--chain-only", p)
	assertOK(t, r)
	assert.Contains(t, line(t, r.stdout, p), "ledger entries=100 allowed=100 blocked=0 head="+head)
	assert.Contains(t, r.stdout, "cannot reveal that its last entries were dropped")
	assert.Contains(t, r.stdout, "relaxed: --chain-only")
	assertOK(t, run(t, nil, nil, "--chain-only", "--expect-len", "100", "--expect-head", strings.ToUpper(head), p))

	// Drop the last entry: still a valid chain, caught only by an anchor.
	data, err := os.ReadFile(p)
	require.NoError(t, err)
	lines := bytes.SplitAfter(data, []byte("\n"))
	cut := filepath.Join(dir, "cut.jsonl")
	require.NoError(t, os.WriteFile(cut, bytes.Join(lines[:99], nil), 0o644))
	assertOK(t, run(t, nil, nil, "--chain-only", cut))
	assertFail(t, run(t, nil, nil, "--chain-only", "--expect-len", "100", cut), "chain: length-mismatch: 99 entries, expected 100")
	assertFail(t, run(t, nil, nil, "--chain-only", "--expect-head", head, cut), "chain: head-mismatch")

	// An empty ledger is a consistent chain that proves nothing: it fails
	// unless emptiness is what the caller expects.
	empty := filepath.Join(dir, "empty.jsonl")
	require.NoError(t, os.WriteFile(empty, nil, 0o644))
	assertFail(t, run(t, nil, nil, "--chain-only", empty), "empty ledger: no entries to verify")
	assertOK(t, run(t, nil, nil, "--chain-only", "--expect-len", "0", empty))

	// A ledger that breaks part-way shows what verified before the break.
	broken := filepath.Join(dir, "broken.jsonl")
	require.NoError(t, os.WriteFile(broken, bytes.Join(slices.Concat(lines[:40], lines[41:60]), nil), 0o644))
	r = run(t, nil, nil, "--chain-only", broken)
	assertFail(t, r, "line 41 (entry 40): prev-hash-break", "entries=40 allowed=40 blocked=0 head=")
	assert.NotContains(t, line(t, r.stdout, broken), "head=GENESIS")

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
		assertFail(t, run(t, nil, nil, z), "holds no receipt")
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
	assert.Contains(t, r.stdout, "1 verified, 4 failed (1 receipt, 0 ledgers)")

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
		assertFail(t, run(t, nil, nil, root), index(dir), `line 2: signature "0`, "but the receipt", "says")
	})
	t.Run("LATEST names a receipt that does not exist", func(t *testing.T) {
		root, dir, _ := store(t, 1)
		require.NoError(t, os.WriteFile(latest(dir), []byte("20990101T000000Z_ghost\n"), 0o644))
		assertFail(t, run(t, nil, nil, root), latest(dir), "names 20990101T000000Z_ghost, which index.jsonl does not list")
	})
	t.Run("LATEST malformed", func(t *testing.T) {
		root, dir, _ := store(t, 1)
		for _, bad := range []string{"20260102T030405Z_s1\n\n", " 20260102T030405Z_s1", "20260102T030405Z_s1\r\n", ""} {
			require.NoError(t, os.WriteFile(latest(dir), []byte(bad), 0o644))
			assertFail(t, run(t, nil, nil, root), latest(dir), "want one receipt id (and at most a newline)")
		}
		// Without its newline, as the reference writes it: fine.
		require.NoError(t, os.WriteFile(latest(dir), []byte("20260102T030405Z_s1"), 0o644))
		assertOK(t, run(t, nil, nil, root))
	})
	t.Run("LATEST names an older receipt", func(t *testing.T) {
		root, dir, _ := store(t, 2)
		require.NoError(t, os.WriteFile(latest(dir), []byte("20260102T030405Z_s1\n"), 0o644))
		assertFail(t, run(t, nil, nil, root), latest(dir), "names 20260102T030405Z_s1, but the newest receipt index.jsonl lists (its last line) is 20260102T030406Z_s2")
	})
	t.Run("index line disagrees with its receipt", func(t *testing.T) {
		for _, c := range []struct{ from, to, msg string }{
			{`"model": "test-model"`, `"model": "other-model"`, `model "other-model", but the receipt`},
			{`"task": "build and test"`, `"task": "build and deploy"`, `task "build and deploy", but the receipt`},
			{`"outcome": "GOVERNED_PASS"`, `"outcome": "GOVERNED_FAIL"`, `outcome "GOVERNED_FAIL", but the receipt`},
			{`"ts": "2026-01-02T03:04:05+00:00"`, `"ts": "2026-01-02T03:04:09+00:00"`, `ts "2026-01-02T03:04:09+00:00", but the receipt`},
			{`"model": "test-model"`, `"model": 7`, `field "model" is a number, want a string`},
			{`"model": "test-model"`, `"modle": "test-model"`, `unknown field "modle"`},
			{`"ts": "2026-01-02T03:04:05+00:00", `, ``, `missing field "ts"`},
		} {
			root, dir, _ := store(t, 1)
			data, err := os.ReadFile(index(dir))
			require.NoError(t, err)
			require.Contains(t, string(data), c.from)
			require.NoError(t, os.WriteFile(index(dir), []byte(strings.Replace(string(data), c.from, c.to, 1)), 0o644))
			assertFail(t, run(t, nil, nil, root), index(dir), "line 1: "+c.msg)
		}
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
		assertFail(t, r, paths[0], "signature: content hash does not match")
		assertFail(t, r, "index.jsonl", "line 1: lists "+filepath.Base(paths[0])+", which does not verify")
		assertFail(t, r, "LATEST", "which does not verify")
		assert.Contains(t, r.stdout, "0 verified, 4 failed")
		assert.Contains(t, line(t, r.stdout, paths[0]), "outcome=GOVERNED_PASS(unverified)")
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
	assert.Contains(t, res.stdout, fmt.Sprintf("%d verified, 0 failed (%d receipts, 1 distinct, 0 ledgers)", n, n), "copies of one receipt are counted once")
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

// problems is every problem of a --json report, one a line.
func problems(t *testing.T, r result) string {
	t.Helper()
	var rep verify.Report
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rep), r.stdout)
	var b strings.Builder
	for _, it := range rep.Items {
		for _, p := range it.Problems {
			b.WriteString(p.String() + "\n")
		}
	}
	return b.String()
}

// docFields reads docs/verify-json.md: for each section heading, the
// fields its table documents, and which of them are optional.
func docFields(t *testing.T) map[string]map[string]bool {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "verify-json.md"))
	require.NoError(t, err)
	sections := map[string]map[string]bool{}
	var cur string
	row := regexp.MustCompile("^\\| `([a-z0-9_]+)` \\| ([^|]+) \\|(?: ([a-z]+) \\|)?")
	fields := false // in a table of fields (its header starts "| field |")
	for _, l := range strings.Split(string(data), "\n") {
		if h, ok := strings.CutPrefix(l, "## "); ok {
			cur = h
			continue
		}
		if h, ok := strings.CutPrefix(l, "### "); ok {
			cur = h
			continue
		}
		if !strings.HasPrefix(l, "|") {
			fields = false
			continue
		}
		if strings.HasPrefix(l, "| field |") {
			fields = true
			continue
		}
		m := row.FindStringSubmatch(l)
		if m == nil || cur == "" || !fields {
			continue
		}
		if sections[cur] == nil {
			sections[cur] = map[string]bool{}
		}
		optional := m[3] == "optional" || strings.Contains(m[2], "optional")
		sections[cur][m[1]] = optional
	}
	return sections
}

// jsonFields are a struct type's JSON fields, and whether each is
// omitted when empty.
func jsonFields(typ reflect.Type) map[string]bool {
	out := map[string]bool{}
	for i := range typ.NumField() {
		f := typ.Field(i)
		tag := f.Tag.Get("json")
		if !f.IsExported() || tag == "" || tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		out[name] = strings.Contains(opts, "omitempty")
	}
	return out
}

// TestJSONMatchesTheDocs: the fields docs/verify-json.md documents are the
// report's, each documented optional exactly when it may be left out;
// real reports hold no other key and every field not optional.
func TestJSONMatchesTheDocs(t *testing.T) {
	doc := docFields(t)
	types := map[string]reflect.Type{
		"Report": reflect.TypeFor[verify.Report](), "policy": reflect.TypeFor[verify.Policy](),
		"relaxed": reflect.TypeFor[verify.Relaxation](), "items": reflect.TypeFor[verify.Item](),
		"problems": reflect.TypeFor[verify.Problem](),
	}
	for section, typ := range types {
		require.Contains(t, doc, section, "docs/verify-json.md documents %s", section)
		assert.Equal(t, jsonFields(typ), doc[section], "docs/verify-json.md, section %s, against %s", section, typ)
	}

	// Reports with every kind of item, field and relaxation.
	dir := t.TempDir()
	verifytest.ActionRun(t, dir, verifytest.Spec{SessionID: "4242-1-build"})
	verifytest.WriteFile(t, filepath.Join(dir, "copy", "r.json"), verifytest.Build(t, verifytest.Spec{SessionID: "4242-1-build"}))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "notes.txt"), nil, 0o644))
	require.NoError(t, os.Symlink("nowhere", filepath.Join(dir, "link.json")))
	plain := receipt(t, verifytest.Spec{NoGovernance: true})
	ledger := filepath.Join(t.TempDir(), "l.jsonl")
	verifytest.Ledger(t, ledger, 3, nil)
	z := writeZip(t, "a.zip", verifytest.ZipDir(t, dir))
	runs := [][]string{
		{"--json", dir, plain, ledger, z},
		{"--json", "--max-blocked", "0", "--allow-fail", "--allow-no-verify-command", "--allow-no-jail-canaries", "--allow-stored-outcome",
			"--allow-any-commit", "--read-timeout", "0", "--expect-len", "3", "--expect-policy-sha256", verifytest.PolicySH, dir, plain, ledger},
		{"--json", "--chain-only", "--min-receipts", "0", "--expect-head", strings.Repeat("a", 64), ledger},
		{"--json", "--allow-no-canaries", "--allow-unjailed", "--min-receipts", "0", "--require-outcome", "GOVERNED_FAIL", plain},
	}
	seen := map[string]map[string]bool{}
	check := func(section string, obj map[string]any) {
		if seen[section] == nil {
			seen[section] = map[string]bool{}
		}
		for k := range obj {
			_, documented := doc[section][k]
			assert.True(t, documented, "%s: undocumented field %q", section, k)
			seen[section][k] = true
		}
		for k, optional := range doc[section] {
			if !optional {
				assert.Contains(t, obj, k, "%s: field %q is documented as always present", section, k)
			}
		}
	}
	for _, args := range runs {
		r := run(t, nil, []string{"GITHUB_SHA=" + verifytest.Commit, "GITHUB_REPOSITORY=" + verifytest.Repo}, args...)
		var rep map[string]any
		dec := json.NewDecoder(strings.NewReader(r.stdout))
		require.NoError(t, dec.Decode(&rep), r.stdout)
		assert.False(t, dec.More(), "stdout holds one document")
		assert.Equal(t, verify.ReportSchema, rep["schema"])
		assert.Equal(t, r.code == 0, rep["ok"])
		check("Report", rep)
		pol := rep["policy"].(map[string]any)
		check("policy", pol)
		for _, x := range pol["relaxed"].([]any) {
			check("relaxed", x.(map[string]any))
		}
		for _, x := range rep["items"].([]any) {
			it := x.(map[string]any)
			check("items", it)
			for _, p := range asList(it["problems"]) {
				check("problems", p.(map[string]any))
			}
		}
	}
	// The runs above show every documented field at least once.
	for section, fields := range doc {
		if _, ok := types[section]; !ok {
			continue
		}
		for k := range fields {
			assert.True(t, seen[section][k], "%s.%s never appeared in the test's reports", section, k)
		}
	}
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

func TestJSON(t *testing.T) {
	good := receipt(t, verifytest.Spec{})
	forged := receipt(t, verifytest.Spec{SessionID: "s2", Records: failingStep(), Outcome: evidence.OutcomePass})
	r := run(t, nil, nil, "--json", "--require-outcome", "GOVERNED_PASS", good, forged)
	assert.Equal(t, 1, r.code)
	var rep verify.Report
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	require.NoError(t, dec.Decode(&rep), r.stdout)
	assert.False(t, dec.More(), "stdout holds one document")
	assert.Equal(t, "deponent-verify-report/v1", rep.Schema)
	assert.Equal(t, "deponent-verify", rep.Tool)
	assert.Equal(t, version.Version, rep.Version)
	assert.False(t, rep.OK)
	assert.Equal(t, 1, rep.Verified)
	assert.Equal(t, 1, rep.Failed)
	assert.Equal(t, 2, rep.Receipts)
	assert.Equal(t, 2, rep.DistinctReceipts)
	assert.Equal(t, []evidence.Outcome{evidence.OutcomePass}, rep.Policy.Outcomes)
	assert.Nil(t, rep.Policy.MaxBlocked)
	assert.Contains(t, rep.Note, "not authorship")
	require.Len(t, rep.Items, 2)
	ok, bad := rep.Items[0], rep.Items[1]
	assert.Equal(t, good, ok.Path)
	assert.True(t, ok.OK && ok.Verified)
	assert.Equal(t, verify.KindReceipt, ok.Kind)
	assert.Equal(t, evidence.OutcomePass, ok.Recomputed)
	assert.Equal(t, "recomputed", ok.OutcomeSource)
	e, a, b := verifytest.Tally(verifytest.Good(verifytest.Jail))
	assert.Equal(t, []int64{int64(e), int64(a), int64(b)}, []int64{ok.Entries, ok.Allowed, ok.Blocked})
	assert.Equal(t, verifytest.Commit, ok.Commit)
	assert.Equal(t, "bwrap", ok.Jail)
	assert.True(t, *ok.VerifyRan && *ok.VerifyPassed && *ok.Jailed)
	assert.Equal(t, 6, *ok.CanariesHeld)
	assert.False(t, bad.OK)
	assert.True(t, bad.Verified, "the chain and signature recompute; the summary lies")
	require.NotEmpty(t, bad.Problems)
	assert.Equal(t, "outcome", bad.Problems[0].Where)
	assert.Contains(t, bad.Problems[0].Msg, "the chain recomputes to GOVERNED_FAIL")
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
	assert.Contains(t, s, "deponent-verify: 1 verified, 1 failed")
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
	var rep verify.Report
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
	assertUsage(t, run(t, nil, nil, "--require-outcome"), "flag needs an argument: --require-outcome")
	assertUsage(t, run(t, nil, nil, "--require-outcome", "PASS", good), `--require-outcome "PASS": not an outcome; want one of GOVERNED_PASS, GOVERNED_UNVERIFIED, GOVERNED_FAIL, GOVERNED_DRY_RUN`)
	assertUsage(t, run(t, nil, nil, "--allow-fail", "--require-outcome", "GOVERNED_PASS", good), "contradict")
	assertUsage(t, run(t, nil, nil, "--read-timeout", "soon", good), "not a duration")
	// Every usage error names the help once.
	for _, args := range [][]string{{}, {"--frobnicate", good}, {"--max-blocked", "many", good}, {"--require-outcome", "PASS", good}, {"--expect-commit", "abc", good}} {
		r := run(t, nil, nil, args...)
		assert.Equal(t, 1, strings.Count(r.stderr, "--help"), "%v: %s", args, r.stderr)
		assert.Equal(t, 1, strings.Count(r.stderr, "\n"), "%v: one line: %s", args, r.stderr)
	}

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

// TestReadTimeoutFromTheCommand: a standard input that never closes, and a
// named pipe no one writes to, fail once --read-timeout is up instead of
// hanging the required check.
func TestReadTimeoutFromTheCommand(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "--read-timeout", "1s", "-")
	cmd.Env = cleanEnv()
	pr, pw, err := os.Pipe()
	require.NoError(t, err)
	defer pw.Close() // never closed while the verifier runs: its stdin never ends
	defer pr.Close()
	cmd.Stdin = pr
	var out bytes.Buffer
	cmd.Stdout = &out
	_, err = pw.Write([]byte(`{"receipt_id": `))
	require.NoError(t, err)
	err = cmd.Run()
	require.NoError(t, ctx.Err(), "deponent-verify hung on a stdin that never closes")
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, 1, ee.ExitCode())
	assert.Contains(t, out.String(), "not read to its end within --read-timeout 1s")

	if runtime.GOOS != "windows" {
		fifo := filepath.Join(t.TempDir(), "never.json")
		require.NoError(t, mkfifo(fifo))
		assertFail(t, run(t, nil, nil, "--read-timeout", "1", fifo), fifo, "nothing could be opened within --read-timeout 1s")
	}
	assertUsage(t, run(t, nil, nil, "--read-timeout", "-1s", "-"), "must be 0 (no limit) or more")
}

// TestReceiptHeadAnchor: --expect-head binds a receipt to the chain head
// held outside the artifact (the action prints it in the job log and
// outputs it as chain-head): the recomputed last entry_hash must match.
func TestReceiptHeadAnchor(t *testing.T) {
	headOf := func(path string) string {
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		var r struct {
			Chain struct {
				Entries []struct {
					EntryHash string `json:"entry_hash"`
				} `json:"entries"`
			} `json:"chain"`
		}
		require.NoError(t, json.Unmarshal(data, &r))
		es := r.Chain.Entries
		require.NotEmpty(t, es)
		return es[len(es)-1].EntryHash
	}
	mine := receipt(t, verifytest.Spec{})
	other := receipt(t, verifytest.Spec{SessionID: "s2"})
	head := headOf(mine)
	require.NotEqual(t, head, headOf(other), "two runs end on different heads")

	assertOK(t, run(t, nil, nil, "--expect-head", strings.ToUpper(head), mine))
	assertFail(t, run(t, nil, nil, "--expect-head", head, other), "(--expect-head)", "is not the run whose head you hold")
	// Every receipt given must end on it: a second run beside the right
	// one fails.
	dir := t.TempDir()
	for i, p := range []string{mine, other} {
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("r%d.json", i)), data, 0o644))
	}
	assertFail(t, run(t, nil, nil, "--expect-head", head, dir), "(--expect-head)")
	// An anchor that checked nothing fails.
	assertFail(t, run(t, nil, nil, "--min-receipts", "0", "--expect-head", head, t.TempDir()), "--expect-head", "no receipt or bare ledger was verified")
}

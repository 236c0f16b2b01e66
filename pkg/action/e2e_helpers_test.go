package action

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/deponent-dev/deponent-action/internal/livetest"
	"github.com/deponent-dev/deponent-action/pkg/canon"
	"github.com/deponent-dev/deponent-action/pkg/evidence"
	"github.com/deponent-dev/deponent-action/pkg/jail"
)

// End-to-end tests run the BUILT binary, as a workflow step would: a
// simulated Actions environment (INPUT_* variables, GITHUB_OUTPUT,
// GITHUB_STEP_SUMMARY, GITHUB_SHA, RUNNER_TEMP, GITHUB_WORKSPACE …), then
// the outputs, the summary, the exit code and the receipt are checked.

var (
	actionBin   string // the built cmd/deponent-action
	verifyBin   string // the built cmd/deponent-verify, "" when it did not build (verifierAccepts then fails)
	verifyNote  string // why verifyBin is empty
	moduleRoot  string
	buildFailed error
)

// requireJailEnv makes an unusable jail a failure instead of a skip (CI).
const requireJailEnv = livetest.RequireJailEnv

func TestMain(m *testing.M) {
	// In-process runs of a live agent start this test binary as the relay
	// (os.Executable): act as deponent-action mcp then.
	if len(os.Args) > 1 && os.Args[1] == "mcp" {
		os.Exit(MCPMain(context.Background(), os.Args[2:], os.Getenv, os.Stdin, os.Stdout, os.Stderr))
	}
	code := func() int {
		dir, err := os.MkdirTemp("", "deponent-action-e2e-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		out, err := exec.Command("go", "env", "GOMOD").Output()
		if err != nil {
			fmt.Fprintln(os.Stderr, "go env GOMOD:", err)
			return 1
		}
		moduleRoot = filepath.Dir(strings.TrimSpace(string(out)))
		actionBin = filepath.Join(dir, "deponent-action")
		if err := goBuild(actionBin, "./cmd/deponent-action"); err != nil {
			buildFailed = err
		}
		if hasGoFiles(filepath.Join(moduleRoot, "cmd", "deponent-verify")) {
			verifyBin = filepath.Join(dir, "deponent-verify")
			if err := goBuild(verifyBin, "./cmd/deponent-verify"); err != nil {
				verifyBin, verifyNote = "", "cmd/deponent-verify does not build: "+err.Error()
				buildFailed = err
			}
		} else {
			verifyNote = "cmd/deponent-verify has no Go files"
		}
		return livetest.Main(m, "pkg/action")
	}()
	os.Exit(code)
}

func goBuild(out, pkg string) error {
	args := []string{"build", "-o", out}
	if raceEnabled {
		args = append(args, "-race")
	}
	cmd := exec.Command("go", append(args, pkg)...)
	cmd.Dir = moduleRoot
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %v\n%s", pkg, err, b)
	}
	return nil
}

func hasGoFiles(dir string) bool {
	m, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	return len(m) > 0
}

// resolvedTemp is t.TempDir with symlinks resolved (macOS /var → /private/var).
func resolvedTemp(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	return d
}

// fakeRun is one simulated workflow step.
type fakeRun struct {
	t          *testing.T
	env        map[string]string
	Workspace  string // GITHUB_WORKSPACE, the default sandbox
	RunnerTemp string
	OutputFile string
	Summary    string
	SHA        string
	Repo       string
}

const testSHA = "0123456789abcdef0123456789abcdef01234567"

// newActionsRun builds a simulated Actions environment with its own
// workspace and runner temp directory.
func newActionsRun(t *testing.T) *fakeRun {
	t.Helper()
	if buildFailed != nil && actionBin != "" {
		if _, err := os.Stat(actionBin); err != nil {
			t.Fatalf("the binary did not build: %v", buildFailed)
		}
	}
	root := resolvedTemp(t)
	f := &fakeRun{
		t:          t,
		Workspace:  filepath.Join(root, "work", "repo", "repo"),
		RunnerTemp: filepath.Join(root, "runner-temp"),
		SHA:        testSHA,
		Repo:       "deponent-dev/example",
	}
	require.NoError(t, os.MkdirAll(f.Workspace, 0o755))
	require.NoError(t, os.MkdirAll(f.RunnerTemp, 0o755))
	tmp := filepath.Join(root, "tmp") // the jail's per-step directories, even after a kill
	require.NoError(t, os.MkdirAll(tmp, 0o755))
	f.OutputFile = filepath.Join(f.RunnerTemp, "github_output")
	f.Summary = filepath.Join(f.RunnerTemp, "step_summary.md")
	require.NoError(t, os.WriteFile(f.OutputFile, nil, 0o644))
	require.NoError(t, os.WriteFile(f.Summary, nil, 0o644))
	f.env = map[string]string{
		"PATH":                os.Getenv("PATH"),
		"HOME":                os.Getenv("HOME"),
		"LANG":                "C.UTF-8",
		"TMPDIR":              tmp,
		"GITHUB_ACTIONS":      "true",
		"GITHUB_OUTPUT":       f.OutputFile,
		"GITHUB_STEP_SUMMARY": f.Summary,
		"GITHUB_SHA":          f.SHA,
		"GITHUB_REPOSITORY":   f.Repo,
		"GITHUB_REF":          "refs/pull/7/merge",
		"GITHUB_WORKFLOW":     "agent",
		"GITHUB_RUN_ID":       "4242",
		"GITHUB_RUN_ATTEMPT":  "1",
		"GITHUB_JOB":          "build",
		"GITHUB_EVENT_NAME":   "pull_request",
		"RUNNER_OS":           runnerOS(),
		"RUNNER_TEMP":         f.RunnerTemp,
		"GITHUB_WORKSPACE":    f.Workspace,
		// A secret the runner has: it must not reach the logs or a jailed step.
		"GITHUB_TOKEN": "ghs_e2eSECRETtokenValue",
	}
	return f
}

func runnerOS() string {
	switch runtime.GOOS {
	case "darwin":
		return "macOS"
	case "windows":
		return "Windows"
	}
	return "Linux"
}

// Set sets an environment variable (e.g. INPUT_PLAN).
func (f *fakeRun) Set(k, v string) *fakeRun { f.env[k] = v; return f }

// Input sets INPUT_<NAME> with the hyphen kept, as the runner exports it.
func (f *fakeRun) Input(name, v string) *fakeRun {
	f.env["INPUT_"+strings.ToUpper(name)] = v
	return f
}

// result is what the binary did.
type result struct {
	Code    int
	Stdout  string
	Stderr  string
	Outputs map[string]string
	Summary string
}

// Run runs the built binary in the simulated environment.
func (f *fakeRun) Run(args ...string) result {
	f.t.Helper()
	cmd := exec.Command(actionBin, args...)
	cmd.Dir = f.Workspace
	for k, v := range f.env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		f.t.Fatalf("running %s: %v", actionBin, err)
	}
	r := result{Code: code, Stdout: so.String(), Stderr: se.String(), Outputs: readOutputs(f.t, f.OutputFile)}
	if b, err := os.ReadFile(f.Summary); err == nil {
		r.Summary = string(b)
	}
	f.t.Logf("exit %d\n--- stdout ---\n%s--- stderr ---\n%s", code, r.Stdout, r.Stderr)
	require.NotContains(f.t, r.Stdout+r.Stderr+r.Summary, "ghs_e2eSECRETtokenValue", "a secret of the runner reached the log")
	return r
}

// readOutputs parses GITHUB_OUTPUT as written through go-githubactions:
// name<<DELIM, value, DELIM.
func readOutputs(t *testing.T, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	out := map[string]string{}
	lines := strings.Split(string(b), "\n")
	for i := 0; i < len(lines); i++ {
		name, delim, ok := strings.Cut(lines[i], "<<")
		if !ok {
			continue
		}
		var val []string
		for i++; i < len(lines) && lines[i] != delim; i++ {
			val = append(val, lines[i])
		}
		out[name] = strings.Join(val, "\n")
	}
	return out
}

// requireJail skips loudly when no jail works here (internal/livetest),
// or fails under DEPONENT_REQUIRE_JAIL=1.
func requireJail(t *testing.T) string {
	t.Helper()
	b, err := jail.Select("auto", jail.Options{})
	if err != nil {
		livetest.Skip(t, requireJailEnv, "no jail works here: "+err.Error())
	}
	if _, err := exec.LookPath("python3"); err != nil {
		livetest.Skip(t, requireJailEnv, "python3, which the jailed end-to-end tests run, is not on PATH")
	}
	return b.Name()
}

// otherJail is a backend that cannot exist on this OS.
func otherJail() string {
	if runtime.GOOS == "darwin" {
		return jail.NameBwrap
	}
	return jail.NameSeatbelt
}

// verified is a receipt read back from disk and recomputed.
type verified struct {
	R   *evidence.Receipt
	Gov evidence.Governance
	A   evidence.Assessment
}

// verifyReceipt recomputes a receipt the way the verifier does: the chain,
// the content hash, and the outcome from the chain under its governance.
func verifyReceipt(t *testing.T, path string) verified {
	t.Helper()
	r, err := evidence.VerifyReceiptFile(path)
	require.NoError(t, err)
	g, ok, err := evidence.ParseGovernance(r.Body)
	require.NoError(t, err)
	require.True(t, ok, "the receipt carries a governance object")
	a := evidence.Assess(r.Entries, g)
	require.Equal(t, r.Outcome, a.Outcome, "the stored outcome recomputes from the chain: %v", a.Reasons)
	return verified{R: r, Gov: g, A: a}
}

// verifierAccepts runs the real offline verifier on a receipt: it must
// accept it bound to the commit and repository, and refuse it for another
// commit (so the binding is really checked).
func verifierAccepts(t *testing.T, path, sha, repo string, extra ...string) {
	t.Helper()
	if verifyBin == "" {
		// The verifier is part of this module: a build that is missing or
		// broken fails the check, never skips it.
		t.Fatalf("deponent-verify was not built, so %s cannot be verified: %s", path, verifyNote)
	}
	run := func(args ...string) (int, string) {
		cmd := exec.Command(verifyBin, args...)
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("deponent-verify: %v", err)
		}
		return code, string(out)
	}
	if len(extra) == 0 {
		extra = []string{"--chain-only"} // the chain and the binding, whatever the outcome (the verifier is strict by default)
	}
	args := append([]string{"--expect-commit", sha, "--expect-repo", repo}, extra...)
	code, out := run(append(args, path)...)
	require.Equal(t, 0, code, "deponent-verify --expect-commit %s must accept the receipt:\n%s", sha, out)
	other := strings.Repeat("f", 40)
	code, out = run(append(append([]string{"--expect-commit", other}, extra...), path)...)
	require.Equal(t, 1, code, "deponent-verify must refuse the receipt for another commit:\n%s", out)
}

// entriesBy returns a receipt's entries of one agent.
func entriesBy(r *evidence.Receipt, agent string) []canon.Value {
	var out []canon.Value
	for _, e := range r.Entries {
		if s, _ := field(e, evidence.FieldAgent); s == agent {
			out = append(out, e)
		}
	}
	return out
}

func field(e canon.Value, k string) (string, bool) {
	v, ok := e.Get(k)
	if !ok {
		return "", false
	}
	if s, isStr := v.AsString(); isStr {
		return s, true
	}
	return v.String(), true
}

// dirEntries lists a directory (empty when it does not exist).
func dirEntries(t *testing.T, dir string) []string {
	t.Helper()
	var names []string
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			names = append(names, p)
		}
		return nil
	})
	return names
}

// examplePlan is the plan ci.yml runs.
func examplePlan() string { return filepath.Join(moduleRoot, "examples", "plans", "ci.jsonl") }

const exampleVerify = "python3 -m unittest discover -s deponent-ci-smoke -q"

func execCommand(bin string, args ...string) (string, error) {
	out, err := exec.Command(bin, args...).CombinedOutput()
	return string(out), err
}

func exitCode(err error) (int, bool) {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), true
	}
	return 0, false
}

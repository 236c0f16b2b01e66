package kernel

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/deponent-dev/deponent-action/pkg/canon"
	"github.com/deponent-dev/deponent-action/pkg/evidence"
	"github.com/deponent-dev/deponent-action/pkg/gate"
	"github.com/deponent-dev/deponent-action/pkg/jail"
)

// fakeJail records what it was asked to run and answers with a fixed
// result. It stands in for a sandbox where the test is about the Cell.
type fakeJail struct {
	mu     sync.Mutex
	specs  []jail.Spec
	result jail.Result
	err    error
}

func (f *fakeJail) Name() string     { return "fake" }
func (f *fakeJail) Available() error { return nil }
func (f *fakeJail) Run(_ context.Context, s jail.Spec) (jail.Result, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.specs = append(f.specs, s)
	r := f.result
	if r.Backend == "" {
		r.Backend = "fake"
	}
	return r, f.err
}

func newTestCell(t *testing.T, j jail.Backend, dry bool) (*Cell, string, *evidence.Ledger) {
	t.Helper()
	sb := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(sb, ".git", "hooks"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(sb, "README.md"), []byte("# x\n"), 0o644))
	g, err := gate.NewGate(sb, nil)
	require.NoError(t, err)
	l, err := evidence.OpenLedger(evidence.LedgerOptions{})
	require.NoError(t, err)
	c, err := NewCell(CellOptions{Gate: g, Ledger: l, Jail: j, DryRun: dry, NoJailReason: "test: no backend"})
	require.NoError(t, err)
	return c, g.Sandbox(), l
}

func field(t *testing.T, e canon.Value, k string) string {
	t.Helper()
	v, ok := e.Get(k)
	require.True(t, ok, "entry has no %q: %s", k, e)
	if s, isStr := v.AsString(); isStr {
		return s
	}
	return v.String()
}

func TestCellFileTools(t *testing.T) {
	c, sb, l := newTestCell(t, &fakeJail{}, false)
	r := c.Act("write_file", map[string]any{"path": "src/app.py", "content": "print(1)\n"}, "builder")
	require.NoError(t, r.Err)
	assert.True(t, r.Executed)
	assert.Equal(t, "print(1)\n", string(mustRead(t, filepath.Join(sb, "src", "app.py"))))
	assert.Equal(t, string(evidence.VerdictAllow), field(t, r.Entry, evidence.FieldVerdict))
	assert.Equal(t, evidence.HashOutcome([]byte("print(1)\n")), field(t, r.Entry, evidence.FieldOutcomeSHA256))

	r = c.Act("read_file", map[string]any{"path": "src/app.py"}, "builder")
	require.NoError(t, r.Err)
	assert.Equal(t, "print(1)\n", string(r.Output))
	assert.Equal(t, evidence.HashOutcome(r.Output), field(t, r.Entry, evidence.FieldOutcomeSHA256))

	// An executable keeps its mode when rewritten.
	script := filepath.Join(sb, "run.sh")
	require.NoError(t, os.WriteFile(script, []byte("#!/bin/sh\n"), 0o755))
	require.NoError(t, c.Act("write_file", map[string]any{"path": "run.sh", "content": "#!/bin/sh\necho\n"}, "b").Err)
	st, _ := os.Stat(script)
	assert.Equal(t, os.FileMode(0o755), st.Mode().Perm())

	// A protected path is refused, recorded, and untouched.
	r = c.Act("write_file", map[string]any{"path": ".git/hooks/pre-commit", "content": "evil"}, "builder")
	assert.Error(t, r.Err)
	assert.False(t, r.Executed)
	assert.Equal(t, string(evidence.VerdictBlock), field(t, r.Entry, evidence.FieldVerdict))
	assert.NoFileExists(t, filepath.Join(sb, ".git", "hooks", "pre-commit"))

	// An allowed write that fails at execution: recorded with its error.
	require.NoError(t, os.MkdirAll(filepath.Join(sb, "adir"), 0o755))
	r = c.Act("write_file", map[string]any{"path": "adir", "content": "x"}, "builder")
	assert.Error(t, r.Err)
	assert.True(t, r.Executed)
	assert.Equal(t, string(evidence.VerdictAllow), field(t, r.Entry, evidence.FieldVerdict))
	assert.NotEmpty(t, field(t, r.Entry, evidence.FieldError))
	r = c.Act("read_file", map[string]any{"path": "missing.txt"}, "builder")
	assert.Error(t, r.Err)
	assert.NotEmpty(t, field(t, r.Entry, evidence.FieldError))

	rep := l.Verify()
	require.True(t, rep.OK(), "%v", rep.Break)
	assert.Equal(t, int64(6), rep.Entries)
	// No temporary files are left behind.
	matches, _ := filepath.Glob(filepath.Join(sb, "*", ".*deponent-tmp*"))
	assert.Empty(t, matches)
}

func TestCellRunCmdThroughJail(t *testing.T) {
	fj := &fakeJail{result: jail.Result{ExitCode: 0, Output: []byte("hi\n"), OutputSHA256: evidence.HashOutcome([]byte("hi\n")), Duration: 12 * time.Millisecond}}
	c, sb, _ := newTestCell(t, fj, false)
	r := c.Act("run_cmd", map[string]any{"cmd": "echo hi && ls"}, "builder")
	require.NoError(t, r.Err)
	require.Len(t, fj.specs, 1)
	s := fj.specs[0]
	assert.Equal(t, r.Decision.Script, s.Script, "the approved rendering is what runs")
	assert.NotEqual(t, "echo hi && ls", s.Script, "never the raw string")
	assert.Equal(t, sb, s.Sandbox)
	assert.Equal(t, c.gate.TrustedPATH(), s.PATH)
	assert.Contains(t, s.Protected, filepath.Join(sb, ".git"))
	assert.Equal(t, 2048, s.Limits.MemoryMB)
	assert.Equal(t, "0", field(t, r.Entry, evidence.FieldExitCode))
	assert.Equal(t, "12", field(t, r.Entry, evidence.FieldDurationMS))
	assert.Equal(t, "fake", field(t, r.Entry, evidence.FieldJail))
	assert.Equal(t, fj.result.OutputSHA256, field(t, r.Entry, evidence.FieldOutcomeSHA256))
	_, unj := r.Entry.Get(evidence.FieldUnjailed)
	assert.False(t, unj)

	// A kill is recorded with the jail's words.
	fj.result = jail.Result{ExitCode: -1, Killed: "wallclock>90s", OutputSHA256: evidence.HashOutcome(nil)}
	r = c.Act("run_cmd", map[string]any{"cmd": "python3 -c 'while 1: pass'"}, "builder")
	assert.Equal(t, "wallclock>90s", field(t, r.Entry, evidence.FieldKilled))
	assert.Equal(t, "-1", field(t, r.Entry, evidence.FieldExitCode))

	// The gate-only backend marks every entry it runs.
	fj.result = jail.Result{Backend: "none", Unjailed: true, OutputSHA256: evidence.HashOutcome(nil)}
	r = c.Act("run_cmd", map[string]any{"cmd": "ls"}, "builder")
	assert.Equal(t, "true", field(t, r.Entry, evidence.FieldUnjailed))

	// An infrastructure failure of the jail is an execution error.
	fj.err = errors.New("bwrap exploded")
	r = c.Act("run_cmd", map[string]any{"cmd": "ls"}, "builder")
	assert.ErrorContains(t, r.Err, "bwrap exploded")
	assert.Contains(t, field(t, r.Entry, evidence.FieldError), "bwrap exploded")

	// A refusal by the backend is a recorded BLOCK.
	fj.err = nil
	fj.result = jail.NoJail("bwrap cannot create namespaces")
	r = c.Act("run_cmd", map[string]any{"cmd": "ls"}, "builder")
	assert.Equal(t, string(evidence.VerdictBlock), field(t, r.Entry, evidence.FieldVerdict))
	assert.Equal(t, string(evidence.ClassNoJail), field(t, r.Entry, evidence.FieldBlastClass))
}

// TestCellFailsClosedWithoutJail: an allowed command is refused and the
// refusal recorded; the positive control shows the same call runs when a
// jail is there.
func TestCellFailsClosedWithoutJail(t *testing.T) {
	c, _, l := newTestCell(t, nil, false)
	r := c.Act("run_cmd", map[string]any{"cmd": "ls -la"}, "builder")
	assert.Error(t, r.Err)
	assert.False(t, r.Executed)
	assert.Equal(t, string(evidence.VerdictBlock), field(t, r.Entry, evidence.FieldVerdict))
	assert.Equal(t, string(evidence.ClassNoJail), field(t, r.Entry, evidence.FieldBlastClass))
	assert.Contains(t, field(t, r.Entry, evidence.FieldReason), "test: no backend")
	assert.Equal(t, "no-jail", field(t, r.Entry, evidence.FieldKilled))
	assert.Equal(t, int64(1), l.Len())

	fj := &fakeJail{}
	c2, _, _ := newTestCell(t, fj, false)
	r = c2.Act("run_cmd", map[string]any{"cmd": "ls -la"}, "builder")
	require.NoError(t, r.Err)
	assert.Len(t, fj.specs, 1, "positive control: the same call runs with a jail")
}

func TestCellBlocksAndMalformed(t *testing.T) {
	fj := &fakeJail{}
	c, _, l := newTestCell(t, fj, false)
	cases := []struct {
		tool   string
		params map[string]any
		class  evidence.Class
	}{
		{"delete_database", map[string]any{"name": "prod"}, evidence.ClassUnknownTool},
		{"run_cmd", map[string]any{"cmd": "rm -rf /"}, evidence.ClassDestructive},
		{"read_file", map[string]any{"path": "/etc/passwd"}, evidence.ClassOutOfSandboxRead},
		{"write_file", map[string]any{"file": "x.txt", "content": "x"}, evidence.ClassMalformed},
		{"write_file", map[string]any{"path": "x.txt"}, evidence.ClassMalformed},
		{"run_cmd", map[string]any{"cmd": 42}, evidence.ClassEmptyCommand},
		{"run_cmd", nil, evidence.ClassEmptyCommand},
	}
	for _, tc := range cases {
		r := c.Act(tc.tool, tc.params, "builder")
		assert.Error(t, r.Err, "%s %v: the agent is told", tc.tool, tc.params)
		assert.False(t, r.Executed)
		assert.Equal(t, string(evidence.VerdictBlock), field(t, r.Entry, evidence.FieldVerdict), "%s %v", tc.tool, tc.params)
		assert.Equal(t, string(tc.class), field(t, r.Entry, evidence.FieldBlastClass), "%s %v", tc.tool, tc.params)
	}
	assert.Empty(t, fj.specs, "nothing blocked reached the jail")
	assert.Equal(t, int64(len(cases)), l.Len(), "every BLOCK is recorded")
	assert.True(t, l.Verify().OK())
}

func TestCellDryRun(t *testing.T) {
	fj := &fakeJail{}
	c, sb, l := newTestCell(t, fj, true)
	r := c.Act("write_file", map[string]any{"path": "new.txt", "content": "x"}, "builder")
	require.NoError(t, r.Err)
	assert.False(t, r.Executed)
	assert.NoFileExists(t, filepath.Join(sb, "new.txt"))
	assert.Equal(t, "true", field(t, r.Entry, evidence.FieldDryRun))
	r = c.Act("run_cmd", map[string]any{"cmd": "ls"}, "builder")
	require.NoError(t, r.Err)
	assert.Empty(t, fj.specs, "dry run executes nothing")
	r = c.Act("run_cmd", map[string]any{"cmd": "curl x"}, "builder")
	assert.Error(t, r.Err, "dry run still gates")
	assert.Equal(t, int64(3), l.Len())
}

// TestCellRefusesWhenLedgerCannotRecord: nothing executes that cannot be
// recorded.
func TestCellRefusesWhenLedgerCannotRecord(t *testing.T) {
	fj := &fakeJail{}
	sb := t.TempDir()
	g, err := gate.NewGate(sb, nil)
	require.NoError(t, err)
	l, err := evidence.OpenLedger(evidence.LedgerOptions{Path: filepath.Join(t.TempDir(), "l.jsonl"), NoSync: true})
	require.NoError(t, err)
	c, err := NewCell(CellOptions{Gate: g, Ledger: l, Jail: fj})
	require.NoError(t, err)
	require.NoError(t, l.Close())
	r := c.Act("run_cmd", map[string]any{"cmd": "ls"}, "builder")
	assert.Error(t, r.Err)
	assert.Empty(t, fj.specs)
	r = c.Act("write_file", map[string]any{"path": "a.txt", "content": "x"}, "builder")
	assert.Error(t, r.Err)
	assert.NoFileExists(t, filepath.Join(g.Sandbox(), "a.txt"))
}

// TestCellLiveJail runs a real command through the best jail here. It skips
// loudly without one, and fails instead when DEPONENT_REQUIRE_JAIL=1.
func TestCellLiveJail(t *testing.T) {
	b := liveJail(t)
	c, sb, l := newTestCell(t, b, false)
	require.NoError(t, os.WriteFile(filepath.Join(sb, "data.txt"), []byte("b\na\n"), 0o644))
	r := c.Act("run_cmd", map[string]any{"cmd": "sort data.txt | uniq && echo done"}, "builder")
	require.NoError(t, r.Err, string(r.Output))
	assert.Equal(t, "a\nb\ndone\n", string(r.Output))
	assert.Equal(t, 0, r.ExitCode)
	assert.Equal(t, b.Name(), field(t, r.Entry, evidence.FieldJail))
	r = c.Act("run_cmd", map[string]any{"cmd": "cat missing.txt"}, "builder")
	assert.NoError(t, r.Err, "a failing command is not an execution error")
	assert.NotEqual(t, 0, r.ExitCode)
	assert.True(t, strings.Contains(string(r.Output), "missing.txt"))
	assert.True(t, l.Verify().OK())
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}

// TestCellRecordsTheTripwire: a step that changed a protected path (the
// jail's Result.Tampered) is recorded "tampered" with the paths, whatever
// its exit code, and the memory guard that applied is recorded; the
// outcome fails (evidence.Assess). The positive control: the same step
// without tampering records neither and can pass.
func TestCellRecordsTheTripwire(t *testing.T) {
	fj := &fakeJail{result: jail.Result{ExitCode: 0, OutputSHA256: evidence.HashOutcome(nil),
		Tampered: []string{"sub/.git", ".github/workflows"}, MemoryGuard: "cgroup", TaskGuard: "rlimit", OutputBytes: 42}}
	c, _, l := newTestCell(t, fj, false)
	r := c.Act("run_cmd", map[string]any{"cmd": "python3 x.py"}, "builder")
	require.NoError(t, r.Err)
	assert.Equal(t, []string{"sub/.git", ".github/workflows"}, r.Tampered)
	assert.Equal(t, `["sub/.git", ".github/workflows"]`, field(t, r.Entry, evidence.FieldTampered))
	assert.Equal(t, "cgroup", field(t, r.Entry, evidence.FieldMemoryGuard))
	assert.Equal(t, "rlimit", field(t, r.Entry, evidence.FieldTaskGuard))
	assert.Equal(t, "42", field(t, r.Entry, evidence.FieldOutputBytes))
	a := evidence.Assess(l.Entries(), evidence.Governance{Jail: "fake", VerifyCommand: ""})
	assert.Equal(t, evidence.OutcomeFail, a.Outcome)
	assert.Equal(t, int64(1), a.Tampered)

	fj.result.Tampered = nil
	c2, _, l2 := newTestCell(t, fj, false)
	r = c2.Act("run_cmd", map[string]any{"cmd": "python3 x.py"}, "builder")
	require.NoError(t, r.Err)
	_, has := r.Entry.Get(evidence.FieldTampered)
	assert.False(t, has)
	assert.Equal(t, int64(0), evidence.Assess(l2.Entries(), evidence.Governance{Jail: "fake"}).Tampered)
}

// TestCellKeepsTheFullOutput: the harness's Output wishes reach the jail
// (the real one keeps the file and copies live), and the file the jail
// kept is reported. The live proof is in pkg/action's end-to-end tests.
func TestCellKeepsTheFullOutput(t *testing.T) {
	b := liveJail(t)
	c, sb, _ := newTestCell(t, b, false)
	require.NoError(t, os.WriteFile(filepath.Join(sb, "data.txt"), []byte("b\na\n"), 0o644))
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	file := filepath.Join(dir, "entry-0000.log")
	var live syncBuf
	r := c.Do(context.Background(), Call{Tool: evidence.ToolRunCmd, Params: map[string]any{"cmd": "sort data.txt"}, Agent: "builder",
		Output: Output{File: file, Live: &live, LiveBytes: 1 << 10}})
	require.NoError(t, r.Err)
	assert.Equal(t, file, r.OutputFile)
	got := mustRead(t, file)
	assert.Equal(t, "a\nb\n", string(got))
	assert.Equal(t, evidence.HashOutcome(got), field(t, r.Entry, evidence.FieldOutcomeSHA256), "the file is what the entry testifies to")
	assert.Equal(t, "a\nb\n", live.String(), "and it was copied live")
}

type syncBuf struct {
	mu sync.Mutex
	b  []byte
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b = append(s.b, p...)
	return len(p), nil
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return string(s.b)
}

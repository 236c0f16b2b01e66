package kernel

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/deponent-dev/deponent-action/pkg/evidence"
	"github.com/deponent-dev/deponent-action/pkg/gate"
	"github.com/deponent-dev/deponent-action/pkg/jail"
)

// allowFileTools makes the Cell's decision for edit_file and list_dir an
// ALLOW of the given path whatever it is, and asks the real gate for
// everything else: these tests are about the executors (a symlink out of
// the sandbox, for one, is theirs to refuse, whatever the gate decided);
// TestCellEditAndListThroughTheGate runs them behind the real gate.
func allowFileTools(c *Cell) {
	real := c.decide
	c.decide = func(tool string, params map[string]any) gate.Decision {
		switch tool {
		case evidence.ToolEditFile, evidence.ToolListDir:
			p, _ := params["path"].(string)
			class := evidence.ClassLocalWrite
			if tool == evidence.ToolListDir {
				class = evidence.ClassLocalRead
			}
			return gate.Decision{Verdict: evidence.VerdictAllow, BlastClass: class, Reason: "test", Path: p}
		}
		return real(tool, params)
	}
}

func edit(c *Cell, path, old, new string) ActResult {
	return c.Act(evidence.ToolEditFile, map[string]any{"path": path, "old": old, "new": new}, "builder")
}

func TestCellEditFile(t *testing.T) {
	c, sb, l := newTestCell(t, &fakeJail{}, false)
	allowFileTools(c)
	file := filepath.Join(sb, "calc.py")
	require.NoError(t, os.WriteFile(file, []byte("def add(a, b):\n    return a - b\n"), 0o755))

	r := edit(c, "calc.py", "return a - b", "return a + b")
	require.NoError(t, r.Err)
	assert.True(t, r.Executed)
	want := "def add(a, b):\n    return a + b\n"
	assert.Equal(t, want, string(mustRead(t, file)))
	assert.Equal(t, evidence.HashOutcome([]byte(want)), field(t, r.Entry, evidence.FieldOutcomeSHA256), "the outcome is the new content")
	st, err := os.Stat(file)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o755), st.Mode().Perm(), "the mode is kept")

	// No match: nothing changes, and the agent is told how many.
	r = edit(c, "calc.py", "return a * b", "x")
	require.Error(t, r.Err)
	assert.Contains(t, r.Err.Error(), "0 matches")
	assert.True(t, r.Executed, "an allowed edit that failed is an executed action with an error")
	assert.Contains(t, field(t, r.Entry, evidence.FieldError), "0 matches")
	assert.Equal(t, want, string(mustRead(t, file)))

	// Several matches, overlapping ones included.
	require.NoError(t, os.WriteFile(file, []byte("x = 1\nx = 1\nx = 1\n"), 0o644))
	r = edit(c, "calc.py", "x = 1", "x = 2")
	require.Error(t, r.Err)
	assert.Contains(t, r.Err.Error(), "matches 3 places")
	require.NoError(t, os.WriteFile(file, []byte("aaa"), 0o644))
	r = edit(c, "calc.py", "aa", "b")
	require.Error(t, r.Err)
	assert.Contains(t, r.Err.Error(), "matches 2 places", "overlapping matches are ambiguous too")
	assert.Equal(t, "aaa", string(mustRead(t, file)))

	// Deleting text (new empty) and a unique match among near-misses.
	require.NoError(t, os.WriteFile(file, []byte("keep\nDROP me\nkeep\n"), 0o644))
	require.NoError(t, edit(c, "calc.py", "DROP me\n", "").Err)
	assert.Equal(t, "keep\nkeep\n", string(mustRead(t, file)))

	// Not a file, missing file, directory.
	r = edit(c, "missing.py", "a", "b")
	assert.Error(t, r.Err)
	require.NoError(t, os.Mkdir(filepath.Join(sb, "pkg"), 0o755))
	r = edit(c, "pkg", "a", "b")
	require.Error(t, r.Err)
	assert.Contains(t, r.Err.Error(), "not a regular file")

	// A symlink out of the sandbox is not followed, whatever the gate
	// decided.
	outside := filepath.Join(t.TempDir(), "secret.txt")
	require.NoError(t, os.WriteFile(outside, []byte("token=abc"), 0o644))
	require.NoError(t, os.Symlink(outside, filepath.Join(sb, "link.txt")))
	r = edit(c, "link.txt", "abc", "pwned")
	assert.Error(t, r.Err)
	assert.Equal(t, "token=abc", string(mustRead(t, outside)))

	// No temporary files are left behind.
	matches, _ := filepath.Glob(filepath.Join(sb, ".*deponent-tmp*"))
	assert.Empty(t, matches)
	assert.True(t, l.Verify().OK())
}

func TestCellListDir(t *testing.T) {
	c, sb, _ := newTestCell(t, &fakeJail{}, false)
	allowFileTools(c)
	require.NoError(t, os.MkdirAll(filepath.Join(sb, "src", "deep"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(sb, "src", "a.py"), []byte("12345"), 0o644))
	require.NoError(t, os.Symlink("/etc/passwd", filepath.Join(sb, "src", "pw")))
	require.NoError(t, os.WriteFile(filepath.Join(sb, "src", "odd\nname"), nil, 0o644))

	r := c.Act(evidence.ToolListDir, map[string]any{"path": "src"}, "builder")
	require.NoError(t, r.Err)
	assert.Equal(t, "a.py  (5 bytes)\ndeep/\nodd\\nname  (0 bytes)\npw@  (symlink)\n", string(r.Output))
	assert.Equal(t, evidence.HashOutcome(r.Output), field(t, r.Entry, evidence.FieldOutcomeSHA256))

	r = c.Act(evidence.ToolListDir, map[string]any{"path": "."}, "builder")
	require.NoError(t, r.Err)
	assert.Contains(t, string(r.Output), ".git/\n")
	assert.Contains(t, string(r.Output), "README.md  (4 bytes)\n")

	r = c.Act(evidence.ToolListDir, map[string]any{"path": "src/deep"}, "builder")
	require.NoError(t, r.Err)
	assert.Equal(t, "(empty directory)\n", string(r.Output))

	r = c.Act(evidence.ToolListDir, map[string]any{"path": "README.md"}, "builder")
	require.Error(t, r.Err)
	assert.Contains(t, r.Err.Error(), "not a directory")

	// A symlinked directory out of the sandbox is not listed.
	require.NoError(t, os.Symlink("/etc", filepath.Join(sb, "etc")))
	r = c.Act(evidence.ToolListDir, map[string]any{"path": "etc"}, "builder")
	assert.Error(t, r.Err)
	assert.Empty(t, r.Output)
}

func TestCellListDirIsBounded(t *testing.T) {
	c, sb, _ := newTestCell(t, &fakeJail{}, false)
	allowFileTools(c)
	dir := filepath.Join(sb, "many")
	require.NoError(t, os.Mkdir(dir, 0o755))
	n := 4*MaxListEntries + 7
	for i := 0; i < n; i++ {
		require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%05d", i)), nil, 0o644))
	}
	r := c.Act(evidence.ToolListDir, map[string]any{"path": "many"}, "builder")
	require.NoError(t, r.Err)
	lines := strings.Split(strings.TrimSuffix(string(r.Output), "\n"), "\n")
	require.Len(t, lines, MaxListEntries+1)
	assert.Equal(t, "f00000  (0 bytes)", lines[0], "the first entries by name")
	assert.Equal(t, fmt.Sprintf("f%05d  (0 bytes)", MaxListEntries-1), lines[MaxListEntries-1])
	assert.Contains(t, lines[MaxListEntries], fmt.Sprintf("and %d more entries", n-MaxListEntries))
}

// TestCellSerializesConcurrentCalls: calls made at once run one at a time,
// and the chain lists them in the order they ran. The fake jail records
// its own order and flags any overlap.
func TestCellSerializesConcurrentCalls(t *testing.T) {
	oj := &orderJail{}
	c, sb, l := newTestCell(t, oj, false)
	allowFileTools(c)
	const n = 40
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			switch i % 3 {
			case 0:
				c.Act(evidence.ToolRunCmd, map[string]any{"cmd": fmt.Sprintf("echo %d", i)}, "builder")
			case 1:
				c.Act(evidence.ToolWriteFile, map[string]any{"path": fmt.Sprintf("f%d.txt", i), "content": "x"}, "builder")
			default:
				c.Act(evidence.ToolListDir, map[string]any{"path": "."}, "builder")
			}
		}(i)
	}
	wg.Wait()
	assert.False(t, oj.overlap, "two commands ran at once")
	var cmds []string
	for _, e := range l.Entries() {
		if field(t, e, evidence.FieldTool) == evidence.ToolRunCmd {
			p, _ := e.Get(evidence.FieldParams)
			cmds = append(cmds, c.decide(evidence.ToolRunCmd, map[string]any{"cmd": evidence.EntryString(p, "cmd")}).Script)
		}
	}
	assert.Equal(t, oj.order, cmds, "the chain's order is the execution order")
	assert.Equal(t, int64(n), l.Len())
	assert.Len(t, cmds, (n+2)/3)
	assert.True(t, l.Verify().OK())
	_ = sb
}

// orderJail records the order of its runs and whether two overlapped.
type orderJail struct {
	mu      sync.Mutex
	running int
	overlap bool
	order   []string
}

func (o *orderJail) Name() string     { return "fake" }
func (o *orderJail) Available() error { return nil }
func (o *orderJail) Run(_ context.Context, s jail.Spec) (jail.Result, error) {
	o.mu.Lock()
	o.running++
	if o.running > 1 {
		o.overlap = true
	}
	o.order = append(o.order, s.Script)
	o.mu.Unlock()
	for i := 0; i < 100; i++ { // give another call the chance to overlap
		runtime.Gosched()
	}
	o.mu.Lock()
	o.running--
	o.mu.Unlock()
	return jail.Result{Backend: "fake", OutputSHA256: evidence.HashOutcome(nil)}, nil
}

func TestCellRefuseAndRecord(t *testing.T) {
	c, _, l := newTestCell(t, &fakeJail{}, false)
	r := c.Refuse(Call{Tool: evidence.ToolRunCmd, Params: map[string]any{"cmd": "ls"}, Agent: "claude"},
		evidence.ClassToolCallLimit, "past the limit")
	require.Error(t, r.Err)
	assert.False(t, r.Executed)
	assert.Equal(t, string(evidence.VerdictBlock), field(t, r.Entry, evidence.FieldVerdict))
	assert.Equal(t, string(evidence.ClassToolCallLimit), field(t, r.Entry, evidence.FieldBlastClass))
	assert.Equal(t, "past the limit", field(t, r.Entry, evidence.FieldReason))

	e, err := c.Record(evidence.Record{Agent: evidence.AgentHarness, Tool: evidence.ToolAgentSession,
		Verdict: evidence.VerdictAllow, BlastClass: evidence.ClassLocalExec, Reason: "session"})
	require.NoError(t, err)
	assert.Equal(t, evidence.ToolAgentSession, field(t, e, evidence.FieldTool))
	assert.Equal(t, int64(2), l.Len())
	assert.True(t, l.Verify().OK())
}

// TestCellCanceledCall: a call whose context ended before its turn is
// recorded, and a file tool is not executed.
func TestCellCanceledCall(t *testing.T) {
	c, sb, l := newTestCell(t, &fakeJail{}, false)
	allowFileTools(c)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := c.Do(ctx, Call{Tool: evidence.ToolWriteFile, Params: map[string]any{"path": "late.txt", "content": "x"}, Agent: "builder"})
	require.Error(t, r.Err)
	assert.Contains(t, r.Err.Error(), "canceled before it ran")
	assert.NoFileExists(t, filepath.Join(sb, "late.txt"))
	assert.Contains(t, field(t, r.Entry, evidence.FieldError), "canceled")
	r = c.Do(ctx, Call{Tool: evidence.ToolEditFile, Params: map[string]any{"path": "README.md", "old": "x", "new": "y"}, Agent: "builder"})
	require.Error(t, r.Err)
	assert.Equal(t, "# x\n", string(mustRead(t, filepath.Join(sb, "README.md"))))
	assert.Equal(t, int64(2), l.Len())
	// Positive control: the same write with a live context happens.
	require.NoError(t, c.Act(evidence.ToolWriteFile, map[string]any{"path": "late.txt", "content": "x"}, "builder").Err)
	assert.FileExists(t, filepath.Join(sb, "late.txt"))
}

// TestCellEditAndListThroughTheGate: edit_file and list_dir behind the real
// gate — allowed inside the sandbox, refused on protected and outside
// paths, malformed calls refused — each recorded.
func TestCellEditAndListThroughTheGate(t *testing.T) {
	c, sb, l := newTestCell(t, &fakeJail{}, false)
	require.NoError(t, os.WriteFile(filepath.Join(sb, "calc.py"), []byte("return a - b\n"), 0o644))
	r := edit(c, "calc.py", "a - b", "a + b")
	require.NoError(t, r.Err)
	assert.Equal(t, string(evidence.ClassLocalWrite), field(t, r.Entry, evidence.FieldBlastClass))
	assert.Equal(t, "return a + b\n", string(mustRead(t, filepath.Join(sb, "calc.py"))))
	r = c.Act(evidence.ToolListDir, map[string]any{"path": "."}, "builder")
	require.NoError(t, r.Err)
	assert.Contains(t, string(r.Output), "calc.py  (13 bytes)")

	for _, bad := range []struct {
		tool   string
		params map[string]any
		class  evidence.Class
	}{
		{evidence.ToolEditFile, map[string]any{"path": ".git/config", "old": "a", "new": "b"}, evidence.ClassProtectedPath},
		{evidence.ToolEditFile, map[string]any{"path": "/etc/hosts", "old": "a", "new": "b"}, evidence.ClassOutOfSandboxWrite},
		{evidence.ToolEditFile, map[string]any{"path": "calc.py", "old": "", "new": "b"}, evidence.ClassMalformed},
		{evidence.ToolEditFile, map[string]any{"path": "calc.py", "old": "a"}, evidence.ClassMalformed},
		{evidence.ToolListDir, map[string]any{"path": "/etc"}, evidence.ClassOutOfSandboxRead},
		{evidence.ToolListDir, map[string]any{"dir": "."}, evidence.ClassMalformed},
	} {
		r := c.Act(bad.tool, bad.params, "builder")
		assert.Error(t, r.Err, "%s %v", bad.tool, bad.params)
		assert.False(t, r.Executed)
		assert.Equal(t, string(bad.class), field(t, r.Entry, evidence.FieldBlastClass), "%s %v", bad.tool, bad.params)
	}
	assert.Equal(t, int64(8), l.Len())
}

// TestCellEditRefusesGitConfigs: a git config outside .git (a bare
// repository in the sandbox) is not protected by the gate, but edit_file
// would read its raw bytes — credentials read_file only shows sanitized —
// and its match count would reveal them. It is refused, whatever the
// guess, and nothing changes; the control edits a plain file of the same
// name.
func TestCellEditRefusesGitConfigs(t *testing.T) {
	c, sb, _ := newTestCell(t, &fakeJail{}, false)
	bare := filepath.Join(sb, "mirror.git")
	require.NoError(t, os.MkdirAll(bare, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(bare, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644))
	cfg := "[remote \"origin\"]\n\turl = https://x-access-token:ghs_SECRET@github.com/o/r\n"
	require.NoError(t, os.WriteFile(filepath.Join(bare, "config"), []byte(cfg), 0o644))
	for _, guess := range []string{"ghs_SECRET", "ghs_NOPE"} {
		r := edit(c, "mirror.git/config", guess, "x")
		require.Error(t, r.Err)
		assert.Contains(t, r.Err.Error(), "git config")
		assert.NotContains(t, r.Err.Error(), "match", "no match count for a guess")
	}
	assert.Equal(t, cfg, string(mustRead(t, filepath.Join(bare, "config"))))
	// Control: a file named config in a directory that is no git dir.
	require.NoError(t, os.MkdirAll(filepath.Join(sb, "app"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(sb, "app", "config"), []byte("debug = false\n"), 0o644))
	require.NoError(t, edit(c, "app/config", "false", "true").Err)
}

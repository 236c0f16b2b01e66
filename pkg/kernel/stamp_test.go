package kernel

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/deponent-dev/deponent-action/internal/livetest"
	"github.com/deponent-dev/deponent-action/pkg/evidence"
	"github.com/deponent-dev/deponent-action/pkg/gate"
	"github.com/deponent-dev/deponent-action/pkg/jail"
)

// fakeClock drives a Cell's write stamp: now() is the set time, and a
// sleep moves it forward by exactly what was asked, without waiting.
type fakeClock struct {
	mu    sync.Mutex
	t     time.Time
	slept []time.Duration
}

func (f *fakeClock) now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.t
}

func (f *fakeClock) set(t time.Time) {
	f.mu.Lock()
	f.t = t
	f.mu.Unlock()
}

func (f *fakeClock) sleep(ctx context.Context, d time.Duration) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.slept = append(f.slept, d)
	f.t = f.t.Add(d)
	return ctx.Err()
}

func (f *fakeClock) sleeps() []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Duration(nil), f.slept...)
}

func useClock(c *Cell, clk *fakeClock, seen time.Time) {
	c.now, c.sleep = clk.now, clk.sleep
	c.seen = seen
}

func mtime(t *testing.T, p string) time.Time {
	t.Helper()
	fi, err := os.Stat(p)
	require.NoError(t, err)
	return fi.ModTime()
}

// sec is 12:00:00 of a day in the past, the whole second the tests reason
// about.
var sec = time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)

// TestWriteStampAfterACommand: a write in the second a command ended
// waits for that second to turn and carries the next second's start; a
// write with no command since the last one, or since long ago, does not
// wait and carries the clock's time.
func TestWriteStampAfterACommand(t *testing.T) {
	c, sb, _ := newTestCell(t, &fakeJail{}, false)
	clk := &fakeClock{t: sec.Add(300 * time.Millisecond)}
	useClock(c, clk, sec.Add(-time.Hour))
	p := filepath.Join(sb, "a.txt")

	r := c.Act("write_file", map[string]any{"path": "a.txt", "content": "one"}, "builder")
	require.NoError(t, r.Err)
	assert.Empty(t, clk.sleeps(), "nothing ran since the Cell was made: no wait")
	assert.True(t, mtime(t, p).Equal(sec.Add(300*time.Millisecond)), "the stamp is the clock's time: %v", mtime(t, p))

	clk.set(sec.Add(400 * time.Millisecond))
	require.NoError(t, c.Act("run_cmd", map[string]any{"cmd": "ls"}, "builder").Err)
	clk.set(sec.Add(700 * time.Millisecond))
	r = c.Act("write_file", map[string]any{"path": "a.txt", "content": "two"}, "builder")
	require.NoError(t, r.Err)
	assert.Equal(t, []time.Duration{300 * time.Millisecond}, clk.sleeps(), "it waited for the command's second to turn")
	assert.True(t, mtime(t, p).Equal(sec.Add(time.Second)), "the stamp is the next second's start: %v", mtime(t, p))
	assert.Equal(t, "two", string(mustRead(t, p)))

	// Another write with no command in between: no cache saw the first.
	r = c.Act("write_file", map[string]any{"path": "a.txt", "content": "six"}, "builder")
	require.NoError(t, r.Err)
	assert.Len(t, clk.sleeps(), 1, "no second wait")
	assert.True(t, mtime(t, p).Equal(sec.Add(time.Second)))

	// A command that ran later, in a later second.
	clk.set(sec.Add(5*time.Second + 100*time.Millisecond))
	require.NoError(t, c.Act("run_cmd", map[string]any{"cmd": "ls"}, "builder").Err)
	clk.set(sec.Add(7 * time.Second))
	require.NoError(t, c.Act("write_file", map[string]any{"path": "b.txt", "content": "x"}, "builder").Err)
	assert.Len(t, clk.sleeps(), 1, "the command's second is over: no wait")
	assert.True(t, mtime(t, filepath.Join(sb, "b.txt")).Equal(sec.Add(7*time.Second)))
}

// TestWriteStampOldMtimeInTheFuture: a file whose mtime a command set
// ahead of the clock may have been cached with that second; the new stamp
// avoids it. One far ahead needs no wait: the clock's second differs.
func TestWriteStampOldMtimeInTheFuture(t *testing.T) {
	c, sb, _ := newTestCell(t, &fakeJail{}, false)
	clk := &fakeClock{t: sec.Add(100 * time.Millisecond)}
	useClock(c, clk, sec.Add(-time.Hour))
	p := filepath.Join(sb, "f.txt")
	require.NoError(t, os.WriteFile(p, []byte("old"), 0o644))
	require.NoError(t, os.Chtimes(p, sec.Add(800*time.Millisecond), sec.Add(800*time.Millisecond)))
	require.NoError(t, c.Act("write_file", map[string]any{"path": "f.txt", "content": "new"}, "builder").Err)
	assert.Equal(t, []time.Duration{900 * time.Millisecond}, clk.sleeps())
	assert.True(t, mtime(t, p).Equal(sec.Add(time.Second)), "%v", mtime(t, p))

	far := sec.Add(time.Hour)
	require.NoError(t, os.Chtimes(p, far, far))
	require.NoError(t, c.Act("write_file", map[string]any{"path": "f.txt", "content": "newer"}, "builder").Err)
	assert.Len(t, clk.sleeps(), 1)
	assert.True(t, mtime(t, p).Equal(sec.Add(time.Second)), "the clock's time, a second the far one is not: %v", mtime(t, p))
}

// TestWriteStampClockWentBack: when the clock is behind the last
// command's end by more than the longest wait, the stamp is set past that
// end, ahead of the clock, rather than waiting.
func TestWriteStampClockWentBack(t *testing.T) {
	c, sb, _ := newTestCell(t, &fakeJail{}, false)
	clk := &fakeClock{t: sec}
	useClock(c, clk, sec.Add(10*time.Second+500*time.Millisecond))
	require.NoError(t, c.Act("write_file", map[string]any{"path": "g.txt", "content": "x"}, "builder").Err)
	assert.Empty(t, clk.sleeps())
	assert.True(t, mtime(t, filepath.Join(sb, "g.txt")).Equal(sec.Add(11*time.Second)))
}

// TestWriteStampCancelled: a write that must wait is not made when the
// context ends during the wait; the old content stays, and the entry
// records why.
func TestWriteStampCancelled(t *testing.T) {
	c, sb, _ := newTestCell(t, &fakeJail{}, false)
	p := filepath.Join(sb, "h.txt")
	require.NoError(t, os.WriteFile(p, []byte("old"), 0o644))
	c.sawUntil(c.now()) // a command just ended: the write must wait
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := c.Do(ctx, Call{Tool: evidence.ToolWriteFile, Params: map[string]any{"path": "h.txt", "content": "new"}, Agent: "builder"})
	require.Error(t, r.Err)
	assert.Contains(t, field(t, r.Entry, evidence.FieldError), "not written")
	assert.Equal(t, "old", string(mustRead(t, p)))
	left, _ := filepath.Glob(filepath.Join(sb, ".*deponent-tmp*"))
	assert.Empty(t, left)
}

// liveJail is the best jail here, or a loud skip (a failure under
// DEPONENT_REQUIRE_JAIL=1).
func liveJail(t *testing.T) jail.Backend {
	t.Helper()
	b, err := jail.Select("auto", jail.Options{})
	if err != nil {
		livetest.Skip(t, livetest.RequireJailEnv, "no usable jail here: "+err.Error())
	}
	return b
}

func needProgram(t *testing.T, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		livetest.Skip(t, livetest.RequireJailEnv, name+", which this live test runs in the jail, is not on PATH")
	}
}

func liveCell(t *testing.T, policy string) (*Cell, string) {
	t.Helper()
	b := liveJail(t)
	sb, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	var p *gate.Policy
	if policy != "" {
		p, err = gate.ParsePolicy([]byte(policy))
		require.NoError(t, err)
	}
	g, err := gate.NewGate(sb, p)
	require.NoError(t, err)
	l, err := evidence.OpenLedger(evidence.LedgerOptions{})
	require.NoError(t, err)
	c, err := NewCell(CellOptions{Gate: g, Ledger: l, Jail: b})
	require.NoError(t, err)
	return c, sb
}

func run(t *testing.T, c *Cell, cmd string) ActResult {
	t.Helper()
	r := c.Act(evidence.ToolRunCmd, map[string]any{"cmd": cmd}, "builder")
	require.NoError(t, r.Err, "%s: %s", cmd, r.Output)
	require.True(t, r.Executed, cmd)
	return r
}

// TestLiveSameSecondFixIsSeenByPython is issue 18's plan with real Python
// in the real jail: the tests fail, calc.py is fixed by write_file with a
// change of the same size, in the second its old version was written and
// compiled, and the tests pass. Python validates __pycache__/calc.*.pyc by
// the source's mtime in whole seconds and its size; the bytecode is
// written explicitly (py_compile writes it whatever
// PYTHONDONTWRITEBYTECODE says), as a build step would. The Cell's clock
// is pinned inside that second, so the race is not left to chance. The
// negative control writes the same fix with the clock's own time as the
// mtime (no stamp): Python then runs the stale bytecode and the tests
// still fail — so this test can catch the bug.
func TestLiveSameSecondFixIsSeenByPython(t *testing.T) {
	needProgram(t, "python3")
	for _, defended := range []bool{true, false} {
		name := map[bool]string{true: "stamped", false: "negative-control-unstamped"}[defended]
		t.Run(name, func(t *testing.T) {
			c, sb := liveCell(t, "")
			calc := filepath.Join(sb, "calc.py")
			require.NoError(t, os.WriteFile(calc, []byte("def add(a, b):\n    return a - b\n"), 0o644))
			require.NoError(t, os.WriteFile(filepath.Join(sb, "test_calc.py"), []byte(
				"import unittest\nimport calc\n\n\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(calc.add(2, 3), 5)\n\n\nif __name__ == '__main__':\n    unittest.main()\n"), 0o644))
			old := time.Now().Add(-2 * time.Hour).Truncate(time.Second).Add(200 * time.Millisecond)
			require.NoError(t, os.Chtimes(calc, old, old))
			clk := &fakeClock{t: old.Add(300 * time.Millisecond)}
			c.now, c.sleep = clk.now, clk.sleep
			if !defended {
				c.stamp = func(context.Context, time.Time, bool) (time.Time, error) { return c.now(), nil }
			}

			run(t, c, "python3 -m py_compile calc.py")
			pyc, _ := filepath.Glob(filepath.Join(sb, "__pycache__", "calc.*.pyc"))
			require.Len(t, pyc, 1, "the bytecode a build step left")
			r := run(t, c, "python3 -m unittest -q test_calc")
			require.NotEqual(t, 0, r.ExitCode, "the bug is there: %s", r.Output)

			w := c.Act(evidence.ToolWriteFile, map[string]any{"path": "calc.py", "content": "def add(a, b):\n    return a + b\n"}, "builder")
			require.NoError(t, w.Err)
			r = run(t, c, "python3 -m unittest -q test_calc")
			if defended {
				assert.Equal(t, 0, r.ExitCode, "the fix is seen: %s", r.Output)
				assert.Greater(t, mtime(t, calc).Unix(), old.Unix(), "a later second than the one the bytecode records")
			} else {
				assert.NotEqual(t, 0, r.ExitCode, "negative control: without the stamp Python runs the stale bytecode: %s", r.Output)
				assert.Equal(t, old.Unix(), mtime(t, calc).Unix())
			}
		})
	}
}

// TestLiveSameSecondInputIsSeenByMake: make builds out.txt from in.txt,
// then write_file rewrites in.txt (same size) in the second out.txt was
// built, and make must rebuild. On Linux filesystems make compares
// nanoseconds, where a later write is newer anyway; the case that bites is
// a one-second timestamp granularity (older filesystems, network and
// container mounts, tools that compare seconds). The test emulates it for
// out.txt (its mtime cut to the second, as such a filesystem stores it).
// Stamped, in.txt lies in a later second and make rebuilds; the negative
// control (the clock pinned in out.txt's second, the mtime cut to the
// second the same way) leaves in.txt no newer, and make does not rebuild.
func TestLiveSameSecondInputIsSeenByMake(t *testing.T) {
	needProgram(t, "make")
	for _, defended := range []bool{true, false} {
		name := map[bool]string{true: "stamped", false: "negative-control-unstamped"}[defended]
		t.Run(name, func(t *testing.T) {
			c, sb := liveCell(t, `{"extra_allow_heads": ["make"]}`)
			require.NoError(t, os.WriteFile(filepath.Join(sb, "Makefile"), []byte("out.txt: in.txt\n\tcp in.txt out.txt\n"), 0o644))
			in, out := filepath.Join(sb, "in.txt"), filepath.Join(sb, "out.txt")
			require.NoError(t, os.WriteFile(in, []byte("v1\n"), 0o644))
			past := time.Now().Add(-time.Hour)
			require.NoError(t, os.Chtimes(in, past, past))

			run(t, c, "make")
			require.Equal(t, "v1\n", string(mustRead(t, out)))
			built := mtime(t, out).Truncate(time.Second)
			require.NoError(t, os.Chtimes(out, built, built))
			if !defended {
				clk := &fakeClock{t: built.Add(500 * time.Millisecond)}
				c.now, c.sleep = clk.now, clk.sleep
				c.stamp = func(context.Context, time.Time, bool) (time.Time, error) { return c.now().Truncate(time.Second), nil }
			}

			require.NoError(t, c.Act(evidence.ToolWriteFile, map[string]any{"path": "in.txt", "content": "v2\n"}, "builder").Err)
			r := run(t, c, "make")
			require.Equal(t, 0, r.ExitCode, "%s", r.Output)
			if defended {
				assert.Equal(t, "v2\n", string(mustRead(t, out)), "make saw the new input: %s", r.Output)
				assert.Greater(t, mtime(t, in).Unix(), built.Unix())
			} else {
				assert.Equal(t, "v1\n", string(mustRead(t, out)), "negative control: make kept the stale output: %s", r.Output)
			}
		})
	}
}

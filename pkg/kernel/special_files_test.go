package kernel

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/deponent-dev/deponent-action/pkg/evidence"
)

// TestLiveFileToolsDoNotBlockOnAPlantedFIFO: a jailed, allowed step leaves
// named pipes where the agent's next file tool looks (a file to read or
// edit, a directory to list). The Cell opens them outside the jail, holding
// the lock every call of the session waits on: an open that waits for a
// writer hangs the whole session. Each tool must return at once with an
// error that says what the path is. Were one to block, the test unblocks it
// by opening the pipe for writing (so it fails on the assertions, not by
// hanging). The controls: the pipe really has no writer (a non-blocking
// open for writing fails with ENXIO, so a plain open for reading would
// wait), and a regular file the same step wrote reads, edits and lists.
func TestLiveFileToolsDoNotBlockOnAPlantedFIFO(t *testing.T) {
	needProgram(t, "python3")
	c, sb := liveCell(t, "")
	run(t, c, `python3 -c "import os; os.mkfifo('pipe'); os.mkdir('d'); os.mkfifo('d/pipe'); open('plain.txt', 'w').write('abc')"`)
	fi, err := os.Lstat(filepath.Join(sb, "pipe"))
	require.NoError(t, err)
	require.True(t, fi.Mode()&os.ModeNamedPipe != 0, "the step made a FIFO: %s", fi.Mode())
	_, err = os.OpenFile(filepath.Join(sb, "pipe"), os.O_WRONLY|syscall.O_NONBLOCK, 0)
	require.True(t, errors.Is(err, syscall.ENXIO), "control: nothing reads the pipe, so a plain open for reading waits: %v", err)

	call := func(tool string, params map[string]any) ActResult {
		t.Helper()
		done := make(chan ActResult, 1)
		go func() { done <- c.Act(tool, params, "builder") }()
		select {
		case r := <-done:
			return r
		case <-time.After(20 * time.Second):
			// Blocked on the pipe: give it a writer so the call returns.
			if w, err := os.OpenFile(filepath.Join(sb, params["path"].(string)), os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				w.Close()
			}
			r := <-done
			t.Errorf("%s %v blocked on a named pipe", tool, params["path"])
			return r
		}
	}
	for _, tc := range []struct {
		tool   string
		params map[string]any
		want   string
	}{
		{evidence.ToolReadFile, map[string]any{"path": "pipe"}, "not a regular file (named pipe)"},
		{evidence.ToolEditFile, map[string]any{"path": "pipe", "old": "a", "new": "b"}, "not a regular file (named pipe)"},
		{evidence.ToolListDir, map[string]any{"path": "pipe"}, "not a directory (named pipe)"},
	} {
		r := call(tc.tool, tc.params)
		require.Equal(t, evidence.VerdictAllow, r.Decision.Verdict, "%s: %s", tc.tool, r.Decision.Reason)
		require.Error(t, r.Err, tc.tool)
		assert.Contains(t, r.Err.Error(), tc.want, tc.tool)
	}
	// A directory holding a pipe lists without opening it.
	r := call(evidence.ToolListDir, map[string]any{"path": "d"})
	require.NoError(t, r.Err)
	assert.Contains(t, string(r.Output), "pipe  (other: named pipe)")

	// Controls: the regular file of the same step reads, edits and lists.
	r = call(evidence.ToolReadFile, map[string]any{"path": "plain.txt"})
	require.NoError(t, r.Err)
	assert.Equal(t, "abc", string(r.Output))
	r = call(evidence.ToolEditFile, map[string]any{"path": "plain.txt", "old": "b", "new": "B"})
	require.NoError(t, r.Err)
	assert.Equal(t, "aBc", string(mustRead(t, filepath.Join(sb, "plain.txt"))))
	r = call(evidence.ToolListDir, map[string]any{"path": "."})
	require.NoError(t, r.Err)
	assert.Contains(t, string(r.Output), "plain.txt  (3 bytes)")
}

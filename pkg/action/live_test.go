package action

import (
	"bytes"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestLiveWriter: lines are copied as they complete, each sanitized and
// behind the prefix (so none can start a workflow command), a last
// partial line on Close; the copy stops at the cap with a line that says
// so; writes after Close are dropped; Write never fails.
func TestLiveWriter(t *testing.T) {
	var out bytes.Buffer
	l := newLiveWriter(&out, "  | ", "output (live):", 1000)
	n, err := l.Write([]byte("one\ntw"))
	assert.NoError(t, err)
	assert.Equal(t, 6, n)
	assert.Equal(t, "output (live):\n  | one\n", out.String(), "only complete lines, header first")
	l.Write([]byte("o\r\n::error::forged\n\x1b[31mred\xff\nlast"))
	assert.True(t, l.Close(), "everything was shown")
	assert.Equal(t, "output (live):\n  | one\n  | two\n  | ::error::forged\n  | \\u001b[31mred\\xff\n  | last\n", out.String())
	assert.Equal(t, 5, l.Lines())
	l.Write([]byte("after close\n"))
	assert.NotContains(t, out.String(), "after close")

	// The cap: the rest is in the output file.
	out.Reset()
	l = newLiveWriter(&out, "| ", "", 50)
	for i := 0; i < 20; i++ {
		l.Write([]byte("0123456789\n"))
	}
	assert.False(t, l.Close(), "cut")
	assert.LessOrEqual(t, strings.Count(out.String(), "0123456789"), 4)
	assert.Contains(t, out.String(), "| … live output stopped after 39 bytes; the full output is in the file named below\n")

	// A very long line is cut, not buffered without bound.
	out.Reset()
	l = newLiveWriter(&out, "| ", "", 1<<20)
	l.Write(bytes.Repeat([]byte("x"), 3*maxLiveLine))
	l.Write([]byte("\nnext\n"))
	l.Close()
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	assert.Len(t, lines, 2)
	assert.LessOrEqual(t, len([]rune(lines[0])), maxLiveLine+2)
	assert.Equal(t, "| next", lines[1])
}

// TestLiveWriterConcurrent: the jail copies from its own goroutine (run
// with -race).
func TestLiveWriterConcurrent(t *testing.T) {
	var out bytes.Buffer
	l := newLiveWriter(&out, "| ", "", 1<<20)
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 100; j++ {
				l.Write([]byte("line\n"))
			}
		}()
	}
	wg.Wait()
	l.Close()
	assert.Equal(t, 800, strings.Count(out.String(), "| line\n"))
}

package action

import (
	"bytes"
	"fmt"
	"io"
	"sync"

	"github.com/deponent-dev/deponent-action/internal/textsafe"
)

// LiveBytes caps the output of one command copied to the log while it
// runs; the full output is kept in a file beside the receipt.
const LiveBytes = 256 << 10

// maxLiveLine caps one line of live output (a longer line is cut and the
// rest of it dropped until the next line break).
const maxLiveLine = 4000

// liveWriter copies a running command's output into the log, one
// sanitized line at a time (textsafe.OneLine, so no control character or
// invalid UTF-8 reaches the log raw), each line behind a prefix so that
// none starts a workflow command even outside a ::stop-commands:: fence.
// At most max bytes of lines are written; then one line says the rest is
// in the output file. It is safe for the jail's copying goroutine; after
// Close every write is dropped.
type liveWriter struct {
	mu      sync.Mutex
	w       io.Writer
	prefix  string
	max     int
	written int
	partial []byte
	lines   int
	cut     bool
	closed  bool
	failed  bool // a write to w failed: stop copying
	header  string
}

func newLiveWriter(w io.Writer, prefix, header string, max int) *liveWriter {
	return &liveWriter{w: w, prefix: prefix, header: header, max: max}
}

// Write never fails: the command must not notice the log.
func (l *liveWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed || l.cut || l.failed {
		return len(p), nil
	}
	rest := p
	for len(rest) > 0 {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			if len(l.partial) < maxLiveLine+1 {
				room := maxLiveLine + 1 - len(l.partial)
				l.partial = append(l.partial, rest[:min(room, len(rest))]...)
			}
			break
		}
		if len(l.partial) < maxLiveLine+1 {
			room := maxLiveLine + 1 - len(l.partial)
			l.partial = append(l.partial, rest[:min(room, i)]...)
		}
		rest = rest[i+1:]
		l.emit()
		if l.cut || l.failed {
			break
		}
	}
	return len(p), nil
}

// emit writes the pending line; l.mu is held.
func (l *liveWriter) emit() {
	line := string(bytes.TrimSuffix(l.partial, []byte("\r")))
	l.partial = l.partial[:0]
	text := l.prefix + textsafe.Clip(textsafe.OneLine(line), maxLiveLine) + "\n"
	if l.lines == 0 && l.header != "" {
		text = l.header + "\n" + text
	}
	if l.written+len(text) > l.max {
		l.cut = true
		l.writeRaw(fmt.Sprintf("%s… live output stopped after %d bytes; the full output is in the file named below\n", l.prefix, l.written))
		return
	}
	l.written += len(text)
	l.lines++
	l.writeRaw(text)
}

func (l *liveWriter) writeRaw(s string) {
	if _, err := io.WriteString(l.w, s); err != nil {
		l.failed = true
	}
}

// Close writes a last line without a line break, if any, and stops the
// copy. It reports whether the whole output was shown (nothing cut,
// nothing failed).
func (l *liveWriter) Close() (complete bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.closed && !l.cut && !l.failed && len(l.partial) > 0 {
		l.emit()
	}
	l.closed = true
	return !l.cut && !l.failed
}

// Lines is how many lines were shown.
func (l *liveWriter) Lines() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lines
}

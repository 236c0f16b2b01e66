package verify

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/deponent-dev/deponent-action/pkg/canon"
	"github.com/deponent-dev/deponent-action/pkg/evidence"
)

// checkLedger recomputes a bare JSONL ledger read from rd. It streams: the
// kernel verifies in bounded memory on all cores. With --max-blocked, a
// second reader parses the same bytes as they pass (one read, so both see
// the same file) and counts the agent's blocked entries.
func checkLedger(it *Item, rd io.Reader, o *Options, standalone bool) {
	opts := evidence.VerifyOptions{Anchors: o.Anchors}
	var scan *lineScan
	if o.MaxBlocked != nil {
		scan = &lineScan{blocked: newBlockedScan()}
		var wait func()
		rd, wait = scan.tee(rd)
		defer wait() // also on a panic in package evidence: the scanner must not leak
	}
	rep, err := evidence.VerifyLedger(rd, opts)
	it.Entries, it.Allowed, it.Blocked, it.Head = rep.Entries, rep.Allowed, rep.Blocked, rep.Head
	if err != nil {
		it.fail("", "cannot read: %v", err)
		return
	}
	if b := rep.Break; b != nil {
		where := "chain"
		if b.Kind != evidence.BreakLength && b.Kind != evidence.BreakHead {
			where = fmt.Sprintf("line %d (entry %d)", b.Index+1, b.Index)
		}
		it.fail(where, "%s: %s", b.Kind, b.Detail)
		return
	}
	if rep.Entries == 0 && o.Len == nil {
		// An empty chain is consistent, and proves nothing: an empty or
		// emptied file must not pass unless emptiness is what is expected.
		it.fail("", "empty ledger: no entries to verify (pass --expect-len 0 if an empty chain is expected)")
		return
	}
	it.Verified = true
	if fs := o.receiptOnly(); len(fs) > 0 && standalone {
		it.fail("", "a bare ledger records no outcome, no run configuration and no provenance, so it cannot show %s: pass its receipt, or --chain-only to check the chain alone", strings.Join(fs, ", "))
	}
	if scan != nil {
		scan.finish()
		if scan.broken != "" {
			// Package evidence accepted what the scanner could not read: never
			// expected, and never a pass.
			it.fail("", "blocked-entry count: %s", scan.broken)
		}
		scan.blocked.report(it, o)
	}
}

// lineScan feeds the lines of a ledger, as package evidence reads them,
// to a blockedScan, through a pipe fed by an io.TeeReader.
type lineScan struct {
	blocked *blockedScan
	pw      *io.PipeWriter
	done    chan struct{}
	broken  string // why scanning stopped early, if it did
	closed  bool
}

func (s *lineScan) tee(rd io.Reader) (io.Reader, func()) {
	pr, pw := io.Pipe()
	s.pw, s.done = pw, make(chan struct{})
	go func() {
		defer close(s.done)
		func() {
			defer func() {
				if p := recover(); p != nil {
					s.broken = fmt.Sprintf("internal error: %v", p)
				}
			}()
			s.lines(pr)
		}()
		// Whatever happened above, keep draining: package evidence's reader is
		// blocked on the tee until these bytes are taken.
		_, _ = io.Copy(io.Discard, pr)
	}()
	return io.TeeReader(rd, pw), s.finish
}

// finish waits for the scanner; safe to call twice.
func (s *lineScan) finish() {
	if s.closed {
		return
	}
	s.closed = true
	s.pw.Close()
	<-s.done
}

// lines parses each line as an entry and counts it. It stops at the first
// line it cannot read; package evidence reports that line as the break.
func (s *lineScan) lines(r io.Reader) {
	br := bufio.NewReaderSize(r, 64<<10)
	var line []byte
	for i := int64(0); ; i++ {
		var err error
		line, err = readLine(br, line[:0], evidence.MaxLedgerLine)
		if err != nil {
			if !errors.Is(err, io.EOF) || len(line) > 0 {
				s.broken = fmt.Sprintf("line %d: %v", i+1, err)
			}
			return
		}
		e, err := canon.Parse(line, evidence.EntryLimits)
		if err != nil {
			s.broken = fmt.Sprintf("line %d: %v", i+1, err)
			return
		}
		s.blocked.add(e)
	}
}

var errLineTooLong = errors.New("line is over the cap")

// readLine appends the next line, without its "\n", to buf. A line longer
// than max is refused after max bytes. io.EOF with a non-empty result is a
// torn last line.
func readLine(br *bufio.Reader, buf []byte, max int) ([]byte, error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if len(buf)+len(chunk) > max+1 {
			return buf, errLineTooLong
		}
		buf = append(buf, chunk...)
		switch {
		case err == nil:
			return bytes.TrimSuffix(buf, []byte{'\n'}), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(buf) > 0:
			return buf, io.EOF
		default:
			return buf, err
		}
	}
}

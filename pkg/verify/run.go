package verify

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/deponent-dev/deponent-action/pkg/evidence"
)

// Run verifies every PATH under o and returns the report. A bad option or
// command line is a *UsageError and no report. Run never panics: a panic
// while verifying an item fails that item.
func Run(paths []string, o Options) (rep *Report, err error) {
	if len(paths) == 0 {
		return nil, usagef("no PATH given")
	}
	if stdin := slices.Index(paths, "-"); stdin >= 0 && slices.Contains(paths[stdin+1:], "-") {
		return nil, usagef(`"-" (standard input) given more than once: it holds one receipt`)
	}
	if err := o.Validate(); err != nil {
		return nil, err
	}
	r := &runner{o: &o, mem: newBudget(MemoryBudget)}
	defer r.close()
	defer func() {
		// Last resort: every phase below recovers into an item already.
		if p := recover(); p != nil {
			r.items = append(r.items, Item{Path: "deponent-verify", Kind: KindPolicy})
			r.items[len(r.items)-1].fail("", "internal error (a bug, reported as a failure): %v", p)
			rep, err = newReport(&o, r.items), nil
		}
	}()
	for _, p := range paths {
		r.addPath(p)
	}
	r.runJobs()
	for _, c := range r.containers {
		r.finishContainer(c)
	}
	r.checkReceipts()
	r.checkApplied()
	return newReport(&o, r.items), nil
}

// runner holds one run. items are the output slots, in output order; jobs
// fill the receipt and ledger slots in parallel, each its own slot.
type runner struct {
	o          *Options
	items      []Item
	jobs       []job
	containers []*container
	closers    []io.Closer
	mem        *budget
	bufs       buffers
	ledgerMu   sync.Mutex // one ledger at a time: package evidence already uses every core on one
}

type job struct {
	slot int
	kind Kind
	open opener
	// standalone: named on the command line, not found in a container. A
	// standalone ledger is the evidence asked about, so receipt-level
	// policies fail on it; one in a container is checked against the
	// receipts beside it instead.
	standalone bool
	// outputs: a receipt with an outputs-<session>/ directory beside it,
	// whose entries' outcome hashes are kept for checkOutputs.
	outputs bool
}

func (r *runner) close() {
	for _, c := range r.closers {
		c.Close()
	}
}

func (r *runner) newItem(p string, k Kind) int {
	r.items = append(r.items, Item{Path: p, Kind: k})
	return len(r.items) - 1
}

// addJob adds an item verified by the worker pool and returns its slot.
func (r *runner) addJob(p string, k Kind, open opener) int {
	slot := r.newItem(p, k)
	r.jobs = append(r.jobs, job{slot: slot, kind: k, open: open})
	return slot
}

// addStandalone adds a job for a PATH named on the command line.
func (r *runner) addStandalone(p string, k Kind, open opener) {
	r.addJob(p, k, open)
	r.jobs[len(r.jobs)-1].standalone = true
}

// recoverInto turns a panic into a failure of the item in slot.
func (r *runner) recoverInto(slot int) {
	if p := recover(); p != nil {
		r.items[slot].fail("", "internal error (a bug, reported as a failure): %v", p)
	}
}

// addPath classifies one PATH of the command line.
func (r *runner) addPath(p string) {
	if p == "-" {
		r.addStandalone(p, KindReceipt, stdinOpener(r.o.Stdin, r.o.readTimeout()))
		return
	}
	st, err := os.Stat(p) // a symlink named on the command line is followed: the user chose it
	if err != nil {
		slot := r.newItem(p, kindByName(p))
		r.items[slot].fail("", "cannot read: %s", describeErr(err))
		return
	}
	switch {
	case st.IsDir():
		r.addDir(p)
	case st.Mode().IsRegular():
		r.addFile(p)
	default:
		// A pipe or device named on the command line, e.g. <(gh api …):
		// read as one stream.
		k := KindReceipt
		if hasExt(p, ".jsonl") {
			k = KindLedger
		}
		r.addStandalone(p, k, streamOpener(p, r.o.readTimeout()))
	}
}

// kindByName is the kind a missing PATH would have had, for its line.
func kindByName(p string) Kind {
	switch {
	case hasExt(p, ".zip"):
		return KindZip
	case hasExt(p, ".jsonl"):
		return KindLedger
	case hasExt(p, ".json"):
		return KindReceipt
	}
	return KindEntry
}

// addFile adds a regular file named on the command line, by its name (or,
// for an unknown extension, its magic number).
func (r *runner) addFile(p string) {
	base := filepath.Base(p)
	switch classify(base) {
	case refIndex, refLatest:
		slot := r.newItem(p, KindEntry)
		r.items[slot].fail("", "%s is a store's bookkeeping file, not evidence on its own: pass the directory that holds it", base)
	case refReceipt:
		r.addStandalone(p, KindReceipt, fileOpener(p, true))
	case refLedger:
		r.addStandalone(p, KindLedger, fileOpener(p, true))
	default:
		if hasExt(base, ".zip") || looksLikeZip(p) {
			r.addZip(p)
			return
		}
		slot := r.newItem(p, KindEntry)
		r.items[slot].fail("", "not a receipt (.json), a ledger (.jsonl), an artifact (.zip) or a directory")
	}
}

// looksLikeZip sniffs a file without a known extension (an artifact saved
// from the API has none) for a zip's magic number.
func looksLikeZip(p string) bool {
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	var magic [4]byte
	if _, err := io.ReadFull(f, magic[:]); err != nil {
		return false
	}
	return string(magic[:]) == "PK\x03\x04" || string(magic[:]) == "PK\x05\x06"
}

func stdinOpener(in io.Reader, limit time.Duration) opener {
	return within(limit, func() (io.ReadCloser, int64, error) {
		if in == nil {
			in = strings.NewReader("")
		}
		return io.NopCloser(in), -1, nil
	})
}

func streamOpener(p string, limit time.Duration) opener {
	return within(limit, func() (io.ReadCloser, int64, error) {
		f, err := os.Open(p) // blocks until a FIFO has a writer: hence within
		if err != nil {
			return nil, 0, fmt.Errorf("%s", describeErr(err))
		}
		return f, -1, nil
	})
}

// within bounds opening and reading a stream (standard input, a pipe, a
// device) by limit, from the open to the last byte; 0 = no limit. A read
// still blocked when the time is up is abandoned to its goroutine: the
// item fails, the run goes on, and the process exits when it ends.
func within(limit time.Duration, open opener) opener {
	if limit <= 0 {
		return open
	}
	return func() (io.ReadCloser, int64, error) {
		deadline := time.Now().Add(limit)
		type opened struct {
			rc   io.ReadCloser
			size int64
			err  error
		}
		ch := make(chan opened, 1)
		go func() {
			rc, size, err := open()
			ch <- opened{rc, size, err}
		}()
		timer := time.NewTimer(limit)
		defer timer.Stop()
		select {
		case o := <-ch:
			if o.err != nil {
				return nil, 0, o.err
			}
			return &deadlineReader{rc: o.rc, deadline: deadline, limit: limit}, o.size, nil
		case <-timer.C:
			go func() {
				if o := <-ch; o.rc != nil {
					o.rc.Close()
				}
			}()
			return nil, 0, fmt.Errorf("nothing could be opened within --read-timeout %s (a pipe that no one writes to?)", limit)
		}
	}
}

// deadlineReader fails a read that is not done by the deadline.
type deadlineReader struct {
	rc       io.ReadCloser
	deadline time.Time
	limit    time.Duration
	pending  chan readResult // a read in flight, if one timed out before
}

type readResult struct {
	b   []byte
	err error
}

func (d *deadlineReader) Read(p []byte) (int, error) {
	if d.pending == nil {
		d.pending = make(chan readResult, 1)
		buf := make([]byte, len(p))
		ch := d.pending
		go func() {
			n, err := d.rc.Read(buf)
			ch <- readResult{buf[:n], err}
		}()
	}
	left := time.Until(d.deadline)
	if left <= 0 {
		return 0, d.timeout()
	}
	timer := time.NewTimer(left)
	defer timer.Stop()
	select {
	case res := <-d.pending:
		d.pending = nil
		return copy(p, res.b), res.err
	case <-timer.C:
		return 0, d.timeout()
	}
}

func (d *deadlineReader) timeout() error {
	return fmt.Errorf("not read to its end within --read-timeout %s (standard input or a pipe that does not close?)", d.limit)
}

func (d *deadlineReader) Close() error { return d.rc.Close() }

// runJobs verifies every receipt and ledger on a bounded pool of workers.
func (r *runner) runJobs() {
	workers := r.o.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	ch := make(chan job)
	var wg sync.WaitGroup
	for range min(workers, len(r.jobs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range ch {
				r.runJob(j)
			}
		}()
	}
	for _, j := range r.jobs {
		ch <- j
	}
	close(ch)
	wg.Wait()
	r.jobs = nil
}

func (r *runner) runJob(j job) {
	defer r.recoverInto(j.slot)
	it := &r.items[j.slot]
	rc, size, err := j.open()
	if err != nil {
		it.fail("", "cannot read: %v", err)
		return
	}
	defer rc.Close()
	switch j.kind {
	case KindReceipt:
		r.receipt(it, rc, size, j.outputs)
	case KindLedger:
		r.ledgerMu.Lock()
		defer r.ledgerMu.Unlock()
		checkLedger(it, rc, r.o, j.standalone)
	}
}

// receipt reads one receipt under the size cap and the memory budget, then
// verifies it. Only the item's facts outlive this call.
func (r *runner) receipt(it *Item, rc io.Reader, size int64, outputs bool) {
	if size > evidence.MaxReceiptBytes {
		it.fail("", "%d bytes, over the %d-byte receipt cap: not read", size, evidence.MaxReceiptBytes)
		return
	}
	w := size
	if w < 0 {
		w = 2 * evidence.MaxReceiptBytes // read by doubling: up to twice the cap at once
	}
	w = r.mem.acquire(w + receiptOverhead)
	defer r.mem.release(w)
	data, err := r.bufs.read(rc, size, evidence.MaxReceiptBytes)
	defer r.bufs.put(data)
	if err != nil {
		it.fail("", "cannot read: %v", err)
		return
	}
	if len(data) > evidence.MaxReceiptBytes {
		it.fail("", "over the %d-byte receipt cap", evidence.MaxReceiptBytes)
		return
	}
	checkReceipt(it, data, r.o, outputs) // keeps nothing of data
}

// buffers are a run's read buffers, reused from one receipt to the next:
// thousands of small receipts need not each cost a new one, and receipts
// near the cap (read one after the other: see MemoryBudget) share one
// rather than leaving one behind as garbage for each. At most
// MemoryBudget of them is kept.
type buffers struct {
	mu    sync.Mutex
	free  [][]byte
	bytes int
}

func (p *buffers) get(n int) []byte {
	p.mu.Lock()
	best := -1
	for i, b := range p.free {
		if cap(b) >= n && (best < 0 || cap(b) < cap(p.free[best])) {
			best = i
		}
	}
	if best >= 0 {
		b := p.free[best]
		p.free = slices.Delete(p.free, best, best+1)
		p.bytes -= cap(b)
		p.mu.Unlock()
		return b[:n]
	}
	p.mu.Unlock()
	return make([]byte, n, max(n, 64<<10))
}

func (p *buffers) put(b []byte) {
	if cap(b) == 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bytes+cap(b) <= MemoryBudget {
		p.free = append(p.free, b[:0])
		p.bytes += cap(b)
	}
}

// read reads rc to its end, or to one byte past limit. A size known (a
// file's, or a zip member's declaration, which archive/zip holds it to) is
// read into a buffer of that size, reused; an unknown one (a pipe) by
// doubling.
func (p *buffers) read(rc io.Reader, size int64, limit int64) ([]byte, error) {
	if size < 0 || size > limit {
		return io.ReadAll(io.LimitReader(rc, limit+1))
	}
	buf := p.get(int(size) + 1) // +1: a file that grew since its size was taken shows
	n, err := io.ReadFull(rc, buf)
	switch {
	case err == nil: // it grew: read the rest, capped
		more, err := io.ReadAll(io.LimitReader(rc, limit+1-int64(n)))
		return append(buf[:n], more...), err
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return buf[:n], nil
	}
	return buf[:0], err
}

// checkReceipts counts the distinct receipts that verified, against
// --min-receipts: a receipt read twice (a store and its zip, a copy) is
// counted once, and two receipts that claim one id with different
// content both fail.
func (r *runner) checkReceipts() {
	type seen struct {
		slot int
		sig  string
	}
	first := map[string]seen{}
	conflicted := map[string]bool{}
	for i := range r.items {
		it := &r.items[i]
		if it.Kind != KindReceipt || !it.Verified {
			continue
		}
		s, ok := first[it.ReceiptID]
		switch {
		case !ok:
			first[it.ReceiptID] = seen{i, it.Signature}
		case s.sig == it.Signature:
			it.DuplicateOf = r.items[s.slot].Path
			it.note("the same receipt as %s: counted once", r.items[s.slot].Path)
		default:
			it.fail(evidence.RFieldID, "receipt %s is also %s, with other content: two testimonies claim one id", it.ReceiptID, r.items[s.slot].Path)
			if !conflicted[it.ReceiptID] {
				conflicted[it.ReceiptID] = true
				r.items[s.slot].fail(evidence.RFieldID, "receipt %s is also %s, with other content: two testimonies claim one id", it.ReceiptID, it.Path)
			}
		}
	}
	r.checkSharedChains()
	if want := r.o.minReceipts(); len(first) < want {
		slot := r.newItem("--min-receipts", KindPolicy)
		hint := ""
		if r.o.MinReceipts == nil {
			hint = " (--min-receipts 0 accepts none)"
		}
		r.items[slot].fail("", "%s verified; at least %d required%s", plural(len(first), "distinct receipt"), want, hint)
	}
}

// checkSharedChains fails receipts that claim one chain under different
// ids. The receipt id, session and provenance are the receipt's own
// fields, which anyone can rewrite and re-sign (the content hash has no
// key); the chain is the testimony. One run's chain presented as a second
// receipt (another id, another session, another commit) would count twice
// for --min-receipts, or pass for a run that never happened. Runs do not
// share chains (their entries carry their own timestamps and the canaries'
// random paths), so two ids for one chain is a forgery or a replay: both
// fail. A chain is named by its length and head, which the content hash of
// each receipt recomputes; an empty chain (its head is its genesis) names
// no run and is not compared.
func (r *runner) checkSharedChains() {
	type chainKey struct {
		entries int64
		head    string
	}
	first := map[chainKey]int{}
	failed := map[int]bool{}
	for i := range r.items {
		it := &r.items[i]
		if it.Kind != KindReceipt || !it.Verified || it.DuplicateOf != "" || it.Entries == 0 {
			continue
		}
		k := chainKey{it.Entries, it.Head}
		j, ok := first[k]
		if !ok {
			first[k] = i
			continue
		}
		o := &r.items[j]
		if o.ReceiptID == it.ReceiptID {
			continue // one id with two contents: failed already
		}
		it.fail("chain", "receipt %s has the same chain (%d entries, head %s) as receipt %s in %s: one run's testimony claimed twice", it.ReceiptID, it.Entries, it.Head, o.ReceiptID, o.Path)
		if !failed[j] {
			failed[j] = true
			o.fail("chain", "receipt %s has the same chain (%d entries, head %s) as receipt %s in %s: one run's testimony claimed twice", o.ReceiptID, o.Entries, o.Head, it.ReceiptID, it.Path)
		}
	}
}

// checkApplied fails closed on an expectation that no item could meet: a
// flag that checked nothing must not read as a pass.
func (r *runner) checkApplied() {
	var receipts, ledgers int
	for i := range r.items {
		switch r.items[i].Kind {
		case KindReceipt:
			receipts++
		case KindLedger:
			ledgers++
		}
	}
	o := r.o
	unmet := func(flag, what string) {
		slot := r.newItem(flag, KindPolicy)
		r.items[slot].fail("", "given, but no %s was verified: the expectation checked nothing", what)
	}
	if receipts == 0 {
		if o.ExpectCommit != "" {
			unmet(o.flagName(o.CommitFrom, "--expect-commit"), "receipt")
		}
		if o.ExpectRepo != "" {
			unmet(o.flagName(o.RepoFrom, "--expect-repo"), "receipt")
		}
		if o.ExpectPolicySHA256 != "" {
			unmet("--expect-policy-sha256", "receipt")
		}
	}
	if receipts+ledgers == 0 && o.MaxBlocked != nil {
		unmet("--max-blocked", "receipt or ledger")
	}
	if ledgers == 0 && o.Len != nil {
		unmet("--expect-len", "bare ledger")
	}
	if receipts+ledgers == 0 && o.Head != "" {
		unmet("--expect-head", "receipt or bare ledger")
	}
}

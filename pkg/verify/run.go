package verify

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

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
		r.addStandalone(p, KindReceipt, stdinOpener(r.o.Stdin))
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
		r.addStandalone(p, k, streamOpener(p))
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

func stdinOpener(in io.Reader) opener {
	return func() (io.ReadCloser, int64, error) {
		if in == nil {
			in = strings.NewReader("")
		}
		return io.NopCloser(in), -1, nil
	}
}

func streamOpener(p string) opener {
	return func() (io.ReadCloser, int64, error) {
		f, err := os.Open(p)
		if err != nil {
			return nil, 0, fmt.Errorf("%s", describeErr(err))
		}
		return f, -1, nil
	}
}

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
		r.receipt(it, rc, size)
	case KindLedger:
		r.ledgerMu.Lock()
		defer r.ledgerMu.Unlock()
		checkLedger(it, rc, r.o, j.standalone)
	}
}

// receipt reads one receipt under the size cap and the memory budget, then
// verifies it. Only the item's facts outlive this call.
func (r *runner) receipt(it *Item, rc io.Reader, size int64) {
	if size > evidence.MaxReceiptBytes {
		it.fail("", "%d bytes, over the %d-byte receipt cap: not read", size, evidence.MaxReceiptBytes)
		return
	}
	w := size
	if w < 0 {
		w = evidence.MaxReceiptBytes
	}
	w = r.mem.acquire(w)
	defer r.mem.release(w)
	data, err := io.ReadAll(io.LimitReader(rc, evidence.MaxReceiptBytes+1))
	if err != nil {
		it.fail("", "cannot read: %v", err)
		return
	}
	if len(data) > evidence.MaxReceiptBytes {
		it.fail("", "over the %d-byte receipt cap", evidence.MaxReceiptBytes)
		return
	}
	checkReceipt(it, data, r.o)
}

// checkApplied fails closed on a policy that no item could satisfy: a flag
// that checked nothing must not read as a pass.
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
		r.items[slot].fail("", "given, but no %s was verified: the policy checked nothing", what)
	}
	if receipts == 0 {
		for _, f := range o.receiptOnly() {
			unmet(f, "receipt")
		}
	}
	if receipts+ledgers == 0 {
		if o.RequireJailed {
			unmet("--require-jailed", "receipt or ledger")
		}
		if o.MaxBlocked != nil {
			unmet("--max-blocked", "receipt or ledger")
		}
	}
	if ledgers == 0 {
		if o.Len != nil {
			unmet("--expect-len", "bare ledger")
		}
		if o.Head != "" {
			unmet("--expect-head", "bare ledger")
		}
	}
}

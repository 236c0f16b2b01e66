package verify

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// container is a directory or zip PATH: its own slot, and its files grouped
// by the directory that holds them, for the store checks.
type container struct {
	slot     int
	groups   map[string]*group
	dirName  func(dir string) string // the name of a group's directory, "" when it has none (a zip's root)
	receipts int
	ledgers  int
}

// group is one directory of a container.
type group struct {
	dir           string
	receipts      map[string]int // file name → slot
	ledgers       map[string]int // file name → slot
	bad           map[string]bool
	others        map[string]opener // file name → opener, of the files that are none of the above
	index, latest *member
}

type member struct {
	slot int
	open opener
}

// addDir walks a directory PATH into a container. A store directory's
// producer name is its own name, so "deponent-verify receipts/deponent"
// checks the same rules as "deponent-verify receipts".
func (r *runner) addDir(root string) {
	slot := r.newItem(root, KindDirectory)
	defer r.recoverInto(slot)
	refs, problems := walkDir(root)
	r.items[slot].Problems = append(r.items[slot].Problems, problems...)
	rootName := root
	if abs, err := filepath.Abs(root); err == nil {
		rootName = filepath.Base(abs)
	}
	r.addContainer(slot, refs, func(dir string) string {
		if dir == "." {
			return rootName
		}
		return path.Base(dir)
	})
}

// addZip opens a zip PATH (kept open until the run ends: its members are
// read by the workers) and lists it into a container.
func (r *runner) addZip(p string) {
	slot := r.newItem(p, KindZip)
	defer r.recoverInto(slot)
	open := fileOpener(p, true)
	rc, size, err := open()
	if err != nil {
		r.items[slot].fail("", "cannot read: %v", err)
		return
	}
	f := rc.(*os.File)
	r.closers = append(r.closers, f)
	r.addZipReader(slot, p, f, size)
}

// addZipReader lists an open archive into the container in slot.
func (r *runner) addZipReader(slot int, p string, ra io.ReaderAt, size int64) {
	z, err := openZip(ra, size)
	if err != nil {
		r.items[slot].fail("", "%v", err)
		return
	}
	refs := z.refs(p)
	slices.SortStableFunc(refs, func(a, b ref) int { return strings.Compare(a.rel, b.rel) })
	r.addContainer(slot, refs, func(dir string) string {
		if dir == "." {
			return "" // the archive's root has no name of its own
		}
		return path.Base(dir)
	})
}

// addContainer gives every file of a container its slot: a job for each
// receipt and ledger, a deferred check for each index.jsonl and LATEST, a
// failure for each refused entry; other files are only counted.
func (r *runner) addContainer(slot int, refs []ref, dirName func(string) string) {
	c := &container{slot: slot, groups: map[string]*group{}, dirName: dirName}
	grp := func(rel string) *group {
		d := path.Dir(rel)
		g := c.groups[d]
		if g == nil {
			g = &group{dir: d, receipts: map[string]int{}, ledgers: map[string]int{}, bad: map[string]bool{}, others: map[string]opener{}}
			c.groups[d] = g
		}
		return g
	}
	// The directories that hold an outputs-<session>/ directory: their
	// receipts keep their entries' outcome hashes for checkOutputs.
	withOutputs := map[string]bool{}
	for _, rf := range refs {
		if d := path.Dir(rf.rel); d != "." && strings.HasPrefix(path.Base(d), OutputsPrefix) {
			withOutputs[path.Dir(d)] = true
		}
	}
	for _, rf := range refs {
		switch rf.kind {
		case refBad:
			s := r.newItem(rf.display, KindEntry)
			r.items[s].fail("", "%s", rf.bad)
			grp(rf.rel).bad[path.Base(rf.rel)] = true
		case refOther:
			r.items[slot].Ignored++
			grp(rf.rel).others[path.Base(rf.rel)] = rf.open
		case refReceipt:
			grp(rf.rel).receipts[path.Base(rf.rel)] = r.addJob(rf.display, KindReceipt, rf.open)
			r.jobs[len(r.jobs)-1].outputs = withOutputs[path.Dir(rf.rel)]
			c.receipts++
		case refLedger:
			grp(rf.rel).ledgers[path.Base(rf.rel)] = r.addJob(rf.display, KindLedger, rf.open)
			c.ledgers++
		case refIndex:
			grp(rf.rel).index = &member{slot: r.newItem(rf.display, KindIndex), open: rf.open}
		case refLatest:
			grp(rf.rel).latest = &member{slot: r.newItem(rf.display, KindLatest), open: rf.open}
		}
	}
	r.containers = append(r.containers, c)
}

// finishContainer runs the store checks of each directory of a container
// and the --min-receipts check.
func (r *runner) finishContainer(c *container) {
	defer r.recoverInto(c.slot)
	dirs := make([]string, 0, len(c.groups))
	for d := range c.groups {
		dirs = append(dirs, d)
	}
	slices.Sort(dirs)
	for _, d := range dirs {
		r.checkStore(c, c.groups[d])
		r.checkLedgers(c.groups[d])
		r.checkTranscripts(c.groups[d])
		r.checkOutputs(c, c.groups[d])
	}
	it := &r.items[c.slot]
	it.Receipts, it.Ledgers = c.receipts, c.ledgers
	for _, g := range c.groups {
		for _, slot := range g.receipts {
			it.Verified = it.Verified || r.items[slot].Verified
		}
	}
	if c.receipts == 0 && r.o.minReceipts() > 0 {
		it.fail("", "holds no receipt: an empty artifact proves nothing (--min-receipts 0 accepts one)")
	}
}

// checkTranscripts holds a live agent's transcript, where it lies beside
// its receipt (agent.transcript names it, in the receipt's directory), to
// the hash the chain records for it (the agent_session entry's
// outcome_sha256, which the agent object's transcript_sha256 must equal).
// A transcript that hashes otherwise was swapped or edited after the run:
// whoever reads it to learn what the agent did would read another story,
// so the receipt fails. A receipt whose transcript is not beside it is
// not failed for that (a receipt can be verified alone).
func (r *runner) checkTranscripts(g *group) {
	names := make([]string, 0, len(g.receipts))
	for name := range g.receipts {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		it := &r.items[g.receipts[name]]
		if !it.Verified || it.transcript == "" {
			continue
		}
		open, ok := g.others[it.transcript]
		if !ok {
			continue
		}
		sum, err := hashFile(open)
		switch {
		case err != nil:
			it.fail("agent.transcript", "%s beside the receipt cannot be read: %v", it.transcript, err)
		case sum != it.transcriptSHA256:
			it.fail("agent.transcript", "%s beside the receipt hashes to %s, but the chain records %s: the transcript is not the one the run recorded", it.transcript, sum, it.transcriptSHA256)
		default:
			it.note("transcript %s matches the hash the chain records", it.transcript)
		}
	}
}

// hashFile is the hex sha256 of what open reads, streamed.
func hashFile(open opener) (string, error) {
	rc, _, err := open()
	if err != nil {
		return "", err
	}
	defer rc.Close()
	h := sha256.New()
	if _, err := io.Copy(h, rc); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// OutputsPrefix names the directory, beside a run's receipt, that holds
// the full output of each of its commands: outputs-<session>/.
const OutputsPrefix = "outputs-"

// checkOutputs holds each command output file of outputs-<session>/
// (entry-NNNN.log: the output of the command recorded as entry NNNN) to
// the outcome hash that entry records, for every verified receipt of that
// session in the directory above it. These files are what a reviewer
// reads for a step's or the verify command's output: one edited or
// swapped after the run (a failing test log replaced by a passing one)
// fails the receipt. A file naming an entry the chain does not have
// fails too. mcp-call-NNNN.log files are numbered by arrival, not entry,
// and are not compared; other files are ignored.
func (r *runner) checkOutputs(c *container, g *group) {
	base := path.Base(g.dir)
	if g.dir == "." || !strings.HasPrefix(base, OutputsPrefix) {
		return
	}
	session := strings.TrimPrefix(base, OutputsPrefix)
	parent := c.groups[path.Dir(g.dir)]
	if parent == nil {
		return
	}
	var owners []*Item
	for _, slot := range parent.receipts {
		if it := &r.items[slot]; it.Verified && it.SessionID == session && it.outcomes != nil {
			owners = append(owners, it)
		}
	}
	if len(owners) == 0 {
		return
	}
	names := make([]string, 0, len(g.others))
	for name := range g.others {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		digits, ok := strings.CutPrefix(name, "entry-")
		if !ok {
			continue
		}
		digits, ok = strings.CutSuffix(digits, ".log")
		if !ok || len(digits) < 4 || strings.Trim(digits, "0123456789") != "" {
			continue
		}
		n, err := strconv.Atoi(digits)
		if err != nil {
			continue
		}
		hexSum, herr := hashFile(g.others[name])
		var sum [32]byte
		hex.Decode(sum[:], []byte(hexSum))
		for _, it := range owners {
			where := base + "/" + name
			switch {
			case herr != nil:
				it.fail(where, "cannot be read: %v", herr)
			case n >= len(it.outcomes):
				it.fail(where, "names entry %d, but the chain has %d entries", n, len(it.outcomes))
			case sum != it.outcomes[n]:
				it.fail(where, "hashes to %s, but entry %d records outcome_sha256 %x: the output beside the receipt is not the one the run recorded", hexSum, n, it.outcomes[n])
			}
		}
	}
}

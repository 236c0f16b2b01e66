package jail

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The tripwire is backend-neutral: the shared runner snapshots the protected
// set before every step and compares it afterwards, so a change that the
// mount rules (bwrap) or the profile (Seatbelt) did not stop — or that no
// backend could stop, like a new nested .git — still marks the step
// (Result.Tampered). "none" gets it too.
//
// The protected set is:
//   - every entry named .git at any depth of the sandbox (directory, gitdir
//     file or symlink), found by walking the sandbox without following
//     symlinks, and the gitdir a .git file or link points to when it lies
//     inside the sandbox;
//   - builtinProtected and Spec.Protected, whether or not they exist;
//   - the directories on the way from the sandbox to each of them (by
//     identity: device and inode), so renaming a parent away and recreating
//     it is seen even though every name looks the same afterwards.
//
// For each protected path and everything below it the snapshot keeps type,
// mode, owner, size, link count, mtime, ctime, inode, a symlink's target and
// the sha256 of regular files up to tripwireHashMax bytes (outside git's
// object store, whose files are named by their hash). ctime cannot be set
// by the jailed code, so a rewrite of a large file is seen by it; the hash
// covers a same-size rewrite within one timestamp tick of a small one.

// builtinProtected are sandbox-relative paths every run protects, whatever
// the caller passes: CI runs what they hold.
var builtinProtected = []string{".github/workflows", ".github/actions"}

const gitName = ".git"

// tripwireHashMax bounds which regular files are hashed, not just stat'ed.
const tripwireHashMax = 64 << 10

// tripwireMaxEntries bounds a snapshot; a protected set larger than this is
// refused (the check would be neither cheap nor bounded).
const tripwireMaxEntries = 500000

type kind byte

const (
	kAbsent kind = iota
	kDir
	kFile
	kLink
	kOther
	kUnreadable // a directory that could not be listed
)

func (k kind) String() string {
	return [...]string{"absent", "directory", "file", "symlink", "special file", "unreadable directory"}[k]
}

// fileID is what the tripwire compares for one path.
type fileID struct {
	kind         kind
	mode         fs.FileMode
	dev, ino     uint64
	nlink        uint64
	uid, gid     uint32
	size         int64
	mtime, ctime int64
	link         string
	sum          [sha256.Size]byte
}

func idOf(path string, fi fs.FileInfo, hash bool) fileID {
	id := fileID{mode: fi.Mode(), size: fi.Size(), mtime: fi.ModTime().UnixNano()}
	id.dev, id.ino, id.nlink, id.uid, id.gid, id.ctime, _ = statFields(fi)
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		id.kind = kLink
		id.link, _ = os.Readlink(path)
	case fi.IsDir():
		id.kind = kDir
	case fi.Mode().IsRegular():
		id.kind = kFile
		if hash && fi.Size() <= tripwireHashMax {
			id.sum = hashFileNoFollow(path)
		}
	default:
		id.kind = kOther
	}
	return id
}

// hashFileNoFollow hashes a small regular file; an unreadable one hashes
// as its error text, which differs from any content.
func hashFileNoFollow(path string) [sha256.Size]byte {
	f, err := os.OpenFile(path, os.O_RDONLY|oNoFollow|oNonBlock, 0)
	if err != nil {
		return sha256.Sum256([]byte("unreadable: " + err.Error()))
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, io.LimitReader(f, tripwireHashMax+1)); err != nil {
		return sha256.Sum256([]byte("unreadable: " + err.Error()))
	}
	var out [sha256.Size]byte
	copy(out[:], h.Sum(nil))
	return out
}

// ancestor is one directory on the way to a protected path.
type ancestor struct {
	rel string
	id  fileID
}

// snapshot is the protected set at one moment.
type snapshot struct {
	roots   []string              // sandbox-relative protected paths (sorted, unique)
	entries map[string]fileID     // each root and everything below it
	parents map[string][]ancestor // root → its ancestors, sandbox first
	gits    []gitFound            // every .git found by the walk
	// unreadable are directories of the sandbox the walk could not list: a
	// .git could hide in them.
	unreadable map[string]fileID
}

// gitFound is one entry named .git.
type gitFound struct {
	rel  string
	kind kind
	// gitdir is where a .git file or symlink points, sandbox-relative, when
	// that lies inside the sandbox; "" otherwise.
	gitdir string
}

// sizeProbe, riding along a walk, collects the regular files larger than
// over that were modified since since, in directories modified since then
// (a new file, or one replaced by rename). The runner uses it to name a
// file-size kill the program itself hid (Python ignores SIGXFSZ).
type sizeProbe struct {
	over  int64
	since time.Time
	found []string
}

// dirEnt is one entry of a listed directory: its name and type (ModeDir,
// ModeSymlink, 0 for a regular file, ModeIrregular for anything else).
type dirEnt struct {
	name string
	typ  fs.FileMode
}

// look checks one listed directory.
func (sp *sizeProbe) look(abs string, dir *dirStat, ents []dirEnt) {
	if sp == nil || dir == nil || dirMtime(dir) < sp.since.UnixNano() {
		return
	}
	for _, e := range ents {
		if e.typ != 0 {
			continue
		}
		p := filepath.Join(abs, e.name)
		if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() && fi.Size() > sp.over && !fi.ModTime().Before(sp.since) {
			sp.found = append(sp.found, p)
		}
	}
}

// walk checks every directory below root (the private TMPDIR and HOME).
func (sp *sizeProbe) walk(root string) {
	stack := []string{root}
	for n := 0; len(stack) > 0 && n < 100000; n++ {
		d := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		ents, st, err := scanDir(d, true)
		if err != nil {
			continue
		}
		sp.look(d, st, ents)
		for _, e := range ents {
			if e.typ == fs.ModeDir {
				stack = append(stack, filepath.Join(d, e.name))
			}
		}
	}
}

// findGits walks the sandbox without following symlinks and returns every
// entry named .git (not descending into .git directories), and the
// directories it could not list. A probe, when given, looks at every
// directory on the way.
func findGits(sandbox string, probe *sizeProbe) ([]gitFound, map[string]fileID, error) {
	// The root first, alone: an unlistable sandbox is an error.
	rootEnts, rootInfo, err := scanDir(sandbox, probe != nil)
	if err != nil {
		return nil, nil, fmt.Errorf("jail: cannot list the sandbox: %w", err)
	}
	// Then the directories in parallel: each is independent, and the walk
	// is system calls, one or two per directory, on the step's critical
	// path twice.
	w := &gitWalk{sandbox: sandbox, probe: probe, unreadable: map[string]fileID{}}
	w.cond = sync.NewCond(&w.mu)
	w.visit("", rootEnts, rootInfo)
	workers := min(max(runtime.NumCPU(), 1), 4)
	var wg sync.WaitGroup
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.work()
		}()
	}
	wg.Wait()
	if w.err != nil {
		return nil, nil, w.err
	}
	sort.Slice(w.gits, func(i, j int) bool { return w.gits[i].rel < w.gits[j].rel })
	return w.gits, w.unreadable, nil
}

// gitWalk is findGits' shared state: a stack of directories to list, the
// results, and how many workers are busy (the walk ends when the stack is
// empty and nobody is listing).
type gitWalk struct {
	sandbox    string
	probe      *sizeProbe
	mu         sync.Mutex
	cond       *sync.Cond
	stack      []string
	busy       int
	n          int
	gits       []gitFound
	unreadable map[string]fileID
	err        error
}

func (w *gitWalk) work() {
	for {
		w.mu.Lock()
		for len(w.stack) == 0 && w.busy > 0 && w.err == nil {
			w.cond.Wait()
		}
		if len(w.stack) == 0 || w.err != nil {
			w.cond.Broadcast()
			w.mu.Unlock()
			return
		}
		rel := w.stack[len(w.stack)-1]
		w.stack = w.stack[:len(w.stack)-1]
		w.busy++
		w.mu.Unlock()

		abs := filepath.Join(w.sandbox, rel)
		ents, dirInfo, err := scanDir(abs, w.probe != nil)
		var unreadable *fileID
		if err != nil {
			if fi, lerr := os.Lstat(abs); lerr == nil {
				id := idOf(abs, fi, false)
				id.kind = kUnreadable
				unreadable = &id
			}
		}

		w.mu.Lock()
		if unreadable != nil {
			w.unreadable[rel] = *unreadable
		}
		if err == nil {
			w.visitLocked(rel, ents, dirInfo)
		}
		w.busy--
		w.cond.Broadcast()
		w.mu.Unlock()
	}
}

func (w *gitWalk) visit(rel string, ents []dirEnt, dirInfo *dirStat) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.visitLocked(rel, ents, dirInfo)
}

// visitLocked records one listed directory (w.mu held).
func (w *gitWalk) visitLocked(rel string, ents []dirEnt, dirInfo *dirStat) {
	w.probe.look(filepath.Join(w.sandbox, rel), dirInfo, ents)
	for _, e := range ents {
		if w.n++; w.n > tripwireMaxEntries*8 {
			if w.err == nil {
				w.err = fmt.Errorf("jail: the sandbox has more than %d entries; too many to check for .git", tripwireMaxEntries*8)
			}
			return
		}
		child := joinRel(rel, e.name)
		if e.name == gitName {
			w.gits = append(w.gits, describeGit(w.sandbox, child, e.typ))
			continue
		}
		if e.typ == fs.ModeDir {
			w.stack = append(w.stack, child)
		}
	}
}

// readDirNoFollow lists a directory, refusing to open it through a symlink.
func readDirNoFollow(abs string) ([]fs.DirEntry, error) {
	f, err := os.OpenFile(abs, os.O_RDONLY|oNoFollow|oDirectory, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.ReadDir(-1)
}

func joinRel(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// describeGit classifies a .git entry and resolves where a gitdir file or a
// symlink points.
func describeGit(sandbox, rel string, t fs.FileMode) gitFound {
	g := gitFound{rel: rel, kind: kOther}
	abs := filepath.Join(sandbox, rel)
	var target string
	switch {
	case t.IsDir():
		g.kind = kDir
		return g
	case t&fs.ModeSymlink != 0:
		g.kind = kLink
		target, _ = os.Readlink(abs)
	case t.IsRegular():
		g.kind = kFile
		target = readGitdirFile(abs)
	default:
		return g
	}
	if target == "" {
		return g
	}
	if !filepath.IsAbs(target) {
		target = filepath.Join(filepath.Dir(abs), target)
	}
	target = filepath.Clean(target)
	if target != sandbox && within(target, sandbox) {
		g.gitdir = strings.TrimPrefix(target, sandbox+"/")
	}
	return g
}

// readGitdirFile returns the path of a "gitdir: PATH" file, "" if it is not
// one.
func readGitdirFile(abs string) string {
	f, err := os.OpenFile(abs, os.O_RDONLY|oNoFollow|oNonBlock, 0)
	if err != nil {
		return ""
	}
	defer f.Close()
	data, _ := io.ReadAll(io.LimitReader(f, 4096))
	line, _, _ := bytes.Cut(data, []byte("\n"))
	rest, ok := bytes.CutPrefix(bytes.TrimSpace(line), []byte("gitdir:"))
	if !ok {
		return ""
	}
	return string(bytes.TrimSpace(rest))
}

// takeSnapshot records the protected set: roots (sandbox-relative) plus
// every .git the walk finds and the in-sandbox gitdirs they point to.
func takeSnapshot(sandbox string, roots []string) (*snapshot, error) {
	return takeSnapshotProbe(sandbox, roots, nil)
}

// takeSnapshotProbe is takeSnapshot with a size probe riding along the walk.
func takeSnapshotProbe(sandbox string, roots []string, probe *sizeProbe) (*snapshot, error) {
	gits, unreadable, err := findGits(sandbox, probe)
	if err != nil {
		return nil, err
	}
	s := &snapshot{entries: map[string]fileID{}, parents: map[string][]ancestor{}, gits: gits, unreadable: unreadable}
	all := append([]string(nil), roots...)
	for _, g := range gits {
		all = append(all, g.rel)
		if g.gitdir != "" {
			all = append(all, g.gitdir)
		}
	}
	sort.Strings(all)
	for i, r := range all {
		if i > 0 && r == all[i-1] {
			continue
		}
		s.roots = append(s.roots, r)
		if err := s.recordRoot(sandbox, r); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// recordRoot records rel and everything below it, and its ancestors, never
// following a symlink: a link on the way ends the path (the link itself is
// recorded as an ancestor and the root as absent).
func (s *snapshot) recordRoot(sandbox, rel string) error {
	parts := strings.Split(rel, "/")
	var anc []ancestor
	cur := ""
	for i, part := range parts {
		cur = joinRel(cur, part)
		abs := filepath.Join(sandbox, cur)
		fi, err := os.Lstat(abs)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
				return fmt.Errorf("jail: protected path %s: %w", cur, err)
			}
			s.entries[rel] = fileID{kind: kAbsent}
			s.parents[rel] = anc
			return nil
		}
		if i < len(parts)-1 {
			id := idOf(abs, fi, false)
			anc = append(anc, ancestor{rel: cur, id: fileID{kind: id.kind, dev: id.dev, ino: id.ino, link: id.link}})
			if id.kind != kDir {
				s.entries[rel] = fileID{kind: kAbsent}
				s.parents[rel] = anc
				return nil
			}
			continue
		}
		s.parents[rel] = anc
		return s.recordTree(sandbox, rel, fi)
	}
	return nil
}

// recordTree records rel (already lstat'ed as fi) and, for a directory,
// everything below it.
func (s *snapshot) recordTree(sandbox, rel string, fi fs.FileInfo) error {
	type item struct {
		rel string
		fi  fs.FileInfo
	}
	stack := []item{{rel, fi}}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if _, done := s.entries[it.rel]; done {
			continue // also below another root
		}
		if len(s.entries) >= tripwireMaxEntries {
			return fmt.Errorf("jail: the protected set has more than %d entries; too many to check after every step", tripwireMaxEntries)
		}
		abs := filepath.Join(sandbox, it.rel)
		id := idOf(abs, it.fi, !inObjectStore(it.rel))
		if id.kind != kDir {
			s.entries[it.rel] = id
			continue
		}
		ents, err := readDirNoFollow(abs)
		if err != nil {
			id.kind = kUnreadable
			s.entries[it.rel] = id
			continue
		}
		s.entries[it.rel] = id
		for _, e := range ents {
			cfi, err := e.Info()
			if err != nil {
				continue // vanished meanwhile: nothing runs now, so it was never there
			}
			stack = append(stack, item{joinRel(it.rel, e.Name()), cfi})
		}
	}
	return nil
}

// inObjectStore: git's object files are named by their content's hash;
// they are stat'ed, not hashed.
func inObjectStore(rel string) bool {
	return strings.Contains("/"+rel+"/", "/objects/")
}

// tamper is one difference between two snapshots.
type tamper struct {
	rel, what string
}

// diffSnapshots compares the protected set before and after a step. after
// must have been taken over before.roots (and whatever new .git it found).
func diffSnapshots(before, after *snapshot) []tamper {
	var out []tamper
	keys := map[string]bool{}
	for k := range before.entries {
		keys[k] = true
	}
	for k := range after.entries {
		keys[k] = true
	}
	for k := range before.unreadable {
		keys[k] = true
	}
	for k := range after.unreadable {
		keys[k] = true
	}
	changedDirTimes := map[string]bool{}
	for k := range keys {
		b, a := lookupID(before, k), lookupID(after, k)
		if b == a {
			continue
		}
		switch {
		case b.kind == kAbsent:
			out = append(out, tamper{k, "created (" + a.kind.String() + ")"})
		case a.kind == kAbsent:
			out = append(out, tamper{k, "removed"})
		case a.kind == kUnreadable && b.kind != kUnreadable:
			out = append(out, tamper{k, "made unreadable: it cannot be checked"})
		case b.kind == kDir && a.kind == kDir && b.dev == a.dev && b.ino == a.ino && b.mode == a.mode && b.uid == a.uid && b.gid == a.gid:
			changedDirTimes[k] = true // entries added, removed or renamed inside
		case b.dev != a.dev || b.ino != a.ino || b.kind != a.kind:
			out = append(out, tamper{k, "replaced"})
		default:
			out = append(out, tamper{k, "changed"})
		}
	}
	// Ancestors: a parent renamed away and recreated. They matter when the
	// protected path exists on either side, or a link is involved.
	for _, root := range unionStrings(before.roots, after.roots) {
		if lookupID(before, root).kind == kAbsent && lookupID(after, root).kind == kAbsent &&
			!anyLink(before.parents[root]) && !anyLink(after.parents[root]) {
			continue
		}
		bp, ap := before.parents[root], after.parents[root]
		for i := 0; i < len(bp) || i < len(ap); i++ {
			var b, a ancestor
			if i < len(bp) {
				b = bp[i]
			}
			if i < len(ap) {
				a = ap[i]
			}
			if b.rel == "" {
				// Did not exist before: the protected path below it is new,
				// and is reported as created itself.
				break
			}
			if b.rel != a.rel || b.id != a.id {
				out = append(out, tamper{b.rel, "replaced (a parent of protected " + root + ")"})
				break
			}
		}
	}
	// A directory whose only change is its times is reported only when
	// nothing below it is: then something was created and removed again.
	for k := range changedDirTimes {
		if !hasReportedBelow(out, k) {
			out = append(out, tamper{k, "changed (entries added or removed)"})
		}
	}
	return collapse(out)
}

func lookupID(s *snapshot, k string) fileID {
	if id, ok := s.entries[k]; ok {
		return id
	}
	if id, ok := s.unreadable[k]; ok {
		return id
	}
	return fileID{kind: kAbsent}
}

func anyLink(as []ancestor) bool {
	for _, a := range as {
		if a.id.kind == kLink {
			return true
		}
	}
	return false
}

func unionStrings(a, b []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range append(append([]string(nil), a...), b...) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}

func hasReportedBelow(ts []tamper, dir string) bool {
	for _, t := range ts {
		if strings.HasPrefix(t.rel, dir+"/") {
			return true
		}
	}
	return false
}

// collapse sorts, removes duplicates, and drops entries below a path that is
// itself reported created, removed or replaced (its whole subtree is new or
// gone; listing every file would bury the point).
func collapse(ts []tamper) []tamper {
	sort.Slice(ts, func(i, j int) bool {
		if ts[i].rel != ts[j].rel {
			return ts[i].rel < ts[j].rel
		}
		return ts[i].what < ts[j].what
	})
	var out []tamper
	var whole []string
	for _, t := range ts {
		if len(out) > 0 && out[len(out)-1].rel == t.rel {
			continue
		}
		covered := false
		for _, w := range whole {
			if strings.HasPrefix(t.rel, w+"/") {
				covered = true
				break
			}
		}
		if covered {
			continue
		}
		out = append(out, t)
		if !strings.HasPrefix(t.what, "changed") {
			whole = append(whole, t.rel)
		}
	}
	return out
}

// tamperedPaths and tamperedReason render a diff for Result.
func tamperedPaths(ts []tamper) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.rel
	}
	return out
}

const maxTamperedInReason = 20

func tamperedReason(ts []tamper) string {
	var parts []string
	for i, t := range ts {
		if i == maxTamperedInReason {
			parts = append(parts, fmt.Sprintf("and %d more", len(ts)-i))
			break
		}
		parts = append(parts, t.rel+" "+t.what)
	}
	return "TAMPERED: the step changed protected paths (every .git, .github/workflows, .github/actions " +
		"and the policy's protected paths): " + strings.Join(parts, "; ")
}

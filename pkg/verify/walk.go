package verify

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/deponent-dev/deponent-action/pkg/evidence"
)

// Caps of a directory walk.
const (
	// MaxWalkEntries caps the directory entries (files, directories,
	// anything) one directory PATH may hold, so that the walk's memory
	// stays bounded.
	MaxWalkEntries = 200_000
	// MaxWalkDepth caps directory nesting below a directory PATH.
	MaxWalkDepth = 64
)

// refKind is what a file in a directory or a zip is taken for, by name.
type refKind int

const (
	refOther   refKind = iota // not ours: counted and ignored
	refReceipt                // *.json
	refLedger                 // *.jsonl other than index.jsonl
	refIndex                  // index.jsonl
	refLatest                 // LATEST
	refBad                    // something that must not be there (symlink, FIFO, unsafe zip name, …)
)

func classify(name string) refKind {
	switch {
	case name == evidence.IndexFile:
		return refIndex
	case name == evidence.LatestFile:
		return refLatest
	case hasExt(name, ".jsonl"):
		return refLedger
	case hasExt(name, ".json"):
		return refReceipt
	}
	return refOther
}

// hasExt matches an extension case-insensitively: a receipt named X.JSON
// is still verified, never silently skipped.
func hasExt(name, ext string) bool {
	return len(name) > len(ext) && strings.EqualFold(name[len(name)-len(ext):], ext)
}

// opener opens one file of a container. size is an upper bound on what the
// reader will yield, -1 when unknown.
type opener func() (rc io.ReadCloser, size int64, err error)

// ref is one file of a directory or zip PATH.
type ref struct {
	rel     string // slash-separated, relative to the container's root
	display string // the path printed
	kind    refKind
	bad     string // refBad: why
	open    opener
}

// walkDir lists the files under root without following symlinks, in
// lexical order. Every symlink and every file that is neither a regular
// file nor a directory is a refBad: a receipt store holds nothing else,
// and following links could loop or leave the tree. Problems of the walk
// as a whole (a cap reached) are returned apart.
func walkDir(root string) (refs []ref, problems []Problem) {
	type pending struct {
		abs, rel string
		depth    int
	}
	stack := []pending{{root, ".", 0}}
	seen := 0
	for len(stack) > 0 {
		d := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		ents, err := readDirCapped(d.abs, MaxWalkEntries-seen+1)
		seen += len(ents)
		if seen > MaxWalkEntries {
			return nil, []Problem{{Msg: fmt.Sprintf("more than %d entries: over the walk cap (verify the directories one by one)", MaxWalkEntries)}}
		}
		if err != nil {
			refs = append(refs, ref{rel: d.rel, display: d.abs, kind: refBad, bad: "cannot read directory: " + describeErr(err)})
		}
		var subdirs []pending
		for _, e := range ents {
			name := e.Name()
			r := ref{rel: path.Join(d.rel, name), display: filepath.Join(d.abs, name)}
			typ := e.Type()
			switch {
			case typ&fs.ModeSymlink != 0:
				r.kind, r.bad = refBad, "symlink not followed: a receipt store holds only regular files and directories"
			case typ.IsDir():
				if d.depth+1 > MaxWalkDepth {
					r.kind, r.bad = refBad, fmt.Sprintf("directory nested deeper than %d levels: not walked", MaxWalkDepth)
				} else {
					subdirs = append(subdirs, pending{r.display, r.rel, d.depth + 1})
					continue
				}
			case !typ.IsRegular():
				r.kind, r.bad = refBad, fmt.Sprintf("not a regular file (%s): not read", typeName(typ))
			default:
				r.kind = classify(name)
				r.open = fileOpener(r.display, false)
			}
			refs = append(refs, r)
		}
		// Depth first, in order: push in reverse so the first pops first.
		slices.Reverse(subdirs)
		stack = append(stack, subdirs...)
	}
	slices.SortFunc(refs, func(a, b ref) int { return strings.Compare(a.rel, b.rel) })
	return refs, nil
}

// readDirCapped reads at most max entries of a directory, in batches, so a
// directory of millions of names is refused without first being listed.
func readDirCapped(dir string, max int) ([]fs.DirEntry, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []fs.DirEntry
	for len(out) < max {
		batch, err := f.ReadDir(256)
		out = append(out, batch...)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return out, err
		}
	}
	slices.SortFunc(out, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return out, nil
}

// fileOpener opens a file as a regular file, refusing anything else.
// follow is for PATHs named on the command line, whose symlinks the user
// chose; files found by a walk are opened without following one.
func fileOpener(p string, follow bool) opener {
	return func() (io.ReadCloser, int64, error) {
		var f *os.File
		var err error
		if follow {
			f, err = os.Open(p)
		} else {
			f, err = openNoFollow(p)
		}
		if err != nil {
			return nil, 0, errors.New(describeErr(err))
		}
		st, err := f.Stat()
		if err != nil {
			f.Close()
			return nil, 0, errors.New(describeErr(err))
		}
		if !st.Mode().IsRegular() {
			f.Close()
			return nil, 0, fmt.Errorf("not a regular file (%s)", typeName(st.Mode().Type()))
		}
		return f, st.Size(), nil
	}
}

// describeErr drops the path an *os.PathError repeats: the item already
// names it.
func describeErr(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	if errors.Is(err, fs.ErrPermission) {
		return "permission denied"
	}
	if errors.Is(err, fs.ErrNotExist) {
		return "no such file or directory"
	}
	return err.Error()
}

func typeName(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "symlink"
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeDevice != 0:
		return "device"
	case m&fs.ModeIrregular != 0:
		return "irregular file"
	case m.IsDir():
		return "directory"
	}
	return "special file"
}

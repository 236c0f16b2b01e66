package verify

import (
	"archive/zip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"
	"sync/atomic"
	"unicode/utf8"
)

// Caps of a zip PATH. A zip is read in place: nothing is extracted to
// disk, and nothing a header says about sizes is trusted.
const (
	// MaxZipEntries caps the members of one archive.
	MaxZipEntries = 20_000
	// MaxZipDirectoryBytes caps what reading the central directory may
	// consume, so that an archive that lies about its member count cannot
	// make the directory listing itself unbounded.
	MaxZipDirectoryBytes = 8 << 20
	// MaxZipTotalBytes caps the uncompressed bytes read from one archive,
	// all members together.
	MaxZipTotalBytes = 1 << 30
	// MaxCompressionRatio: a member that inflates to more than this many
	// times its compressed size (past the first ratioFloor bytes) is
	// refused as a zip bomb. Receipts and ledgers are mostly hex hashes and
	// compress about 3-5:1.
	MaxCompressionRatio = 100
	ratioFloor          = 64 << 10
)

// zipArchive is an open zip PATH.
type zipArchive struct {
	r     *zip.Reader
	total atomic.Int64 // uncompressed bytes still allowed
}

// openZip reads the central directory of an archive of the given size
// under the caps.
func openZip(ra io.ReaderAt, size int64) (*zipArchive, error) {
	if n, ok := declaredEntries(ra, size); ok && n > MaxZipEntries {
		return nil, fmt.Errorf("the archive declares %d members, over the %d-member cap", n, MaxZipEntries)
	}
	br := &budgetReaderAt{r: ra}
	br.left.Store(MaxZipDirectoryBytes)
	zr, err := zip.NewReader(br, size)
	over := br.left.Load() < 0
	br.left.Store(1 << 62) // members are capped by the guarded readers instead
	if over {
		return nil, fmt.Errorf("the central directory is over the %d-byte cap", MaxZipDirectoryBytes)
	}
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		return nil, fmt.Errorf("not a readable zip archive: %v", err)
	}
	if len(zr.File) > MaxZipEntries {
		return nil, fmt.Errorf("the archive holds %d members, over the %d-member cap", len(zr.File), MaxZipEntries)
	}
	z := &zipArchive{r: zr}
	z.total.Store(MaxZipTotalBytes)
	return z, nil
}

// refs lists the members: unsafe names, links, special files and
// duplicated names are refBad (each reported, none read); directories are
// skipped. display prefixes each name as "archive.zip!".
func (z *zipArchive) refs(display string) []ref {
	count := map[string]int{}
	for _, f := range z.r.File {
		count[strings.TrimSuffix(f.Name, "/")]++
	}
	var refs []ref
	for _, f := range z.r.File {
		name := strings.TrimSuffix(f.Name, "/")
		r := ref{rel: name, display: display + "!" + f.Name}
		mode := f.Mode()
		switch {
		case zipNameProblem(f.Name) != "":
			r.kind, r.bad = refBad, zipNameProblem(f.Name)
		case count[name] > 1:
			r.kind, r.bad = refBad, "the name appears more than once in the archive: which copy counts is ambiguous"
		case mode.IsDir():
			continue
		case mode&fs.ModeSymlink != 0:
			r.kind, r.bad = refBad, "symlink member not followed: a receipt store holds only regular files"
		case !mode.IsRegular():
			r.kind, r.bad = refBad, fmt.Sprintf("not a regular file (%s): not read", typeName(mode.Type()))
		default:
			r.kind = classify(path.Base(name))
			r.open = z.opener(f)
		}
		refs = append(refs, r)
	}
	return refs
}

// zipNameProblem says why a member name is unsafe, "" when it is a clean
// relative path that stays inside the archive's root.
func zipNameProblem(name string) string {
	clean := strings.TrimSuffix(name, "/")
	switch {
	case name == "":
		return "empty member name"
	case !utf8.ValidString(name):
		return "member name is not valid UTF-8"
	case strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return "member name holds a control character"
	case strings.Contains(name, `\`):
		return `member name holds a backslash, a path separator on Windows: it could escape the archive's root`
	case strings.HasPrefix(name, "/") || (len(name) >= 2 && name[1] == ':'):
		return "absolute member name: it would escape the archive's root"
	case !fs.ValidPath(clean):
		return `member name is not a clean relative path (".", ".." or an empty element): it could escape the archive's root`
	}
	return ""
}

// opener reads a member through a guard that enforces the caps on the
// bytes actually inflated.
func (z *zipArchive) opener(f *zip.File) opener {
	return func() (io.ReadCloser, int64, error) {
		rc, err := f.Open()
		if err != nil {
			return nil, 0, err
		}
		ratioMax := max(ratioFloor, MaxCompressionRatio*int64(min(f.CompressedSize64, 1<<40)))
		// archive/zip itself fails a member that inflates past its
		// declared size, so the declaration bounds what is read.
		size := int64(min(f.UncompressedSize64, 1<<62))
		return &guardedReader{rc: rc, ratioMax: ratioMax, total: &z.total}, size, nil
	}
}

// guardedReader counts the bytes a member inflates to and stops at the
// compression-ratio cap and the archive-wide cap.
type guardedReader struct {
	rc       io.ReadCloser
	n        int64
	ratioMax int64
	total    *atomic.Int64
}

func (g *guardedReader) Read(p []byte) (int, error) {
	n, err := g.rc.Read(p)
	g.n += int64(n)
	if g.n > g.ratioMax {
		return 0, fmt.Errorf("member inflates more than %d:1 (a zip bomb?): refused after %d bytes", MaxCompressionRatio, g.n)
	}
	if g.total.Add(-int64(n)) < 0 {
		return 0, fmt.Errorf("the archive inflates to more than the %d-byte cap", MaxZipTotalBytes)
	}
	return n, err
}

func (g *guardedReader) Close() error { return g.rc.Close() }

// budgetReaderAt fails once a budget of bytes has been read, bounding what
// zip.NewReader may consume while it lists the central directory.
type budgetReaderAt struct {
	r    io.ReaderAt
	left atomic.Int64
}

var errBudget = errors.New("read budget exhausted")

func (b *budgetReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if b.left.Add(-int64(len(p))) < 0 {
		return 0, errBudget
	}
	return b.r.ReadAt(p, off)
}

// declaredEntries reads the member count an archive's end-of-central-
// directory record declares (the zip64 one when present), so that an
// archive claiming millions of members is refused before archive/zip sizes
// anything by that claim. ok=false when no record is found: archive/zip
// will then refuse the archive itself.
func declaredEntries(ra io.ReaderAt, size int64) (n uint64, ok bool) {
	const eocdLen, eocd64LocLen, eocd64Len = 22, 20, 56
	if size < eocdLen {
		return 0, false
	}
	tail := min(size, 65535+eocdLen)
	buf := make([]byte, tail)
	if _, err := ra.ReadAt(buf, size-tail); err != nil && !errors.Is(err, io.EOF) {
		return 0, false
	}
	for i := len(buf) - eocdLen; i >= 0; i-- {
		if string(buf[i:i+4]) != "PK\x05\x06" {
			continue
		}
		if int(binary.LittleEndian.Uint16(buf[i+20:]))+eocdLen+i > len(buf) {
			continue // a comment length that overruns the file: not the record
		}
		n = uint64(binary.LittleEndian.Uint16(buf[i+10:]))
		// A zip64 locator, when there is one, sits just before the record;
		// look whatever the record says, as archive/zip's conditions for
		// using it are broader than the format's.
		loc := size - tail + int64(i) - eocd64LocLen
		var lb [eocd64LocLen]byte
		if loc < 0 {
			return n, true
		}
		if _, err := ra.ReadAt(lb[:], loc); err != nil || string(lb[:4]) != "PK\x06\x07" {
			return n, true
		}
		off := binary.LittleEndian.Uint64(lb[8:])
		var rb [eocd64Len]byte
		if off > uint64(size) {
			return n, true
		}
		if _, err := ra.ReadAt(rb[:], int64(off)); err != nil || string(rb[:4]) != "PK\x06\x06" {
			return n, true
		}
		return max(n, binary.LittleEndian.Uint64(rb[32:])), true
	}
	return 0, false
}

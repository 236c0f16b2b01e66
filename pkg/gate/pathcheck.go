package gate

// Path containment.
//
// A path is inside the sandbox when the file the kernel would reach by
// following it — symlinks included — is inside the sandbox. resolveIn walks
// the path one component at a time, like the kernel does: it Lstats each
// component while the prefix exists, follows symlinks by splicing their
// target into the remaining path, and applies ".." to the resolved (not the
// textual) parent. Once a component does not exist the rest is resolved
// lexically, because a missing directory cannot redirect anything yet.
// Costs: one Lstat per existing component, one Readlink per symlink, no
// syscalls for the missing tail. (os.Lstat rather than syscall.Lstat keeps
// the package building everywhere the offline verifier runs, at one
// allocation per component.)

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"unicode/utf8"
)

// maxSymlinkHops mirrors the kernel's own limit (ELOOP after 40 links).
const maxSymlinkHops = 40

// Glob expansion caps: more matches than this in one command, or a larger
// rendered script, is refused as too complex.
const (
	maxGlobMatches = 4096
	maxScriptBytes = 1 << 20
)

type pathErrKind uint8

const (
	pathNUL     pathErrKind = iota + 1 // NUL byte: the kernel would truncate the name
	pathOutside                        // absolute path outside the sandbox
	pathDotDot                         // ".." above the sandbox root
	pathSymlink                        // a symlink inside the sandbox pointing outside
	pathLoop                           // too many symlinks
	pathUnsure                         // an error other than "does not exist" while checking
)

// pathError says why a path is not (provably) inside the sandbox.
type pathError struct {
	kind   pathErrKind
	link   string // pathSymlink: the link, relative to the sandbox
	target string // pathSymlink: what it points to
	err    error  // pathUnsure
}

func (e *pathError) detail() string {
	switch e.kind {
	case pathNUL:
		return "contains a NUL byte"
	case pathOutside:
		return "is an absolute path outside the sandbox"
	case pathDotDot:
		return "climbs above the sandbox root with '..'"
	case pathSymlink:
		return "goes through symlink '" + e.link + "' -> '" + e.target + "', which points outside the sandbox"
	case pathLoop:
		return "goes through more than 40 symlinks"
	}
	return "could not be checked (" + e.err.Error() + ")"
}

// resolveIn resolves p against the sandbox root (an absolute, symlink-free
// path) and returns it relative to root, cleaned, with forward slashes:
// "." for the root itself. Absolute paths are accepted only when they are
// textually under root; relative paths are taken from root.
func resolveIn(root, p string) (string, *pathError) {
	rel, _, perr := resolveStat(root, p)
	return rel, perr
}

// resolveStat is resolveIn that also says whether the resolved path
// exists, from the Lstat calls the resolution made anyway.
func resolveStat(root, p string) (rel string, exists bool, perr *pathError) {
	if strings.IndexByte(p, 0) >= 0 {
		return "", false, &pathError{kind: pathNUL}
	}
	rest := p
	if strings.HasPrefix(p, "/") {
		r, ok := cutUnderRoot(p, root)
		if !ok {
			return "", false, &pathError{kind: pathOutside}
		}
		rest = r
	}
	var stack [256]byte
	buf := append(stack[:0], root...)
	base := len(buf) // buf[base:] is the resolved path as "/a/b"
	missing := 0     // trailing components of buf not known to exist
	hops := 0
	// While the resolved path is a textual prefix of root+"/"+rest (no
	// symlink, "." or ".." met yet) the strings handed to Lstat and the
	// result are substrings of this one allocation.
	joined := root + "/" + rest
	for rest != "" {
		var comp string
		comp, rest = nextComponent(rest)
		switch comp {
		case "", ".":
			continue
		case "..":
			if len(buf) == base {
				return "", false, &pathError{kind: pathDotDot}
			}
			buf = buf[:bytes.LastIndexByte(buf, '/')]
			if missing > 0 {
				missing--
			}
			continue
		}
		buf = append(buf, '/')
		buf = append(buf, comp...)
		if missing > 0 {
			missing++
			continue
		}
		var full string
		if len(buf) <= len(joined) && string(buf) == joined[:len(buf)] {
			full = joined[:len(buf)]
		} else {
			full = string(buf)
		}
		fi, err := os.Lstat(full)
		if err != nil {
			if isMissing(err) {
				missing = 1
				continue
			}
			return "", false, &pathError{kind: pathUnsure, err: err}
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			continue
		}
		hops++
		if hops > maxSymlinkHops {
			return "", false, &pathError{kind: pathLoop}
		}
		target, err := os.Readlink(full)
		if err != nil {
			return "", false, &pathError{kind: pathUnsure, err: err}
		}
		link := full[base+1:]
		buf = buf[:len(buf)-len(comp)-1] // the link's directory
		if strings.HasPrefix(target, "/") {
			r, ok := cutUnderRoot(target, root)
			if !ok {
				return "", false, &pathError{kind: pathSymlink, link: link, target: target}
			}
			buf = buf[:base]
			target = r
		}
		if target == "" { // a link to the root itself
			continue
		}
		if rest == "" {
			rest = target
		} else {
			rest = target + "/" + rest
		}
		// The target's own ".." must be checked against where the link
		// lives, so a relative link escaping via ".." is reported as such.
		if e := checkLinkTarget(root, buf[base:], target); e != nil {
			e.link, e.target = link, target
			return "", false, e
		}
	}
	if len(buf) == base {
		return ".", true, nil
	}
	if len(buf) <= len(joined) && string(buf) == joined[:len(buf)] {
		return joined[base+1 : len(buf)], missing == 0, nil
	}
	return string(buf[base+1:]), missing == 0, nil
}

// checkLinkTarget reports a relative symlink target that climbs above the
// sandbox root from the link's directory (dir, as "/a/b"). resolveIn would
// find the escape anyway; this only lets the reason name the link.
func checkLinkTarget(root string, dir []byte, target string) *pathError {
	depth := bytes.Count(dir, []byte{'/'})
	for rest := target; rest != ""; {
		var comp string
		comp, rest = nextComponent(rest)
		switch comp {
		case "", ".":
		case "..":
			depth--
			if depth < 0 {
				return &pathError{kind: pathSymlink}
			}
		default:
			// Below here the target may go through more links; resolveIn
			// follows them one by one.
			return nil
		}
	}
	return nil
}

// nextComponent splits off the first slash-separated component of p.
func nextComponent(p string) (comp, rest string) {
	if i := strings.IndexByte(p, '/'); i >= 0 {
		return p[:i], p[i+1:]
	}
	return p, ""
}

// cutUnderRoot returns p relative to root when p is root or below it,
// compared on a path boundary so that "/sb2" is not under "/sb".
func cutUnderRoot(p, root string) (string, bool) {
	if p == root {
		return "", true
	}
	if len(p) > len(root) && p[len(root)] == '/' && p[:len(root)] == root {
		return p[len(root)+1:], true
	}
	return "", false
}

// isMissing reports errors meaning "no such file here": the name is free,
// so the rest of the path cannot be redirected by anything existing.
func isMissing(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) || errors.Is(err, syscall.ENAMETOOLONG)
}

// Protected paths.

// builtinProtected are refused for writes in every policy: .git holds hooks
// and config that git runs later outside the jail (at any depth: a nested
// repository's hooks run too), .deponent holds the kernel's own records.
var builtinProtected = []string{".deponent", ".git"}

// matchProtected reports the protected entry that the resolved relative path
// rel is, or is under: a ".git" component anywhere, or one of the anchored
// entries (".deponent" and the policy's extra_protected_paths). Names are
// compared as a case-insensitive filesystem would (macOS, Windows): case
// folded, with the code points HFS+ ignores removed and trailing dots and
// spaces trimmed, so ".GIT", ".g\u200cit" and ".git." all match ".git".
func matchProtected(anchored []string, rel string) (string, bool) {
	if rel == "." {
		return "", false
	}
	for r := rel; r != ""; {
		var c string
		c, r = nextComponent(r)
		if sameFileName(c, ".git") {
			return ".git", true
		}
	}
	for _, entry := range anchored {
		if hasProtectedPrefix(rel, entry) {
			return entry, true
		}
	}
	return "", false
}

func hasProtectedPrefix(rel, entry string) bool {
	for entry != "" {
		if rel == "" {
			return false
		}
		var pc, ec string
		pc, rel = nextComponent(rel)
		ec, entry = nextComponent(entry)
		if !sameFileName(pc, ec) {
			return false
		}
	}
	return true
}

// sameFileName compares a path component with a protected name (which has
// no hidden characters) the way a case-insensitive filesystem might.
func sameFileName(name, protected string) bool {
	if len(name) == len(protected) && strings.EqualFold(name, protected) {
		return true
	}
	name = strings.TrimRight(name, ". ")
	for i := 0; i < len(name); i++ {
		if name[i] >= utf8.RuneSelf {
			name = strings.Map(func(r rune) rune {
				if isHiddenRune(r) {
					return -1
				}
				return r
			}, name)
			break
		}
	}
	return strings.EqualFold(name, protected)
}

// normalizeProtected cleans a policy's protected path: relative, no "..",
// no trailing slash. Case is kept (the jail needs the real name) but
// comparison ignores it.
func normalizeProtected(p string) (string, bool) {
	if p == "" || strings.IndexByte(p, 0) >= 0 || strings.HasPrefix(p, "/") {
		return "", false
	}
	if _, hidden := firstDeceptiveRune(p); hidden {
		return "", false
	}
	c := filepath.ToSlash(filepath.Clean(p))
	if c == "." || c == ".." || strings.HasPrefix(c, "../") {
		return "", false
	}
	return c, true
}

// Globs.

// expandGlobIn expands pattern in the sandbox-relative directory base and
// returns the matches as sh would print them there (relative to base).
func expandGlobIn(root, base, pattern string, budget int) ([]string, *pathError, bool) {
	if base == "." {
		return expandGlob(root, pattern, budget)
	}
	var b strings.Builder
	writeGlobLiteral(&b, base)
	b.WriteByte('/')
	b.WriteString(pattern)
	matches, perr, ok := expandGlob(root, b.String(), budget)
	for i, m := range matches {
		matches[i] = m[len(base)+1:]
	}
	return matches, perr, ok
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// expandGlob expands a relative filepath.Match pattern against the sandbox
// the way sh does: component by component, hidden names only when the
// component starts with a literal dot, results sorted (byte order, as in the
// C locale). It returns nil when nothing matches, in which case sh passes the
// word through literally. Every directory is checked for containment before
// it is read, so a glob never lists a directory outside the sandbox.
func expandGlob(root, pattern string, budget int) ([]string, *pathError, bool) {
	comps := strings.Split(pattern, "/")
	prefixes := []string{""}
	matchedGlob := false
	for i, comp := range comps {
		last := i == len(comps)-1
		if comp == "" {
			if last && matchedGlob { // trailing slash: directories only
				prefixes = keepDirs(root, prefixes)
				for j := range prefixes {
					prefixes[j] += "/"
				}
			}
			continue
		}
		if !hasGlobMeta(comp) {
			lit := unescapeGlob(comp)
			for j := range prefixes {
				prefixes[j] = joinRel(prefixes[j], lit)
			}
			continue
		}
		if _, err := filepath.Match(comp, ""); err != nil {
			// A malformed bracket expression is literal text to sh.
			lit := unescapeGlob(comp)
			for j := range prefixes {
				prefixes[j] = joinRel(prefixes[j], lit)
			}
			continue
		}
		matchedGlob = true
		var next []string
		dotOK := strings.HasPrefix(comp, ".") || strings.HasPrefix(comp, `\.`)
		for _, dir := range prefixes {
			d := dir
			if d == "" {
				d = "."
			}
			real, perr := resolveIn(root, d)
			if perr != nil {
				return nil, perr, true
			}
			entries, err := os.ReadDir(root + "/" + real)
			if err != nil {
				continue // not a directory, or unreadable: no matches here
			}
			for _, e := range entries {
				name := e.Name()
				if name[0] == '.' && !dotOK {
					continue
				}
				if ok, _ := filepath.Match(comp, name); ok {
					next = append(next, joinRel(dir, name))
					if len(next) > budget {
						return nil, nil, false
					}
				}
			}
		}
		prefixes = next
		if len(prefixes) == 0 {
			return nil, nil, true
		}
	}
	if !matchedGlob {
		return nil, nil, true
	}
	// Literal components after the last glob must exist for sh to keep the
	// match.
	kept := prefixes[:0]
	for _, p := range prefixes {
		if _, err := os.Lstat(root + "/" + strings.TrimSuffix(p, "/")); err == nil {
			kept = append(kept, p)
		}
	}
	sort.Strings(kept)
	return kept, nil, true
}

func keepDirs(root string, paths []string) []string {
	out := paths[:0]
	for _, p := range paths {
		if fi, err := os.Stat(root + "/" + p); err == nil && fi.IsDir() {
			out = append(out, p)
		}
	}
	return out
}

func joinRel(dir, name string) string {
	if dir == "" {
		return name
	}
	if strings.HasSuffix(dir, "/") {
		return dir + name
	}
	return dir + "/" + name
}

// hasGlobMeta reports an unescaped *, ? or [ in a pattern component.
func hasGlobMeta(p string) bool {
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '*', '?', '[':
			return true
		}
	}
	return false
}

// unescapeGlob turns a pattern component without live metacharacters back
// into the literal text it matches.
func unescapeGlob(p string) string {
	if strings.IndexByte(p, '\\') < 0 {
		return p
	}
	b := make([]byte, 0, len(p))
	for i := 0; i < len(p); i++ {
		if p[i] == '\\' && i+1 < len(p) {
			i++
		}
		b = append(b, p[i])
	}
	return string(b)
}

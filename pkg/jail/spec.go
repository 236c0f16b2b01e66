package jail

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// defaultTailBytes is the tail returned when Spec.TailBytes is 0.
const defaultTailBytes = 64 << 10

// prepared is a validated Spec plus what the backends derive from it.
type prepared struct {
	spec      Spec
	limits    Limits
	tail      int
	pathDirs  []string    // PATH entries, absolute
	protected []protected // minimal set (descendants of another protected path dropped)
	realHome  string      // cleaned, possibly "" when unknown
	// before is the tripwire's snapshot of the protected set, taken here,
	// just before the backend builds its launcher.
	before *snapshot
	// notes go to Result.Reason (e.g. a .git that cannot be bound).
	notes []string
	// gitConfigs are the sandbox's git config files, sanitized: the jail
	// shows clean over each one that holds credentials.
	gitConfigs []gitConfigFile
}

// protected is one path kept read-only inside the jail.
type protected struct {
	path   string
	exists bool
	// created lists the directories that did not exist before the run and
	// that a bind mount point would create, deepest last; they are removed
	// afterwards when still empty so no stray directory stays in the sandbox.
	created []string
}

// refusal is a reason to fail closed that is not a caller mistake: Run turns
// it into a "no-jail" Result.
type refusal struct{ reason string }

func (r *refusal) Error() string { return r.reason }

// prepare validates spec. Caller mistakes are plain errors; conditions of the
// sandbox that make the contract unenforceable are *refusal.
func prepare(spec Spec, opts Options) (*prepared, error) {
	limits, err := spec.Limits.withDefaults()
	if err != nil {
		return nil, err
	}
	p := &prepared{spec: spec, limits: limits, tail: spec.TailBytes}
	if p.tail < 0 {
		return nil, fmt.Errorf("jail: negative TailBytes %d", p.tail)
	}
	if p.tail == 0 {
		p.tail = defaultTailBytes
	}
	if strings.TrimSpace(spec.Script) == "" {
		return nil, errors.New("jail: empty script")
	}
	if strings.ContainsRune(spec.Script, 0) {
		return nil, errors.New("jail: script contains a NUL byte")
	}
	p.realHome = realHome(opts)
	if err := checkSandbox(spec.Sandbox, p.realHome, tempRoot(opts)); err != nil {
		return nil, err
	}
	if p.pathDirs, err = checkPATH(spec.PATH, spec.Sandbox); err != nil {
		return nil, err
	}
	if err := checkEnv(spec.Env); err != nil {
		return nil, err
	}
	if err := checkOutputFile(spec.OutputFile, spec.Sandbox); err != nil {
		return nil, err
	}
	if spec.LiveBytes < 0 {
		return nil, fmt.Errorf("jail: negative LiveBytes %d", spec.LiveBytes)
	}
	asked := append([]string(nil), spec.Protected...)
	if err := checkProtectedNames(asked, spec.Sandbox); err != nil {
		return nil, err
	}
	var roots []string
	for _, b := range builtinProtected {
		asked = append(asked, filepath.Join(spec.Sandbox, b))
	}
	for _, a := range asked {
		roots = append(roots, strings.TrimPrefix(a, spec.Sandbox+"/"))
	}
	if p.before, err = takeSnapshot(spec.Sandbox, roots); err != nil {
		return nil, &refusal{err.Error()}
	}
	// Every .git the walk found is kept read-only too (and an in-sandbox
	// gitdir a .git file or link points to). One that cannot be bound (a
	// symlink on the way) is left to the tripwire rather than refusing the
	// run.
	var found []string
	for _, g := range p.before.gits {
		if g.kind == kDir || g.kind == kFile {
			found = append(found, filepath.Join(spec.Sandbox, g.rel))
		}
		if g.gitdir != "" {
			found = append(found, filepath.Join(spec.Sandbox, g.gitdir))
		}
	}
	if p.protected, p.notes, err = checkProtected(asked, found, spec.Sandbox); err != nil {
		return nil, err
	}
	p.gitConfigs = gitConfigFiles(spec.Sandbox, p.before)
	for _, g := range p.gitConfigs {
		if g.hidden != "" {
			p.notes = append(p.notes, fmt.Sprintf("git config %s is hidden in the jail: %s",
				strings.TrimPrefix(g.path, spec.Sandbox+"/"), g.hidden))
		}
	}
	return p, nil
}

// realHome is the symlink-resolved home whose credentials the jail hides;
// "" when unknown or "/" (a service account's home is no toolchain root).
func realHome(opts Options) string {
	h := opts.RealHome
	if h == "" {
		var err error
		if h, err = os.UserHomeDir(); err != nil {
			return ""
		}
	}
	if !filepath.IsAbs(h) {
		return ""
	}
	if r, err := filepath.EvalSymlinks(h); err == nil {
		h = r
	}
	if h = filepath.Clean(h); h == "/" {
		return ""
	}
	return h
}

func tempRoot(opts Options) string {
	root := opts.TempRoot
	if root == "" {
		root = os.TempDir()
	}
	if r, err := filepath.EvalSymlinks(root); err == nil {
		return r
	}
	return filepath.Clean(root)
}

// within reports whether path is root or lies below it (both clean, absolute).
func within(path, root string) bool {
	if root == "/" {
		return strings.HasPrefix(path, "/")
	}
	return path == root || strings.HasPrefix(path, root+"/")
}

// checkSandbox insists on an existing, absolute, symlink-resolved directory
// that does not swallow what the jail must keep out of reach.
func checkSandbox(sb, home, tmpRoot string) error {
	if sb == "" || !filepath.IsAbs(sb) || filepath.Clean(sb) != sb {
		return fmt.Errorf("jail: sandbox %q must be an absolute, clean path", sb)
	}
	if strings.ContainsRune(sb, 0) {
		return errors.New("jail: sandbox path contains a NUL byte")
	}
	resolved, err := filepath.EvalSymlinks(sb)
	if err != nil {
		return fmt.Errorf("jail: sandbox: %w", err)
	}
	if resolved != sb {
		return fmt.Errorf("jail: sandbox %q must be symlink-resolved (it resolves to %q)", sb, resolved)
	}
	fi, err := os.Stat(sb)
	if err != nil {
		return fmt.Errorf("jail: sandbox: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("jail: sandbox %q is not a directory", sb)
	}
	// A sandbox that contains these would hand the jailed code, read-write,
	// what the jail exists to hide or to protect.
	reserved := []string{"/usr", "/etc", "/bin", "/sbin", "/lib", "/proc", "/dev", "/sys", "/run", "/var", "/opt", tmpRoot}
	if home != "" {
		reserved = append(reserved, home)
	}
	for _, r := range reserved {
		if within(r, sb) {
			return fmt.Errorf("jail: sandbox %q contains %q; use a project directory", sb, r)
		}
	}
	return nil
}

// checkPATH splits the trusted PATH. Relative or empty entries would search
// the working directory, which is the sandbox: refused, as are entries in it.
func checkPATH(path, sandbox string) ([]string, error) {
	if path == "" {
		return nil, errors.New("jail: empty PATH")
	}
	var dirs []string
	for _, d := range strings.Split(path, ":") {
		if d == "" || !filepath.IsAbs(d) {
			return nil, fmt.Errorf("jail: PATH entry %q is not absolute (it would search the sandbox)", d)
		}
		d = filepath.Clean(d)
		if within(d, sandbox) {
			return nil, fmt.Errorf("jail: PATH entry %q is inside the sandbox", d)
		}
		if r, err := filepath.EvalSymlinks(d); err == nil && within(r, sandbox) {
			return nil, fmt.Errorf("jail: PATH entry %q resolves into the sandbox (%q)", d, r)
		}
		dirs = append(dirs, d)
	}
	return dirs, nil
}

// checkOutputFile: absolute, clean, outside the sandbox (the step could
// otherwise rewrite its own record), in an existing directory, and not an
// existing directory or symlink.
func checkOutputFile(path, sandbox string) error {
	if path == "" {
		return nil
	}
	if !filepath.IsAbs(path) || filepath.Clean(path) != path || strings.ContainsRune(path, 0) {
		return fmt.Errorf("jail: OutputFile %q must be an absolute, clean path", path)
	}
	dir, err := filepath.EvalSymlinks(filepath.Dir(path))
	if err != nil {
		return fmt.Errorf("jail: OutputFile %q: its directory: %w", path, err)
	}
	if within(dir, sandbox) || within(filepath.Join(dir, filepath.Base(path)), sandbox) {
		return fmt.Errorf("jail: OutputFile %q is inside the sandbox %q; keep it outside, where the step cannot rewrite it", path, sandbox)
	}
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
		return fmt.Errorf("jail: OutputFile %q exists and is not a regular file", path)
	}
	return nil
}

// reservedEnv are rebuilt by the jail and cannot be set by policy.
var reservedEnv = map[string]bool{"PATH": true, "HOME": true, "TMPDIR": true, runTokenVar: true}

func checkEnv(env map[string]string) error {
	for k, v := range env {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return fmt.Errorf("jail: invalid environment variable name %q", k)
		}
		if reservedEnv[k] {
			return fmt.Errorf("jail: policy may not set %s; the jail rebuilds it", k)
		}
		if strings.ContainsRune(v, 0) {
			return fmt.Errorf("jail: environment variable %s contains a NUL byte", k)
		}
	}
	return nil
}

// checkProtectedNames insists on absolute, clean paths inside the sandbox.
func checkProtectedNames(paths []string, sandbox string) error {
	for _, p := range paths {
		if !filepath.IsAbs(p) || filepath.Clean(p) != p || strings.ContainsRune(p, 0) {
			return fmt.Errorf("jail: protected path %q must be absolute and clean", p)
		}
		if p == sandbox || !within(p, sandbox) {
			return fmt.Errorf("jail: protected path %q is not inside the sandbox %q", p, sandbox)
		}
	}
	return nil
}

// checkProtected reduces the protected paths to a minimal set: a path below
// another protected path is already covered by it. asked (the caller's and
// the built-in ones) must be holdable or the run is refused; found (the
// .git entries the walk discovered) are bound when they can be and noted
// otherwise.
func checkProtected(asked, found []string, sandbox string) ([]protected, []string, error) {
	isFound := map[string]bool{}
	all := append([]string(nil), asked...)
	for _, f := range found {
		if !isFound[f] {
			isFound[f] = true
			all = append(all, f)
		}
	}
	for _, a := range asked {
		delete(isFound, a)
	}
	sort.Strings(all)
	var out []protected
	var notes []string
	for i, p := range all {
		if i > 0 && p == all[i-1] {
			continue
		}
		if len(out) > 0 && within(p, out[len(out)-1].path) {
			continue // covered by its protected ancestor (sorted order puts it first)
		}
		pr, err := inspectProtected(p, sandbox)
		if err != nil {
			var r *refusal
			if isFound[p] && errors.As(err, &r) {
				notes = append(notes, "not bound read-only (watched by the tripwire only): "+r.reason)
				continue
			}
			return nil, nil, err
		}
		if isFound[p] && !pr.exists {
			continue // a gitdir that points nowhere: nothing to bind
		}
		out = append(out, pr)
	}
	return out, notes, nil
}

// inspectProtected walks from the sandbox down to p without following
// symlinks. A symlink anywhere on the way is a refusal: the jail could not
// pin the name (the entry lives in a writable directory) and a bind would
// follow it to wherever it points.
func inspectProtected(p, sandbox string) (protected, error) {
	rel := strings.TrimPrefix(p, sandbox+"/")
	cur := sandbox
	pr := protected{path: p, exists: true}
	for _, part := range strings.Split(rel, "/") {
		cur = filepath.Join(cur, part)
		if !pr.exists {
			pr.created = append(pr.created, cur)
			continue
		}
		fi, err := os.Lstat(cur)
		switch {
		case errors.Is(err, os.ErrNotExist):
			pr.exists = false
			pr.created = append(pr.created, cur)
		case err != nil:
			return pr, fmt.Errorf("jail: protected path %q: %w", p, err)
		case fi.Mode()&os.ModeSymlink != 0:
			return pr, &refusal{fmt.Sprintf("protected path %q cannot be kept read-only: %q is a symlink", p, cur)}
		case cur != p && !fi.IsDir():
			return pr, &refusal{fmt.Sprintf("protected path %q cannot be kept read-only: %q is not a directory", p, cur)}
		}
	}
	return pr, nil
}

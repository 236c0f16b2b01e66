package jail

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Bwrap confines with bubblewrap (Linux namespaces).
type Bwrap struct {
	opts Options
}

// NewBwrap returns the bubblewrap backend. Availability is probed lazily
// (Available, Run) and cached per binary.
func NewBwrap(opts Options) *Bwrap { return &Bwrap{opts: opts} }

// Name is "bwrap".
func (b *Bwrap) Name() string { return NameBwrap }

// bwrapFeatures are flags of newer bubblewraps used when present.
type bwrapFeatures struct {
	disableUserns bool // --disable-userns (0.8+): no nested user namespaces
	size          bool // --size (0.7+?): cap tmpfs sizes
}

// probeResult is the cached outcome of probing one bwrap binary.
type probeResult struct {
	err      error
	features bwrapFeatures
}

var probeCache sync.Map // binary path → *probeOnce

type probeOnce struct {
	once sync.Once
	res  probeResult
}

// binary resolves the bwrap executable.
func (b *Bwrap) binary() (string, error) {
	if b.opts.BwrapPath != "" {
		return b.opts.BwrapPath, nil
	}
	p, err := exec.LookPath("bwrap")
	if err != nil {
		return "", errors.New("jail: bubblewrap (bwrap) is not installed: nothing can run jailed on this Linux host; " +
			"install it (Debian/Ubuntu: sudo apt-get install -y bubblewrap; Fedora: sudo dnf install bubblewrap)")
	}
	return p, nil
}

// Available probes once per binary that bwrap can really create the
// namespaces the jail needs, by running a trivial command in the same
// kind of jail.
func (b *Bwrap) Available() error {
	_, err := b.probe()
	return err
}

func (b *Bwrap) probe() (bwrapFeatures, error) {
	if runtime.GOOS != "linux" {
		return bwrapFeatures{}, fmt.Errorf("jail: bubblewrap needs Linux (this is %s)", runtime.GOOS)
	}
	bin, err := b.binary()
	if err != nil {
		return bwrapFeatures{}, err
	}
	v, _ := probeCache.LoadOrStore(bin, &probeOnce{})
	po := v.(*probeOnce)
	po.once.Do(func() { po.res = runProbe(bin) })
	return po.res.features, po.res.err
}

func runProbe(bin string) probeResult {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	help, err := exec.CommandContext(ctx, bin, "--help").CombinedOutput()
	if err != nil && len(help) == 0 {
		return probeResult{err: fmt.Errorf("jail: cannot run %s: %w", bin, err)}
	}
	f := bwrapFeatures{
		disableUserns: bytes.Contains(help, []byte("--disable-userns")),
		size:          bytes.Contains(help, []byte("--size")),
	}
	args := baseArgs(f, os.Geteuid())
	// The seccomp filter too: a kernel or bwrap that refuses it refuses
	// the backend, rather than every step.
	filter, err := seccompFile(os.TempDir())
	if err != nil {
		return probeResult{err: err}
	}
	if filter != nil {
		defer filter.Close()
		args = append(args, "--seccomp", "3")
	}
	args = append(args, systemArgs()...)
	args = append(args, volatileArgs(f, 1)...)
	args = append(args, finalArgs()...)
	args = append(args, shell, "-c", ":")
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	if filter != nil {
		cmd.ExtraFiles = []*os.File{filter}
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return probeResult{err: explainBwrapFailure(bin, stderr.String(), err)}
	}
	return probeResult{features: f}
}

// explainBwrapFailure turns bwrap's complaint into an actionable error.
func explainBwrapFailure(bin, stderr string, runErr error) error {
	msg := strings.TrimSpace(stderr)
	if msg == "" && runErr != nil {
		msg = runErr.Error()
	}
	const apparmorFix = "fix: sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0 " +
		"(or install an AppArmor profile for bwrap that grants `userns,`)"
	var hint string
	switch {
	case strings.Contains(msg, "setting up uid map") && strings.Contains(msg, "Permission denied"):
		hint = "AppArmor blocks unprivileged user namespaces (Ubuntu 23.10+/24.04 default, " +
			"kernel.apparmor_restrict_unprivileged_userns=1); " + apparmorFix
	case strings.Contains(msg, "No permissions to creat"):
		hint = "the kernel refuses unprivileged user namespaces; fix: sudo sysctl -w kernel.unprivileged_userns_clone=1 " +
			"(Debian) and/or sudo sysctl -w user.max_user_namespaces=15000; on Ubuntu 24.04 also " + apparmorFix
	case strings.Contains(msg, "No space left on device"):
		hint = "user namespaces are disabled or exhausted (user.max_user_namespaces); " +
			"fix: sudo sysctl -w user.max_user_namespaces=15000"
	case strings.Contains(msg, "Operation not permitted") || strings.Contains(msg, "Permission denied"):
		hint = "namespace creation is not permitted here (AppArmor, seccomp or a container without " +
			"user-namespace support); on Ubuntu 24.04 " + apparmorFix + "; inside Docker run with " +
			"--security-opt seccomp=unconfined --security-opt apparmor=unconfined or use a VM runner"
	default:
		hint = "bubblewrap cannot build the jail on this host"
	}
	return fmt.Errorf("jail: bubblewrap probe failed (%s: %q): %s; nothing will run jailed until this is fixed", bin, msg, hint)
}

// Run confines spec with bubblewrap.
func (b *Bwrap) Run(ctx context.Context, spec Spec) (Result, error) {
	p, err := prepare(spec, b.opts)
	if res, done, err := settle(p, err, NameBwrap); done {
		return res, err
	}
	f, err := b.probe()
	if err != nil {
		return refuse(NameBwrap, err.Error()), nil
	}
	bin, err := b.binary()
	if err != nil {
		return refuse(NameBwrap, err.Error()), nil
	}
	ex, err := computeExposureWith(p.pathDirs, b.opts.ExtraReadOnly,
		newExposureGuard(p.realHome, spec.Sandbox, tempRoot(b.opts), os.Getenv))
	if err != nil {
		return Result{}, err
	}
	cleanup := func() { removeCreatedMountPoints(spec.Sandbox, p.protected) }
	defer cleanup() // also when execute fails before the step ran
	return execute(ctx, p, b.opts, func(rd *runDir) (launch, error) {
		overlays, err := writeGitConfigOverlays(p.gitConfigs, rd)
		if err != nil {
			return launch{}, err
		}
		filter, err := seccompFile(rd.root)
		if err != nil {
			return launch{}, err
		}
		var files []*os.File
		if filter != nil {
			files = append(files, filter)
			rd.seccompFD = startedFD + len(files)
		}
		return launch{
			files:        files,
			backend:      NameBwrap,
			argv:         append([]string{bin}, bwrapArgs(p, rd, f, ex, overlays)...),
			notes:        ex.notes,
			pidNamespace: true,
			after:        cleanup,
		}, nil
	})
}

// settle handles prepare's outcome: a refusal becomes a no-jail Result.
func settle(p *prepared, err error, backend string) (Result, bool, error) {
	if err == nil {
		return Result{}, false, nil
	}
	var r *refusal
	if errors.As(err, &r) {
		return refuse(backend, r.reason), true, nil
	}
	return Result{}, true, err
}

// jailUID and jailGID are the ids a root runner's jailed code runs as
// inside its user namespace (nobody/nogroup on Debian and Ubuntu). They map
// to the runner's own ids outside: see the package doc for what that does
// and does not change.
const jailUID, jailGID = 65534, 65534

// baseArgs isolate: every namespace (network included, so only a private
// loopback exists), always a user namespace (so capabilities are those of a
// namespace that owns nothing of the host, and, when the runner is root, an
// unprivileged uid inside), no capabilities, no nested user namespaces where
// bwrap can forbid them, a new session (no TIOCSTI into the caller's
// terminal), and death with the caller.
func baseArgs(f bwrapFeatures, euid int) []string {
	args := []string{"--unshare-all", "--unshare-user", "--die-with-parent", "--new-session", "--cap-drop", "ALL"}
	if f.disableUserns {
		// No nested user namespace: it would hand the jailed code a fresh
		// set of capabilities over new namespaces (kernel attack surface).
		args = append(args, "--disable-userns")
	}
	if euid == 0 {
		args = append(args, "--uid", strconv.Itoa(jailUID), "--gid", strconv.Itoa(jailGID))
	}
	return args
}

// systemArgs expose the OS read-only, mirroring merged-/usr symlinks.
func systemArgs() []string {
	var args []string
	for _, d := range systemDirs {
		fi, err := os.Lstat(d)
		switch {
		case err != nil:
		case fi.Mode()&os.ModeSymlink != 0:
			if target, err := os.Readlink(d); err == nil {
				args = append(args, "--symlink", target, d)
			}
		case fi.IsDir():
			args = append(args, "--ro-bind", d, d)
		}
	}
	return args
}

// volatileArgs give a private /proc (of the new pid namespace: no other
// process's environ), a minimal /dev, and fresh tmpfs /tmp and /dev/shm.
// tmpfs pages are not resident memory of any process, so the RSS watchdog
// cannot see them: their size is capped instead (when bwrap supports it).
// /proc is then remounted read-only as a whole: /proc/sys (kernel.core_pattern
// and every other global knob), /proc/sysrq-trigger and the rest write to the
// host kernel, and a root runner's jailed uid maps to host uid 0, which is
// what most of them check. /dev is read-only too (its nodes stay usable);
// /dev/shm is its own capped tmpfs.
func volatileArgs(f bwrapFeatures, sizeMB int) []string {
	args := []string{"--proc", "/proc", "--remount-ro", "/proc", "--dev", "/dev"}
	for _, t := range []string{"/tmp", "/dev/shm"} {
		args = append(args, "--perms", "1777")
		if f.size {
			args = append(args, "--size", strconv.FormatInt(int64(sizeMB)<<20, 10))
		}
		args = append(args, "--tmpfs", t)
	}
	return append(args, "--remount-ro", "/dev")
}

// finalArgs come after every mount: the jail's own root (a tmpfs bwrap
// builds, holding the mount points) becomes read-only, so nothing can be
// written outside the sandbox, the private directories and the capped tmpfs.
func finalArgs() []string {
	return []string{"--remount-ro", "/"}
}

// bwrapArgs builds the whole command line after the binary. Order matters:
// later mounts cover earlier ones, so tmpfs /tmp comes before anything bound
// below /tmp, the sandbox comes after the read-only toolchains, and the
// protected paths come last, over the read-write sandbox.
func bwrapArgs(p *prepared, rd *runDir, f bwrapFeatures, ex exposure, overlays []overlay) []string {
	args := baseArgs(f, os.Geteuid())
	if rd.seccompFD > 0 {
		args = append(args, "--seccomp", strconv.Itoa(rd.seccompFD))
	}
	args = append(args, systemArgs()...)
	args = append(args, systemMaskArgs(f, ex.system)...)
	args = append(args, volatileArgs(f, p.limits.FileSizeMB)...)
	for _, m := range existingEtcMasks() {
		args = append(args, maskArgs(m, rd)...)
	}
	for _, r := range ex.roots {
		args = append(args, "--ro-bind", r, r)
	}
	for _, m := range ex.masks {
		args = append(args, maskArgs(m, rd)...)
	}
	args = append(args,
		"--bind", rd.tmp, rd.tmp,
		"--bind", rd.home, rd.home,
		"--bind", p.spec.Sandbox, p.spec.Sandbox)
	for _, pr := range p.protected {
		if pr.exists {
			args = append(args, "--ro-bind", pr.path, pr.path)
		} else {
			// An empty read-only directory over the name: the jailed code
			// cannot create it (e.g. plant .git/hooks before a later git
			// init). bwrap makes the mount point; it is removed afterwards.
			args = append(args, "--ro-bind", rd.emptyDir, pr.path)
		}
	}
	// Git configs that hold credentials read through a sanitized copy
	// (over the read-only .git binds above).
	for _, o := range overlays {
		args = append(args, "--ro-bind", o.src, o.dst)
	}
	args = append(args, systemMaskSealArgs(ex.system)...)
	args = append(args, finalArgs()...)
	args = append(args, "--chdir", p.spec.Sandbox)
	return append(args, preludeArgv(p.limits, p.spec.Script, rd.nproc)...)
}

// overlay is a file bound read-only over another inside the jail.
type overlay struct{ src, dst string }

// writeGitConfigOverlays writes the sanitized copy of every git config that
// needs one into the run directory.
func writeGitConfigOverlays(cfgs []gitConfigFile, rd *runDir) ([]overlay, error) {
	var out []overlay
	for i, g := range cfgs {
		if !g.needsOverlay() {
			continue
		}
		src := filepath.Join(rd.root, "gitconfig-"+strconv.Itoa(i))
		if err := os.WriteFile(src, g.clean, 0o444); err != nil {
			return nil, fmt.Errorf("jail: sanitized git config: %w", err)
		}
		out = append(out, overlay{src: src, dst: g.path})
	}
	return out, nil
}

// systemMaskArgs hide each directory behind an empty tmpfs (mode 0755, a
// small size): a tmpfs rather than a read-only bind of an empty directory,
// because the sandbox or a private directory may lie below one (a runner's
// work directory) and bwrap must create its mount point there.
// systemMaskSealArgs, after every bind, makes each read-only.
func systemMaskArgs(f bwrapFeatures, dirs []string) []string {
	var args []string
	for _, d := range dirs {
		args = append(args, "--perms", "0755")
		if f.size {
			args = append(args, "--size", "1048576")
		}
		args = append(args, "--tmpfs", d)
	}
	return args
}

// systemMaskSealArgs remounts each system mask read-only (the binds made
// inside it keep their own flags).
func systemMaskSealArgs(dirs []string) []string {
	var args []string
	for _, d := range dirs {
		args = append(args, "--remount-ro", d)
	}
	return args
}

// maskArgs hide path behind an empty read-only file or directory.
func maskArgs(path string, rd *runDir) []string {
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode()&os.ModeSymlink != 0 {
		return nil
	}
	if fi.IsDir() {
		return []string{"--ro-bind", rd.emptyDir, path}
	}
	return []string{"--ro-bind", rd.emptyFile, path}
}

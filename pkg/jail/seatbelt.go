package jail

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"unicode/utf8"
)

// defaultSandboxExec is the Seatbelt launcher shipped with macOS.
const defaultSandboxExec = "/usr/bin/sandbox-exec"

// Seatbelt confines with macOS sandbox-exec and a generated deny-default
// profile (see seatbeltProfile).
type Seatbelt struct {
	opts Options
}

// NewSeatbelt returns the Seatbelt backend.
func NewSeatbelt(opts Options) *Seatbelt { return &Seatbelt{opts: opts} }

// Name is "seatbelt".
func (s *Seatbelt) Name() string { return NameSeatbelt }

func (s *Seatbelt) binary() string {
	if s.opts.SandboxExecPath != "" {
		return s.opts.SandboxExecPath
	}
	return defaultSandboxExec
}

var seatbeltProbes sync.Map // binary → *seatbeltProbe

type seatbeltProbe struct {
	once sync.Once
	err  error
}

// Available probes once per binary (see seatbelt_darwin.go).
func (s *Seatbelt) Available() error {
	v, _ := seatbeltProbes.LoadOrStore(s.binary(), &seatbeltProbe{})
	p := v.(*seatbeltProbe)
	p.once.Do(func() { p.err = probeSeatbelt(s.binary(), s.opts) })
	return p.err
}

// Run confines spec with Seatbelt.
func (s *Seatbelt) Run(ctx context.Context, spec Spec) (Result, error) {
	p, err := prepare(spec, s.opts)
	if res, done, err := settle(p, err, NameSeatbelt); done {
		return res, err
	}
	if err := s.Available(); err != nil {
		return refuse(NameSeatbelt, err.Error()), nil
	}
	ex, err := computeExposure(p.pathDirs, p.realHome, spec.Sandbox, s.opts.ExtraReadOnly)
	if err != nil {
		return Result{}, err
	}
	protected := protectedPaths(p.protected)
	created, err := pinAncestors(spec.Sandbox, protected)
	defer unpinAncestors(created)
	if err != nil {
		return refuse(NameSeatbelt, err.Error()), nil
	}
	secrets := seatbeltSecrets(p.realHome, ex.masks)
	return execute(ctx, p, s.opts, func(rd *runDir) (launch, error) {
		profile, params, err := seatbeltProfile(seatbeltInputs{
			sandbox:   spec.Sandbox,
			runDir:    rd.root,
			writable:  []string{rd.tmp, rd.home},
			output:    []string{rd.out, rd.started},
			protected: protected,
			home:      p.realHome,
			exposed:   ex.roots,
			secrets:   secrets,
		})
		if err != nil {
			return launch{backend: NameSeatbelt}, &refusal{"the Seatbelt profile cannot be built for this step: " + err.Error()}
		}
		argv := seatbeltArgv(s.binary(), profile, params, limitedArgv(p.limits, spec.Script))
		return launch{backend: NameSeatbelt, argv: argv, notes: ex.notes}, nil
	})
}

func protectedPaths(prs []protected) []string {
	out := make([]string, len(prs))
	for i, pr := range prs {
		out[i] = pr.path
	}
	return out
}

// seatbeltArgv is `sandbox-exec -p PROFILE -D KEY=VALUE ... command...`:
// every path reaches the profile as a parameter, never as profile text.
func seatbeltArgv(bin, profile string, params []sbplParam, command []string) []string {
	argv := []string{bin, "-p", profile}
	for _, p := range params {
		argv = append(argv, "-D", p.key+"="+p.value)
	}
	return append(argv, command...)
}

// seatbeltInputs are the symlink-resolved paths a profile is built from.
type seatbeltInputs struct {
	sandbox   string   // read-write; the working directory
	runDir    string   // the private run directory: readable (TMPDIR, HOME and the output live in it)
	writable  []string // read-write trees: the private TMPDIR and HOME
	output    []string // files the step writes through inherited descriptors (output, started marker)
	protected []string // inside the sandbox; read-only even when absent, matched case-insensitively
	home      string   // the real home: unreadable except the exposed roots in it; "" when unknown
	exposed   []string // read-only roots (toolchains) readable even inside a hidden area
	secrets   []string // unreadable and unwritable wherever they are (credentials, their link targets)
}

// seatbeltHidden are host trees a step cannot read unless a later rule
// re-allows a part of them (the sandbox, its run directory, an exposed
// toolchain): every user's home, root's home, other volumes, and the
// per-user and shared temporary directories where other processes keep
// their files (on a hosted runner RUNNER_TEMP is under the home).
var seatbeltHidden = []string{"/Users", "/Volumes", "/private/var/root", "/private/var/folders", "/private/tmp", "/private/var/tmp"}

// seatbeltRootSecrets are readable by root only. The jail never starts as
// root on a hosted runner, and sudo is refused inside it; these still stay
// unreadable for a self-hosted runner that runs as root.
var seatbeltRootSecrets = []string{
	"/private/etc/sudoers", "/private/etc/sudoers.d", "/private/etc/master.passwd",
	"/private/etc/krb5.keytab", "/private/var/db/sudo", "/private/var/db/SystemKey",
	"/private/var/db/dslocal", "/Library/Keychains",
}

// seatbeltNoExec are the programs that turn a passwordless sudo (hosted
// runners have one) or a known password into root. A copy loses its setuid
// bit and a hard link to them cannot be made, so denying the paths denies
// the privilege.
var seatbeltNoExec = []string{"/usr/bin/sudo", "/usr/bin/su", "/usr/bin/login", "/usr/libexec/security_authtrampoline"}

// seatbeltServices is the whole mach-lookup allowlist: user and group
// lookups (getpwuid, getgrouplist) that git, python and go use. Nothing that
// acts for the caller outside the sandbox: no LaunchServices, no
// preferences daemon, no URL session daemon, no Keychain, no launchd jobs.
var seatbeltServices = []string{
	"com.apple.system.opendirectoryd.libinfo",
	"com.apple.system.opendirectoryd.membership",
}

// seatbeltDeniedServices are denied again after the allowlist, by prefix, so
// that a later widening of the allowlist cannot reach them: LaunchServices
// (open, .command files, URL handlers), Apple events, preferences (defaults
// write), background URL sessions (network I/O for the caller), the
// Keychain and trust daemons.
var seatbeltDeniedServices = []string{
	"com.apple.coreservices.", "com.apple.CoreServices.", "com.apple.lsd.", "com.apple.cfprefsd.",
	"com.apple.nsurlsessiond", "com.apple.SecurityServer", "com.apple.securityd", "com.apple.trustd",
	"com.apple.ctkd.", "com.apple.FSEvents",
}

// seatbeltDeniedOps are operations denied explicitly at the end of the
// profile. Deny-default already refuses them; the explicit rules say so and
// make sure no rule above can re-open one.
var seatbeltDeniedOps = []string{
	"network*", "lsopen", "appleevent-send", "job-creation", "user-preference-write",
	"file-mount", "file-unmount", "nvram*", "sysctl-write", "mach-register",
}

// tiocsti is TIOCSTI on macOS, _IOW('t', 114, char): it pushes bytes into a
// terminal's input queue as if typed. Denied by number on every descriptor.
const tiocsti uint64 = 0x80000000 | 1<<16 | uint64('t')<<8 | 114 // 0x80017472

// maxRegexParam bounds one regex parameter. sandbox-exec rejects long string
// literals in profile text; its limit for parameters is not documented, so a
// path whose pattern would be longer is refused rather than bet on.
const maxRegexParam = 1024

// seatbeltProfile renders the SBPL profile and its parameters. Deny by
// default; then, in this order, because the last matching rule wins:
//
//   - processes: exec and fork; signals, information and task ports only
//     for processes of this sandbox; sysctl reads; host information; POSIX
//     semaphores; sockets may be created (Unix and IP) but no network
//     operation is allowed; mach-lookup of seatbeltServices only;
//   - reads (and executable mappings) of everything, then none of the
//     hidden areas (seatbeltHidden and the real home, case-insensitively),
//     then again the sandbox, the run directory and the exposed toolchain
//     roots, and metadata (not contents) of the directories above them;
//   - writes (and ioctls) only to the sandbox, the private TMPDIR and HOME,
//     the output file and the /dev nodes a shell needs;
//   - then the denials nothing above may undo: writes to the protected paths
//     (case-insensitively, even when absent), to every .git at any depth when
//     the sandbox's .git is protected, and to the directories between the
//     sandbox and a protected path (so a protected path cannot be renamed
//     away with its parent); hard links and clones; reads and writes of the
//     credential locations, their symlink targets and root's secrets; the
//     terminals' devices; exec of sudo, su and login; the kern.procargs
//     sysctls (other processes' arguments and environment); TIOCSTI by
//     number; the named service prefixes; and every operation of
//     seatbeltDeniedOps.
//
// Every path is a parameter: `(param "KEY")` in the text, `-D KEY=path` on
// the command line. Patterns are built here and passed the same way.
func seatbeltProfile(in seatbeltInputs) (string, []sbplParam, error) {
	w := &sbplWriter{count: map[string]int{}}
	// Every path is checked as it comes, before patterns are built from it
	// (a pattern of an invalid path would be a valid pattern of another).
	all := append([]string{in.sandbox, in.runDir}, in.writable...)
	all = append(append(append(append(all, in.output...), in.protected...), in.exposed...), in.secrets...)
	if in.home != "" {
		all = append(all, in.home)
	}
	if err := checkParamValues(all); err != nil {
		return "", nil, err
	}
	w.processRules(seatbeltServices, "(allow ipc-posix-sem)",
		"(allow system-socket (socket-domain AF_UNIX) (socket-domain AF_INET) (socket-domain AF_INET6))")
	w.readRules("the step", in.home, append([]string{in.sandbox, in.runDir}, in.exposed...))

	w.line("; writes: the sandbox, the private TMPDIR and HOME, the output, the /dev nodes a shell needs")
	writeTrees := []string{"(subpath " + w.param("SANDBOX", in.sandbox) + ")"}
	for _, t := range in.writable {
		writeTrees = append(writeTrees, "(subpath "+w.param("WRITE", t)+")")
	}
	w.writeRules(writeTrees, in.output)

	w.line("; denials no rule above may undo")
	var protect []string
	gitAnyDepth := false
	for _, p := range in.protected {
		rel, ok := relInside(p, in.sandbox)
		if !ok {
			w.fail(fmt.Errorf("jail: protected path %q is not inside the sandbox %q", p, in.sandbox))
			continue
		}
		if strings.EqualFold(rel, ".git") {
			gitAnyDepth = true
		}
		protect = append(protect, w.regex("PROTECT", "^"+quoteRegex(in.sandbox)+"/"+foldPattern(rel)+"(/|$)"))
	}
	if gitAnyDepth {
		protect = append(protect, w.regex("PROTECT", "^"+quoteRegex(in.sandbox)+"/(.*/)?"+foldPattern(".git")+"(/|$)"))
	}
	for _, a := range protectedAncestors(in.sandbox, in.protected) {
		rel, _ := relInside(a, in.sandbox)
		protect = append(protect, w.regex("PIN", "^"+quoteRegex(in.sandbox)+"/"+foldPattern(rel)+"$"))
	}
	w.rule("deny file-write*", protect)
	w.finalDenials(in.secrets, seatbeltDeniedServices, seatbeltDeniedOps)
	if w.err != nil {
		return "", nil, w.err
	}
	return w.b.String(), w.params, nil
}

// readOps are the operations a read rule names: reading and mapping.
const readOps = "file-read* file-map-executable"

// checkParamValues checks every path of a profile before any pattern is
// built from it (a pattern of an invalid path would be a valid pattern of
// another).
func checkParamValues(paths []string) error {
	for _, p := range paths {
		if err := checkParamValue(p); err != nil {
			return err
		}
	}
	return nil
}

// processRules opens a profile: deny by default, then what processes of
// the jail may do among themselves (start, signal and inspect only their
// own), the ipc and socket rules given, and the mach services allowed.
func (w *sbplWriter) processRules(services []string, ipc ...string) {
	w.line("(version 1)")
	w.line("(deny default)")

	w.line("; processes")
	w.line("(allow process-exec* process-fork)")
	w.line("(allow signal (target same-sandbox))")
	w.line("(allow process-info* (target same-sandbox))")
	w.line("(allow mach-priv-task-port (target same-sandbox))")
	w.line("(allow sysctl-read)")
	w.line("(allow mach-host*)")
	for _, l := range ipc {
		w.line(l)
	}
	var names []string
	for _, s := range services {
		names = append(names, "(global-name "+sbplLiteral(s)+")")
	}
	w.rule("allow mach-lookup", names)
}

// readRules allows reads of the system, denies the hidden areas (every
// home, other volumes, the shared temporary directories), then reopens the
// readable trees and the metadata of the directories above them.
func (w *sbplWriter) readRules(who, home string, readable []string) {
	w.line("; reads: the system, none of the hidden areas, then what " + who + " needs")
	w.line("(allow " + readOps + ")")
	hidden := append([]string(nil), seatbeltHidden...)
	if home != "" {
		hidden = append([]string{home}, hidden...)
	}
	w.rule("deny "+readOps, w.anyOf("HIDE", hidden, "(/|$)"))
	var reopen []string
	for _, r := range readable {
		reopen = append(reopen, "(subpath "+w.param("READ", r)+")")
	}
	w.rule("allow "+readOps, reopen)
	var meta []string
	for _, a := range pathAncestors(readable) {
		meta = append(meta, "(literal "+w.param("META", a)+")")
	}
	w.rule("allow file-read-metadata", meta)
}

// writeRules allows writes to the trees given (already rendered as
// filters), to the output files, and to the /dev nodes a shell needs; and
// ioctls on the same trees and the terminal and random devices.
func (w *sbplWriter) writeRules(trees, output []string) {
	writes := append([]string(nil), trees...)
	for _, o := range output {
		writes = append(writes, "(literal "+w.param("OUTPUT", o)+")")
	}
	for _, d := range []string{"/dev/null", "/dev/zero", "/dev/tty", "/dev/dtracehelper", "/dev/stdout", "/dev/stderr"} {
		writes = append(writes, "(literal "+sbplLiteral(d)+")")
	}
	writes = append(writes, `(regex #"^/dev/fd/[0-9]+$")`)
	w.rule("allow file-write*", writes)
	ioctls := append([]string(nil), trees...)
	for _, d := range []string{"/dev/null", "/dev/zero", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/dtracehelper"} {
		ioctls = append(ioctls, "(literal "+sbplLiteral(d)+")")
	}
	w.rule("allow file-ioctl", ioctls)
}

// finalDenials closes a profile with what no rule above may undo: new
// names for an inode (links, clones), the secrets and root's (read or
// written), the host keys and terminals, the programs that change
// identity, other processes' arguments, TIOCSTI, the mach services that
// act for the caller, and the operations given.
func (w *sbplWriter) finalDenials(secrets, deniedServices, deniedOps []string) {
	w.line("(deny file-link file-clone)")
	secret := w.anyOf("SECRET", append(append([]string(nil), secrets...), seatbeltRootSecrets...), "(/|$)")
	secret = append(secret, w.regex("SECRET", "^"+foldPattern("/private/etc/ssh/ssh_host_")+"[^/]*"+foldPattern("_key")+"$"))
	secret = append(secret, `(regex #"^/dev/(pty|ptmx|tty.)")`)
	w.rule("deny "+readOps+" file-write*", secret)
	w.rule("deny process-exec*", w.anyOf("NOEXEC", seatbeltNoExec, "$"))
	w.line(`(deny sysctl-read (sysctl-name-prefix "kern.procargs"))`)
	w.line(fmt.Sprintf("(deny file-ioctl (ioctl-command %d))", tiocsti))
	var denied []string
	for _, s := range deniedServices {
		denied = append(denied, "(global-name-prefix "+sbplLiteral(s)+")")
	}
	w.rule("deny mach-lookup", denied)
	for _, op := range deniedOps {
		w.line("(deny " + op + ")")
	}
}

// sbplParam is one -D KEY=VALUE of sandbox-exec.
type sbplParam struct{ key, value string }

// sbplWriter accumulates profile text and parameters; the first error sticks.
type sbplWriter struct {
	b      strings.Builder
	params []sbplParam
	count  map[string]int
	err    error
}

func (w *sbplWriter) line(s string) {
	w.b.WriteString(s)
	w.b.WriteByte('\n')
}

func (w *sbplWriter) fail(err error) {
	if w.err == nil {
		w.err = err
	}
}

// rule writes (ACTION-AND-OPS FILTER...). With no filter it writes nothing:
// a rule without a filter would apply to everything.
func (w *sbplWriter) rule(head string, filters []string) {
	if len(filters) == 0 {
		return
	}
	w.b.WriteString("(" + head)
	for _, f := range filters {
		w.b.WriteString("\n  " + f)
	}
	w.b.WriteString(")\n")
}

// param registers value under a fresh key PREFIX_N and returns the
// expression that reads it in the profile.
func (w *sbplWriter) param(prefix, value string) string {
	if err := checkParamValue(value); err != nil {
		w.fail(err)
	}
	key := fmt.Sprintf("%s_%d", prefix, w.count[prefix])
	w.count[prefix]++
	w.params = append(w.params, sbplParam{key: key, value: value})
	return `(param "` + key + `")`
}

// regex registers a pattern parameter and returns its (regex ...) filter.
func (w *sbplWriter) regex(prefix, pattern string) string {
	if len(pattern) > maxRegexParam {
		w.fail(fmt.Errorf("jail: a Seatbelt pattern would be %d bytes (limit %d); the path behind it is too long to protect: %.80q...",
			len(pattern), maxRegexParam, pattern))
	}
	return "(regex " + w.param(prefix, pattern) + ")"
}

// anyOf registers as few pattern parameters as fit maxRegexParam that
// together match any of paths (case-insensitively) followed by suffix, and
// returns their filters. Fewer, longer patterns keep the number of -D
// arguments and of rules small; each path is still matched whole.
func (w *sbplWriter) anyOf(prefix string, paths []string, suffix string) []string {
	var filters, chunk []string
	size := 0
	flush := func() {
		if len(chunk) > 0 {
			filters = append(filters, w.regex(prefix, "^("+strings.Join(chunk, "|")+")"+suffix))
			chunk, size = nil, 0
		}
	}
	overhead := len("^()") + len(suffix)
	for _, p := range paths {
		alt := foldPattern(p)
		if len(chunk) > 0 && overhead+size+1+len(alt) > maxRegexParam {
			flush()
		}
		chunk = append(chunk, alt)
		size += len(alt) + 1
	}
	flush()
	return filters
}

// checkParamValue refuses what a path parameter must not carry: control
// characters and invalid UTF-8 are not something a sandbox path should
// have, and how the profile machinery treats them is not something to bet
// on.
func checkParamValue(s string) error {
	if s == "" {
		return errors.New("jail: empty path for a Seatbelt parameter")
	}
	if !utf8.ValidString(s) {
		return fmt.Errorf("jail: path %q is not valid UTF-8; Seatbelt profiles cannot carry it safely", s)
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("jail: path %q contains a control character; refusing to pass it to a Seatbelt profile", s)
		}
	}
	return nil
}

// sbplLiteral quotes a constant of this file (service names, /dev nodes) as
// an SBPL string. Never used for a path from outside: those are parameters.
func sbplLiteral(s string) string {
	s = strings.ReplaceAll(s, `\`, `\\`)
	return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"`
}

// relInside returns p relative to root when p lies strictly below it.
func relInside(p, root string) (string, bool) {
	if p == root || !within(p, root) {
		return "", false
	}
	return strings.TrimPrefix(p, strings.TrimSuffix(root, "/")+"/"), true
}

// protectedAncestors are the directories strictly between the sandbox and
// each protected path, shallowest first, without duplicates. A rename of any
// of them would carry the protected path away (and a new directory could
// take its name), so the profile pins them.
func protectedAncestors(sandbox string, protected []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range protected {
		rel, ok := relInside(p, sandbox)
		if !ok {
			continue
		}
		parts := strings.Split(rel, "/")
		cur := sandbox
		for _, part := range parts[:len(parts)-1] {
			cur = filepath.Join(cur, part)
			if !seen[cur] {
				seen[cur] = true
				out = append(out, cur)
			}
		}
	}
	return out
}

// pathAncestors are the directories above each path, excluding "/", sorted
// and without duplicates: a program resolving one of the paths (realpath,
// getcwd fallbacks) needs their metadata, not their contents.
func pathAncestors(paths []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range paths {
		for d := filepath.Dir(p); d != "/" && d != "." && !seen[d]; d = filepath.Dir(d) {
			seen[d] = true
			out = append(out, d)
		}
	}
	sort.Strings(out)
	return out
}

// seatbeltSecrets are the paths the profile keeps unreadable wherever they
// are: the real home's credential locations, the place each one resolves to
// when it is (or lies below) a symlink — a ~/.npmrc linked into a dotfiles
// repository must be denied there too — and the credential locations inside
// exposed roots (masks), sorted and without duplicates.
func seatbeltSecrets(home string, masks []string) []string {
	seen := map[string]bool{}
	var out []string
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	if home != "" {
		for _, c := range credentialPaths {
			p := filepath.Join(home, c)
			add(p)
			if r, err := filepath.EvalSymlinks(p); err == nil && r != p {
				add(r)
			}
		}
	}
	for _, m := range masks {
		add(m)
	}
	sort.Strings(out)
	return out
}

// pinAncestors creates the missing directories between the sandbox and each
// protected path, so the profile can pin them (a pinned name that does not
// exist could not be created at all, which would take `.github/` away from a
// step that only wants to add a file to it). It never follows a symlink:
// prepare has refused protected paths with a symlink on the way, os.Mkdir
// does not follow one at the last component, and every pinned directory is
// checked again once all exist. It returns what it created, deepest last,
// for unpinAncestors.
func pinAncestors(sandbox string, protected []string) ([]string, error) {
	var created []string
	for _, d := range protectedAncestors(sandbox, protected) {
		err := os.Mkdir(d, 0o755)
		switch {
		case err == nil:
			created = append(created, d)
		case errors.Is(err, os.ErrExist):
		default:
			return created, fmt.Errorf("jail: cannot create %q to keep the protected paths below it in place: %v", d, err)
		}
	}
	for _, d := range protectedAncestors(sandbox, protected) {
		fi, err := os.Lstat(d)
		if err != nil || !fi.IsDir() {
			return created, fmt.Errorf("jail: %q must be a directory (not a symlink) to keep the protected paths below it in place", d)
		}
	}
	return created, nil
}

// unpinAncestors removes the directories pinAncestors created, deepest first,
// when they are still empty directories. rmdir neither follows a symlink nor
// removes anything but an empty directory.
func unpinAncestors(created []string) {
	for i := len(created) - 1; i >= 0; i-- {
		if fi, err := os.Lstat(created[i]); err == nil && fi.IsDir() {
			_ = syscall.Rmdir(created[i])
		}
	}
}

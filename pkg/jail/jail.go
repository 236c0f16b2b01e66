package jail

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"time"
)

// Backend names accepted by Select.
const (
	NameAuto     = "auto"
	NameBwrap    = "bwrap"
	NameSeatbelt = "seatbelt"
	NameNone     = "none"
)

// KilledNoJail is Result.Killed when nothing ran because no jail could be
// built (fail closed).
const KilledNoJail = "no-jail"

// KilledCanceled is Result.Killed when the caller's context ended the step.
const KilledCanceled = "canceled"

// Limits bounds one step. A zero field means "use the default"; a negative
// field is a caller mistake. MB means MiB throughout.
type Limits struct {
	CPUSeconds int           // CPU time of every jailed process; default 60
	FileSizeMB int           // size of every file a jailed process writes (RLIMIT_FSIZE); default 256
	MemoryMB   int           // memory of the whole step (cgroup, else resident memory polled); default 2048
	WallClock  time.Duration // whole step; default 90s
	// Tasks caps the step's processes and threads at any moment (cgroup
	// pids.max, else RLIMIT_NPROC or polling, see Result.TaskGuard);
	// default 1024.
	Tasks int
	// DiskMB caps what a step adds to the disk: the growth of the used space
	// of the filesystems holding the sandbox and the private TMPDIR/HOME,
	// polled during the step and checked after it; default 4096 (4 GiB).
	// The jail's own tmpfs (/tmp, /dev/shm) are capped by size instead
	// (FileSizeMB each). New files (inodes) count too, 4 KiB of the cap
	// each: empty files take no block, and millions of them would exhaust
	// the host filesystem's inodes.
	DiskMB int
}

// DefaultLimits returns the seed's caps and the jail's task and disk caps.
func DefaultLimits() Limits {
	return Limits{CPUSeconds: 60, FileSizeMB: 256, MemoryMB: 2048, WallClock: 90 * time.Second,
		Tasks: 1024, DiskMB: 4096}
}

// withDefaults fills zero fields from DefaultLimits and rejects negatives.
func (l Limits) withDefaults() (Limits, error) {
	d := DefaultLimits()
	if l.CPUSeconds < 0 || l.FileSizeMB < 0 || l.MemoryMB < 0 || l.WallClock < 0 || l.Tasks < 0 || l.DiskMB < 0 {
		return l, fmt.Errorf("jail: negative limit in %+v", l)
	}
	if l.CPUSeconds == 0 {
		l.CPUSeconds = d.CPUSeconds
	}
	if l.FileSizeMB == 0 {
		l.FileSizeMB = d.FileSizeMB
	}
	if l.MemoryMB == 0 {
		l.MemoryMB = d.MemoryMB
	}
	if l.WallClock == 0 {
		l.WallClock = d.WallClock
	}
	if l.Tasks == 0 {
		l.Tasks = d.Tasks
	}
	if l.DiskMB == 0 {
		l.DiskMB = d.DiskMB
	}
	return l, nil
}

// Spec is one command to confine.
type Spec struct {
	Sandbox   string            // absolute, symlink-resolved; mounted read-write; the working directory
	Script    string            // executed as: /bin/sh -c Script
	PATH      string            // the trusted PATH for the jailed process (never inside the sandbox)
	Env       map[string]string // extra variables on top of the rebuilt allowlist; may not set PATH/HOME/TMPDIR
	Protected []string          // absolute paths inside Sandbox kept read-only in the jail; may not exist yet
	Limits    Limits
	TailBytes int // bounded tail of output returned; 0 → 64 KiB

	// OutputFile, when set, is where the step's FULL output is kept after
	// the run: an absolute path outside the sandbox, in an existing
	// directory, not a directory or symlink itself. Once the step is over
	// the output is copied beside it, checked against Result.OutputSHA256,
	// synced and renamed into place (never half-written), mode 0600. When
	// the step did not run (no-jail), no file is made.
	OutputFile string
	// Live, when set, receives the output while the step runs (copied from
	// the output file, so a slow writer never stalls the step), at most
	// LiveBytes of it; when more was written, a note saying so ends the
	// live copy. Write errors stop the live copy, not the step.
	Live io.Writer
	// LiveBytes caps what is copied to Live; 0 → DefaultLiveBytes.
	LiveBytes int64
}

// DefaultLiveBytes is the live-output cap per step when Spec.LiveBytes is 0.
const DefaultLiveBytes = 1 << 20

// Result is what a step produced. Output is a bounded tail; the hash and
// byte count cover the full output.
type Result struct {
	Backend string // "bwrap", "seatbelt" or "none"; "" when no backend was available
	// ExitCode is the command's exit code; -1 when killed or not run.
	ExitCode int
	// Killed says why the jail stopped the step: "" | "memory>2048MB" |
	// "wallclock>90s" | "cpu>60s" | "fsize>256MB" | "pids>1024" |
	// "disk>4096MB" | "no-jail" | "canceled" | "watchdog" (the step could
	// not be watched). "fsize" and "disk" are also reported when the step
	// ended by itself after hitting the cap (a program that ignores
	// SIGXFSZ, a write that pushed the disk use over the cap).
	Killed       string
	Reason       string        // human detail, e.g. why no jail is available
	Output       []byte        // bounded tail of stdout+stderr (interleaved, one file)
	OutputSHA256 string        // hex sha256 of the FULL output
	OutputBytes  int64         // size of the full output
	Duration     time.Duration // wall time of the step
	Unjailed     bool          // true only for the "none" backend
	// Tampered lists the sandbox-relative protected paths the step created,
	// changed, removed or replaced (or whose parent it replaced): every
	// .git at any depth, .github/workflows, .github/actions and
	// Spec.Protected, compared before and after the step whatever the
	// backend (the tripwire). Reason says what happened to each. Non-empty
	// means the step must not count as passing, whatever its exit code;
	// "." means the protected set could not be checked after the step.
	Tampered []string
	// MemoryGuard is what enforced MemoryMB: "cgroup" (the kernel counts
	// every page the step charges, shared memory and tmpfs included) or
	// "rss-poll" (resident memory summed over the process tree and polled;
	// see the package doc for what escapes it). "" when nothing ran.
	MemoryGuard string
	// TaskGuard is what enforced Tasks: "cgroup" (pids.max), "rlimit"
	// (RLIMIT_NPROC of the jail's own user namespace, plus polling) or
	// "poll" (tasks counted every PollInterval). "" when nothing ran.
	TaskGuard string
}

// Backend confines and runs one Spec.
type Backend interface {
	Name() string
	// Available is nil when the backend can really confine here; otherwise
	// an actionable error.
	Available() error
	// Run executes spec. The error is only for caller mistakes and
	// infrastructure faults; a refusal is a Result with Killed "no-jail".
	Run(ctx context.Context, spec Spec) (Result, error)
}

// NoJail is the fail-closed result: nothing was executed. Backend is empty
// (no backend ran); a backend that refuses fills in its own name.
func NoJail(reason string) Result {
	return Result{ExitCode: -1, Killed: KilledNoJail, Reason: reason, OutputSHA256: emptySHA256}
}

// refuse is NoJail attributed to the backend that refused.
func refuse(backend, reason string) Result {
	r := NoJail(reason)
	r.Backend = backend
	return r
}

// Options tune the backends. The zero value is what production uses.
type Options struct {
	// BwrapPath is the bubblewrap binary; empty → looked up as "bwrap" on the
	// host PATH of the calling process.
	BwrapPath string
	// SandboxExecPath is the Seatbelt launcher; empty → /usr/bin/sandbox-exec.
	SandboxExecPath string
	// RealHome is the home directory whose credential locations must stay
	// unreadable and under which PATH toolchains are looked for; empty →
	// os.UserHomeDir(). Tests point it at a fake home.
	RealHome string
	// TempRoot is the parent of the per-run private directories (TMPDIR,
	// HOME, output file); empty → os.TempDir(). Must be outside sandboxes.
	TempRoot string
	// ExtraReadOnly are more host paths exposed read-only inside the bwrap
	// jail (e.g. a RUSTUP_HOME). Must not contain the real HOME.
	ExtraReadOnly []string
	// PollInterval is how often resident memory is sampled; 0 → 100ms.
	PollInterval time.Duration
	// Cgroup chooses the memory and task guard on Linux: "" (CgroupAuto)
	// creates a cgroup per step where the caller may (as root: cgroup v2,
	// else v1), "off" (CgroupOff) never does (RSS polling: a named
	// relaxation, recorded in Result.MemoryGuard), and an absolute path
	// names a cgroup v2 directory delegated to the caller (the caller's
	// own process must already be inside it, in a leaf of its own, so the
	// kernel lets it move steps into siblings; see the package doc).
	Cgroup string
	// UnsafeAllowUnjailed lets Select hand out backend "none", which runs
	// commands gate-only, WITHOUT network, write or secret confinement.
	// Off in the zero value; the action sets it only from allow-unjailed,
	// and every entry such a backend runs is recorded "unjailed": true.
	UnsafeAllowUnjailed bool
}

func (o Options) pollInterval() time.Duration {
	if o.PollInterval > 0 {
		return o.PollInterval
	}
	return 100 * time.Millisecond
}

// ErrUnknownBackend is wrapped by Select for a name it does not know.
var ErrUnknownBackend = errors.New("jail: unknown backend")

// Select returns the backend for a name. "auto" probes the native backend
// of this OS; a named backend that is unavailable is an error, never a
// silent switch; "none" (gate-only, unjailed) is refused unless
// opts.UnsafeAllowUnjailed is set. The zero Options are the safe,
// production ones.
func Select(name string, opts Options) (Backend, error) {
	switch strings.TrimSpace(name) {
	case NameAuto, "":
		return selectAuto(opts)
	case NameBwrap:
		return availableOrError(NewBwrap(opts))
	case NameSeatbelt:
		return availableOrError(NewSeatbelt(opts))
	case NameNone:
		if !opts.UnsafeAllowUnjailed {
			return nil, errors.New(`jail: backend "none" runs commands UNJAILED (gate-only: no network, ` +
				`write or secret confinement); it needs the explicit opt-in Options.UnsafeAllowUnjailed ` +
				`(the action's allow-unjailed input), which is recorded`)
		}
		return NewUnjailed(opts), nil
	default:
		return nil, fmt.Errorf("%w %q: valid names are %q, %q, %q, %q",
			ErrUnknownBackend, name, NameAuto, NameBwrap, NameSeatbelt, NameNone)
	}
}

func selectAuto(opts Options) (Backend, error) {
	switch runtime.GOOS {
	case "linux":
		return availableOrError(NewBwrap(opts))
	case "darwin":
		return availableOrError(NewSeatbelt(opts))
	default:
		return nil, fmt.Errorf("jail: no jail backend for %s: nothing will run jailed here; "+
			"run on Linux (bubblewrap) or macOS (Seatbelt), or opt in to gate-only "+
			"execution with backend %q and Options.UnsafeAllowUnjailed", runtime.GOOS, NameNone)
	}
}

func availableOrError(b Backend) (Backend, error) {
	if err := b.Available(); err != nil {
		return nil, err
	}
	return b, nil
}

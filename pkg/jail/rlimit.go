package jail

import "fmt"

// shell is the only interpreter the jail starts; Spec.Script runs as
// `/bin/sh -c Script`.
const shell = "/bin/sh"

// startedFD is the descriptor on which the prelude reports that the jail is
// up and the limits are applied, just before it execs the script (and after
// closing it, so the script never sees it). A run whose marker file stays
// empty never reached the script: the jail could not be built, and the
// Result is a fail-closed "no-jail" rather than an exit status that would
// look like the command's.
const startedFD = 3

// cpuHardGrace is how far the hard CPU limit sits above the soft one: the
// kernel sends SIGXCPU at the soft limit and SIGKILL at the hard one, for
// programs that ignore SIGXCPU.
const cpuHardGrace = 1

// cpuBackstop is how far above Limits.CPUSeconds the soft RLIMIT_CPU sits
// where the watchdog polls CPU time itself (cpuPolled): the watchdog kills
// at the limit and names it, whatever the program does with SIGXCPU; the
// rlimit only holds if the watchdog could not look in time.
const cpuBackstop = 2

// limitedArgv returns the argv that applies the rlimits inside the jail and
// then replaces itself with `/bin/sh -c script`, so the script runs exactly
// as specified (its $0 is /bin/sh) but with the limits inherited by every
// process it starts.
func limitedArgv(l Limits, script string) []string { return preludeArgv(l, script, 0) }

// preludeArgv is limitedArgv with RLIMIT_NPROC set to nproc when nproc > 0
// (the bwrap jail without a cgroup: the count is per user namespace, so it
// caps the jail's own tasks; the kernel exempts host uid 0 from it).
//
// Why a shell prelude rather than setrlimit from Go: rlimits are per
// process, and setting them on the caller would cap the caller; prlimit(2)
// on the started child races with its first forks. The shell applies them
// before anything of the script runs.
//
// Units: `ulimit -t` is seconds (the options are dash's, bash's and zsh's
// alike except the process count); `ulimit -f` is 512-byte blocks in dash,
// in bash and zsh when run as sh (the live test pins this: a write past the
// cap is cut at exactly FileSizeMB MiB plus one block). Soft CPU is set before hard because
// a hard limit below the current soft one is rejected.
func preludeArgv(l Limits, script string, nproc int) []string {
	// One block past the cap: a file may be exactly FileSizeMB MiB, and one
	// that grows past it is the unambiguous sign of a write the cap stopped
	// (which names the kill even when the program ignores SIGXFSZ).
	blocks := int64(l.FileSizeMB)*(1<<20)/512 + 1
	soft := l.CPUSeconds
	if cpuPolled {
		soft += cpuBackstop
	}
	limits := fmt.Sprintf(`ulimit -S -t %d && ulimit -H -t %d && ulimit -f %d`, soft, soft+cpuHardGrace, blocks)
	if nproc > 0 {
		// bash and zsh spell it -u, dash -p (where bash's -p is the pipe size).
		limits += fmt.Sprintf(` && { ulimit -u %d 2>/dev/null || ulimit -p %d; }`, nproc, nproc)
	}
	prelude := fmt.Sprintf(
		`%s || `+
			`{ echo "deponent jail: cannot apply resource limits" >&2; exit 125; }; `+
			`{ printf started >&%d; } 2>/dev/null; exec %d>&-; `+
			`exec /bin/sh -c "$1"`,
		limits, startedFD, startedFD)
	return []string{shell, "-c", prelude, "deponent-jail", script}
}

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
// kernel sends SIGXCPU at the soft limit (reported as "cpu>Ns") and SIGKILL at
// the hard one, for programs that ignore SIGXCPU.
const cpuHardGrace = 1

// limitedArgv returns the argv that applies the rlimits inside the jail and
// then replaces itself with `/bin/sh -c script`, so the script runs exactly
// as specified (its $0 is /bin/sh) but with the limits inherited by every
// process it starts.
//
// Why a shell prelude rather than setrlimit from Go: rlimits are per
// process, and setting them on the caller would cap the caller; prlimit(2)
// on the started child races with its first forks. The shell applies them
// before anything of the script runs.
//
// Units: `ulimit -t` is seconds; `ulimit -f` is 512-byte blocks in dash,
// in bash and zsh when run as sh (the live test pins this: a write past the
// cap is cut at exactly FileSizeMB MiB). Soft CPU is set before hard because
// a hard limit below the current soft one is rejected.
func limitedArgv(l Limits, script string) []string {
	blocks := int64(l.FileSizeMB) * (1 << 20) / 512
	prelude := fmt.Sprintf(
		`ulimit -S -t %d && ulimit -H -t %d && ulimit -f %d || `+
			`{ echo "deponent jail: cannot apply resource limits" >&2; exit 125; }; `+
			`{ printf started >&%d; } 2>/dev/null; exec %d>&-; `+
			`exec /bin/sh -c "$1"`,
		l.CPUSeconds, l.CPUSeconds+cpuHardGrace, blocks, startedFD, startedFD)
	return []string{shell, "-c", prelude, "deponent-jail", script}
}

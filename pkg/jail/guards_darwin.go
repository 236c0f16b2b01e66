package jail

// cpuPolled: ps gives no per-process CPU time here; RLIMIT_CPU's SIGXCPU
// (and the hard limit's SIGKILL) enforce the CPU cap.
const cpuPolled = false

const clockTicks = 100

// procSample is unavailable without /proc.
func procSample(int) (uint64, int, bool) { return 0, 0, false }

// openFilesOver is unavailable without /proc.
func openFilesOver(int, int64, *int) []string { return nil }

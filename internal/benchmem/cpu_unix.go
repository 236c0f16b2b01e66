//go:build unix

package benchmem

import "syscall"

// cpuTime is the CPU time (user and system) the process has used, in
// seconds; ok=false where it cannot be read.
func cpuTime() (float64, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	sec := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return sec(ru.Utime) + sec(ru.Stime), true
}

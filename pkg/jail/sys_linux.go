package jail

import (
	"os"
	"strconv"
	"syscall"
)

// sysProcAttr puts the child in its own process group (so the group can be
// killed) and kills it if the thread that started it dies, so a crashed
// caller does not leave a jail running.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// startTimeOf reads a process's start time (clock ticks since boot).
func startTimeOf(pid int) uint64 {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	p, err := parseProcStat(data, 1)
	if err != nil {
		return 0
	}
	return p.start
}

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

// withCgroupFD makes the child start inside the cgroup open as fd
// (clone3 with CLONE_INTO_CGROUP), so not one instruction of it runs
// outside.
func withCgroupFD(a *syscall.SysProcAttr, fd int) {
	a.UseCgroupFD = true
	a.CgroupFD = fd
}

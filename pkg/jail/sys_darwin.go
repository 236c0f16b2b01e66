package jail

import "syscall"

// sysProcAttr puts the child in its own process group so the group can be
// killed. macOS has no parent-death signal.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// startTimeOf is unknown through ps: 0 disables the age guard.
func startTimeOf(int) uint64 { return 0 }

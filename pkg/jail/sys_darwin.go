package jail

import "syscall"

// sysProcAttr starts the child in a new session: it leads its own process
// group (so the group can be killed; the group id is its pid) and has no
// controlling terminal, so it cannot push input into the caller's terminal
// with TIOCSTI (the profile also denies that ioctl by number, and the
// terminal devices). Setpgid must not be set as well: setpgid after setsid
// fails for a session leader. macOS has no parent-death signal.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true}
}

// startTimeOf is unknown through ps: 0 disables the age guard.
func startTimeOf(int) uint64 { return 0 }

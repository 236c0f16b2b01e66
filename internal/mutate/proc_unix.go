//go:build unix

package main

import (
	"os/exec"
	"syscall"
)

// killGroup runs the go command in its own process group and, when the
// run is cancelled, kills the whole group: the test binaries it started
// too, not only the go command.
func killGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}

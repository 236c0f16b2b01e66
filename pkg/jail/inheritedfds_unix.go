//go:build linux || darwin

package jail

import (
	"os"
	"runtime"
	"strconv"
	"syscall"
)

// closeInheritedOnExec marks every descriptor of this process above stderr
// close-on-exec before a step or an agent starts. Go opens its own files
// close-on-exec and hands a child only what the exec.Cmd names (stdio and
// ExtraFiles, duplicated into place), but a descriptor this process itself
// inherited without the flag — a pipe or file its parent (the CI runner, a
// harness, a shell) left open — would pass through every exec into the
// jail: bwrap and the prelude do not close it, and the jailed code could
// write to it or read from it outside the sandbox. Setting the flag keeps
// the descriptor usable here and out of every child.
func closeInheritedOnExec() {
	dir := "/dev/fd"
	if runtime.GOOS == "linux" {
		dir = "/proc/self/fd"
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		// No listing: mark every descriptor number the limit allows.
		var lim syscall.Rlimit
		n := uint64(1 << 16)
		if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim) == nil && lim.Cur < n {
			n = lim.Cur
		}
		for fd := 3; uint64(fd) < n; fd++ {
			syscall.CloseOnExec(fd)
		}
		return
	}
	for _, e := range ents {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd <= 2 {
			continue
		}
		syscall.CloseOnExec(fd)
	}
}

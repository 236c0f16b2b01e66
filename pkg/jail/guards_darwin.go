package jail

import (
	"os"
	"syscall"
)

// cpuPolled: ps gives no per-process CPU time here; RLIMIT_CPU's SIGXCPU
// (and the hard limit's SIGKILL) enforce the CPU cap.
const cpuPolled = false

const clockTicks = 100

// fsUsage returns the device, used bytes and used inodes of the filesystem
// holding path (inodes 0 where the filesystem does not count them).
func fsUsage(path string) (dev uint64, used, inodes int64, err error) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, 0, 0, err
	}
	dev, _, _, _, _, _, _ = statFields(fi)
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return 0, 0, 0, err
	}
	if st.Files >= st.Ffree {
		inodes = int64(st.Files - st.Ffree)
	}
	return dev, int64(st.Blocks-st.Bfree) * int64(st.Bsize), inodes, nil
}

// procSample is unavailable without /proc.
func procSample(int) (uint64, int, bool) { return 0, 0, false }

// openFilesOver is unavailable without /proc.
func openFilesOver(int, int64, *int) []string { return nil }

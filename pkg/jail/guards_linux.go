package jail

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// cpuPolled: the watchdog reads every process's CPU time here (/proc), so
// it enforces Limits.CPUSeconds itself and names the kill whatever the
// process does with SIGXCPU; RLIMIT_CPU stays as a backstop above it.
const cpuPolled = true

// clockTicks is USER_HZ, the unit of /proc/PID/stat's CPU times (100 on
// every Linux architecture Go supports).
const clockTicks = 100

// procSample reads one process's CPU time (clock ticks) and task count.
func procSample(pid int) (cpuTicks uint64, threads int, ok bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	p, err := parseProcStat(data, 1)
	if err != nil || p.zombie {
		return 0, 0, false
	}
	return p.cpuTicks, p.threads, true
}

// openFilesOver lists the paths of regular files pid holds open for writing
// that are larger than size (past the file-size cap). budget is
// decremented per descriptor checked.
func openFilesOver(pid int, size int64, budget *int) []string {
	dir := "/proc/" + strconv.Itoa(pid) + "/fd"
	f, err := os.Open(dir)
	if err != nil {
		return nil
	}
	names, _ := f.Readdirnames(-1)
	f.Close()
	var out []string
	for _, n := range names {
		if *budget <= 0 {
			break
		}
		*budget--
		var st syscall.Stat_t
		if syscall.Stat(dir+"/"+n, &st) != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG || st.Size <= size {
			continue
		}
		if !openForWriting(pid, n) {
			continue // read-only: a file of that size the step merely reads
		}
		if target, err := os.Readlink(dir + "/" + n); err == nil {
			out = append(out, target)
		}
	}
	return out
}

// openForWriting reads the access mode of descriptor fd of pid.
func openForWriting(pid int, fd string) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/fdinfo/" + fd)
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "flags:"); ok {
			flags, err := strconv.ParseUint(strings.TrimSpace(v), 8, 64)
			return err == nil && flags&3 != 0 // O_WRONLY or O_RDWR
		}
	}
	return false
}

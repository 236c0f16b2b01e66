package jail

import (
	"os/exec"
)

// snapshotProcs reads the process table through ps(1): macOS has no /proc,
// and ps also shows the environment (-E) of this user's processes, which is
// where the run token is looked for. Each sample costs a fork+exec; the
// watchdog interval accounts for that.
func snapshotProcs(token string) (procTable, error) {
	args := []string{"-axww", "-o", "pid=,ppid=,pgid=,rss=,stat=,command="}
	if token != "" {
		args = append([]string{"-E"}, args...)
	}
	out, err := exec.Command("/bin/ps", args...).Output()
	if err != nil {
		return nil, err
	}
	return parsePS(out, token)
}

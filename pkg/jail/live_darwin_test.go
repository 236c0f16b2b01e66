package jail

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// otherProcessProbe prints another process's environment the macOS way.
func otherProcessProbe(pid int) string {
	return fmt.Sprintf(`ps -E -ww -p %d -o command= 2>&1 | tr ' ' '\n' | grep '^DEPONENT_OTHER='`, pid)
}

// processesMatching lists live processes whose command line contains marker.
func processesMatching(t testing.TB, marker string) []int {
	t.Helper()
	out, err := exec.Command("/bin/ps", "-axww", "-o", "pid=,stat=,command=").Output()
	require.NoError(t, err)
	var pids []int
	for _, l := range strings.Split(string(out), "\n") {
		f := strings.Fields(l)
		if len(f) < 2 || strings.HasPrefix(f[1], "Z") || !strings.Contains(l, marker) {
			continue
		}
		pid, err := strconv.Atoi(f[0])
		require.NoError(t, err, "ps line %q", l)
		if pid != os.Getpid() {
			pids = append(pids, pid)
		}
	}
	return pids
}

// ownProcessProbe prints OWN-PROCESS-SEEN when ps can see the step's own
// shell: the in-jail control of otherProcessProbe.
func ownProcessProbe() string {
	return `ps -ww -p $$ -o pid= | grep -q "$$" && echo OWN-PROCESS-SEEN`
}

package jail

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// otherProcessProbe prints what the step can read of another process's
// environment: /proc/PID/environ of the host, and of every process it sees.
func otherProcessProbe(pid int) string {
	return fmt.Sprintf(`cat /proc/%d/environ /proc/[0-9]*/environ 2>/dev/null | tr '\0' '\n' | grep '^DEPONENT_OTHER='`, pid)
}

// processesMatching lists live host processes whose command line contains
// marker (zombies have an empty command line).
func processesMatching(t testing.TB, marker string) []int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	require.NoError(t, err)
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmd, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && bytes.Contains(cmd, []byte(marker)) {
			pids = append(pids, pid)
		}
	}
	return pids
}

func TestLiveAbstractUnixSocket(t *testing.T) {
	f := newFixture(t)
	name := "@deponent-test-" + randHex(t)
	_, accepted := countingListener(t, "unix", name)
	probe := pyConnect("AF_UNIX", fmt.Sprintf(`"\0%s"`, strings.TrimPrefix(name, "@")))

	control := f.run(f.none, f.spec(probe))
	require.Contains(t, string(control.Output), "CONNECTED", "control: abstract sockets are reachable unjailed")
	before := accepted.Load()
	res := f.run(f.jail, f.spec(probe))
	assert.Contains(t, string(res.Output), "BLOCKED", "abstract sockets live in the network namespace")
	assert.Equal(t, before, accepted.Load())
}

func TestLiveEtcSecretsMasked(t *testing.T) {
	f := newFixture(t)
	probe := "cat /etc/shadow 2>&1 | head -c 200; echo; echo END"
	control := f.run(f.none, f.spec(probe))
	if os.Getuid() != 0 || !strings.Contains(string(control.Output), "root:") {
		t.Skipf("/etc/shadow is not readable unjailed here (uid %d): nothing to mask", os.Getuid())
	}
	res := f.run(f.jail, f.spec(probe))
	assert.NotContains(t, string(res.Output), "root:", "root in the jail still reads /etc/shadow")
	assert.Contains(t, string(res.Output), "END")
}

func TestLiveNoHostRunOrSockets(t *testing.T) {
	f := newFixture(t)
	res := f.run(f.jail, f.spec(`for d in /run /var/run /var /sys /home /srv /mnt; do [ -e "$d" ] && echo "VISIBLE $d"; done; ls /proc | grep -c '^[0-9]'; exit 0`))
	assert.NotContains(t, string(res.Output), "VISIBLE")
}

// ownProcessProbe prints OWN-PROCESS-SEEN when the step can read its own
// environment the way otherProcessProbe reads another's: the in-jail
// control of that probe.
func ownProcessProbe() string {
	return `tr '\0' '\n' < /proc/$$/environ | grep -q '^` + runTokenVar + `=' && echo OWN-PROCESS-SEEN`
}

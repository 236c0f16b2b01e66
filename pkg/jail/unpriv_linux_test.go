package jail

import (
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// nestedEnv marks the re-run below so it does not recurse.
const nestedEnv = "DEPONENT_JAIL_NESTED"

// unprivilegedUser picks the account for the re-run: $DEPONENT_JAIL_TEST_USER,
// else "tester" when it exists, else "nobody" (present on every Linux).
func unprivilegedUser() string {
	if u := os.Getenv("DEPONENT_JAIL_TEST_USER"); u != "" {
		return u
	}
	if _, err := user.Lookup("tester"); err == nil {
		return "tester"
	}
	return "nobody"
}

// TestLiveUnprivilegedUser re-runs every live test as an unprivileged user,
// the way GitHub's runners run (as `runner`): bubblewrap must then build its
// namespaces from an unprivileged user namespace.
func TestLiveUnprivilegedUser(t *testing.T) {
	if os.Getenv(nestedEnv) == "1" {
		t.Skip("already the unprivileged re-run")
	}
	if os.Getuid() != 0 {
		t.Skipf("running as uid %d already: the other live tests are the unprivileged run", os.Getuid())
	}
	liveJail(t, Options{}) // skip/fail loudly like the others when there is no jail at all
	name := unprivilegedUser()
	u, err := user.Lookup(name)
	if err != nil {
		skipOrFail(t, "no unprivileged user %q to re-run as: %v", name, err)
	}
	runuser, err := exec.LookPath("runuser")
	if err != nil {
		skipOrFail(t, "runuser (util-linux) not found: %v", err)
	}

	// The test binary sits in a root-only build directory: copy it where
	// the user can execute it.
	dir, err := os.MkdirTemp("", "deponent-jail-unpriv-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	require.NoError(t, os.Chmod(dir, 0o755))
	bin := filepath.Join(dir, "jail.test")
	copyExecutable(t, bin)

	cmd := exec.Command(runuser, "-u", name, "--", "/bin/sh", "-c", `echo "uid=$(id -u)"; exec "$0" "$@"`,
		bin, "-test.run", "^TestLive", "-test.v", "-test.count=1", "-test.timeout=10m")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + dir, "TMPDIR=/tmp", "LANG=C.UTF-8",
		requireJailEnv + "=1", nestedEnv + "=1"}
	start := time.Now()
	out, err := cmd.CombinedOutput()
	t.Logf("re-run as %s (uid %s) took %v:\n%s", name, u.Uid, time.Since(start).Round(time.Millisecond), summarize(string(out)))
	require.NoError(t, err, "the live tests fail as an unprivileged user")
	assert.Contains(t, string(out), "uid="+u.Uid+"\n")
	for _, must := range []string{"TestLiveNetworkLoopbackTCP", "TestLiveWritesConfined", "TestLiveProtectedGitHooks",
		"TestLiveMemoryBomb", "TestLiveDaemonsDoNotOutliveTheStep", "TestLiveSecretFilesInHome",
		"TestLiveHostKernelKnobsReadOnly", "TestLiveJailRootAndDevReadOnly", "TestLiveCleanupNeverFollowsSymlinks",
		"TestLiveTripwire", "TestLiveTripwireUnjailed", "TestLiveTripwireNoFalseAlarm", "TestLiveTripwireUnreadableDirectory",
		"TestLiveGitConfigCredentialsHidden", "TestLiveRunnerDirectoriesHidden", "TestLiveCargoConfigToken",
		"TestLiveMemoryOutsideTheResidentSet", "TestLiveCgroupOffIsNamed", "TestLivePidsCap", "TestLiveDiskCap",
		"TestLiveCPUKillNamedWhenSIGXCPUIgnored", "TestLiveFileSizeKillNamedWhenSIGXFSZIgnored",
		"TestLiveOutputFileAndLiveOutput", "TestLiveNoBytecodeCache",
		"TestLiveAgentJailWorkspaceReadOnlyHomeWritable", "TestLiveAgentJailNetworkAndRelaySocket", "TestLiveAgentJailTimeoutKillsTheTree",
		"TestLiveAgentJailNotRoot", "TestLiveInheritedDescriptorsStayOut", "TestLiveNoSetIDFiles",
		"TestLiveAgentJailHostAbstractSocket", "TestLiveInodeCap"} {
		assert.Contains(t, string(out), "--- PASS: "+must, "%s did not pass unprivileged", must)
	}
}

func copyExecutable(t *testing.T, dst string) {
	t.Helper()
	self, err := os.Executable()
	require.NoError(t, err)
	in, err := os.Open(self)
	require.NoError(t, err)
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	require.NoError(t, err)
	_, err = io.Copy(out, in)
	require.NoError(t, err)
	require.NoError(t, out.Close())
}

// summarize keeps the verdict lines of a verbose test run.
func summarize(out string) string {
	var keep []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "--- ") || strings.HasPrefix(l, "uid=") || strings.HasPrefix(l, "ok") ||
			strings.HasPrefix(l, "FAIL") || strings.HasPrefix(l, "PASS") || strings.Contains(l, "Error") ||
			strings.Contains(l, "SKIP") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

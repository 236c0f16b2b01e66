package livetest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// selfTestEnv selects the role of this test binary: unset, the tests run
// the binary again as a subprocess that calls Skip with this variable as
// its REQUIRE variable ("0": skip, "1": fail). So the tests themselves
// never skip.
const selfTestEnv = "DEPONENT_LIVETEST_SELFTEST"

func TestHelperProcess(t *testing.T) {
	v := os.Getenv(selfTestEnv)
	if v == "" {
		return // not the subprocess
	}
	t.Run("needs-the-thing", func(t *testing.T) {
		Skip(t, selfTestEnv, "the thing is not installed")
		t.Error("not reached: Skip stops the test")
	})
	os.Stdout.WriteString(Banner("pkg/x"))
}

func runHelper(t *testing.T, mode string) (out, dir string, err error) {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe, "-test.run", "^TestHelperProcess$", "-test.v")
	cmd.Dir = t.TempDir() // the package directory of a real run: where the marker goes
	cmd.Env = append(os.Environ(), selfTestEnv+"="+mode)
	b, err := cmd.CombinedOutput()
	return string(b), cmd.Dir, err
}

// TestSkipIsCountedAndReported: a skip is a skip, counted and named in
// the banner with its reason, and it touches the marker that keeps the run
// out of go test's cache.
func TestSkipIsCountedAndReported(t *testing.T) {
	out, dir, err := runHelper(t, "0")
	require.NoError(t, err, out)
	assert.FileExists(t, filepath.Join(dir, MarkerFile), "the marker that keeps the run out of the test cache")
	assert.Contains(t, out, "--- SKIP: TestHelperProcess/needs-the-thing")
	assert.Contains(t, out, "SKIPPED (live test; set "+selfTestEnv+"=1 to make this a failure): the thing is not installed")
	assert.Contains(t, out, "pkg/x: 1 LIVE TEST(S) SKIPPED")
	assert.Contains(t, out, "1 × the thing is not installed")
	assert.Contains(t, out, "(TestHelperProcess/needs-the-thing)")
	assert.Contains(t, out, RequireJailEnv+"=1")
}

// TestSkipFailsWhenRequired: with the REQUIRE variable set to 1 the same
// call is a failure.
func TestSkipFailsWhenRequired(t *testing.T) {
	out, _, err := runHelper(t, "1")
	require.Error(t, err, "the subprocess must fail:\n%s", out)
	assert.Contains(t, out, "REQUIRED BY "+selfTestEnv+"=1, BUT NOT AVAILABLE: the thing is not installed")
	assert.Contains(t, out, "--- FAIL: TestHelperProcess/needs-the-thing")
}

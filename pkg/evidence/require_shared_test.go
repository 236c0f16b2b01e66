package evidence

import (
	"fmt"
	"os"
	"testing"
)

// requireSharedEnv makes a missing ../shared (the reference material
// beside the repository: interop vectors, the red-team sample) a test
// failure instead of a skip. .ci/run sets it: CI has the directory, so a
// test that skipped there would be a check that silently stopped running.
const requireSharedEnv = "DEPONENT_REQUIRE_SHARED"

// skipWithoutShared skips loudly, or fails under DEPONENT_REQUIRE_SHARED=1.
func skipWithoutShared(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv(requireSharedEnv) == "1" {
		t.Fatalf("%s=1 but the shared reference material is missing: %s", requireSharedEnv, msg)
	}
	t.Skipf("SKIPPING (set %s=1 to make this a failure): %s", requireSharedEnv, msg)
}

package evidence

import (
	"fmt"
	"testing"

	"github.com/deponent-dev/deponent-action/internal/livetest"
)

// requireSharedEnv makes a missing ../shared (the reference material
// beside the repository: interop vectors, the red-team sample) a test
// failure instead of a skip. .ci/run sets it: CI has the directory, so a
// test that skipped there would be a check that silently stopped running.
const requireSharedEnv = "DEPONENT_REQUIRE_SHARED"

// skipWithoutShared skips loudly (counted in livetest's banner), or fails
// under DEPONENT_REQUIRE_SHARED=1.
func skipWithoutShared(t testing.TB, format string, args ...any) {
	t.Helper()
	livetest.Skip(t, requireSharedEnv, fmt.Sprintf(format, args...))
}

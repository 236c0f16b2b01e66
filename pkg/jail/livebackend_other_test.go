//go:build !linux && !darwin

package jail

import (
	"runtime"
	"testing"
)

// liveJail: no jail backend exists on this OS.
func liveJail(t testing.TB, _ Options) Backend {
	t.Helper()
	skipOrFail(t, "no jail backend for %s", runtime.GOOS)
	return nil
}

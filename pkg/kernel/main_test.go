package kernel

import (
	"os"
	"testing"

	"github.com/deponent-dev/deponent-action/internal/livetest"
)

// TestMain reports the live tests that could not run here (see
// internal/livetest): without a sandbox they skip, loudly.
func TestMain(m *testing.M) { os.Exit(livetest.Main(m, "pkg/kernel")) }

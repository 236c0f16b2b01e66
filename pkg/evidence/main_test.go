package evidence

import (
	"os"
	"testing"
)

// TestMain removes the benchmark ledger (half a gigabyte) when the run ends.
func TestMain(m *testing.M) {
	code := m.Run()
	if benchLedgerDir != "" {
		os.RemoveAll(benchLedgerDir)
	}
	os.Exit(code)
}

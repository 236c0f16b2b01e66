package action

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/deponent-dev/deponent-action/pkg/evidence"
)

// TestDefaultExitCode: 0 only for GOVERNED_PASS with a receipt on disk. A
// pass without a receipt is not a pass: nothing anyone can recompute
// testifies to it. (conclude already turns a failed persist into
// GOVERNED_FAIL; this holds the exit status to the rule on its own, so the
// two cannot drift apart unnoticed.)
func TestDefaultExitCode(t *testing.T) {
	withReceipt := "/r/deponent/20260101T000000Z_s.json"
	assert.Equal(t, 0, DefaultExitCode(&Result{Outcome: evidence.OutcomePass, ReceiptPath: withReceipt}), "control: a pass with its receipt")
	assert.Equal(t, 1, DefaultExitCode(&Result{Outcome: evidence.OutcomePass}), "a pass without a receipt")
	for _, o := range []evidence.Outcome{evidence.OutcomeUnverified, evidence.OutcomeFail, evidence.OutcomeDryRun, "", "GOVERNED_PASS "} {
		assert.Equal(t, 1, DefaultExitCode(&Result{Outcome: o, ReceiptPath: withReceipt}), "outcome %q", o)
	}
	assert.Equal(t, 1, DefaultExitCode(nil), "no result at all")
}

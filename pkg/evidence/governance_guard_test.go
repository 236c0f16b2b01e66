package evidence

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/deponent-dev/deponent-action/pkg/canon"
)

// TestAssessNoJailEitherSign: an action refused for want of a jail fails
// the run whichever way the entry says so — its blast class alone, or its
// "killed" field alone (TestAssessRules has an entry with both) — so a
// rule that wanted both signs would be caught.
func TestAssessNoJailEitherSign(t *testing.T) {
	cases := map[string]Record{
		"class no-jail only":  with(step("builder", ToolRunCmd, VerdictBlock), class(ClassNoJail)),
		"killed no-jail only": ran("builder", -1, canon.M(FieldKilled, canon.Str(KilledNoJail))),
	}
	for name, r := range cases {
		rs, g := goodRun()
		g.OnBlockContinue = true // so a BLOCK is not failing the run for another reason
		a := Assess(chain(t, beforeVerify(rs, r)...), g)
		assert.Equal(t, OutcomeFail, a.Outcome, name)
		assert.Equal(t, int64(1), a.NoJail, name)
		assert.True(t, strings.Contains(strings.Join(a.Reasons, "\n"), "refused for want of a jail"), "%s: %q", name, a.Reasons)
		assert.Len(t, a.Reasons, 1, "%s: the no-jail rule alone fails it: %q", name, a.Reasons)
	}
	// Control: the same run with the step recorded as an ordinary failure
	// passes (a failed step is testimony, not a verdict).
	rs, g := goodRun()
	g.OnBlockContinue = true
	a := Assess(chain(t, beforeVerify(rs, ran("builder", 1))...), g)
	assert.Equal(t, OutcomePass, a.Outcome, a.Reasons)
}

//go:build linux || darwin

package jail

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLauncherRefusalIsNoJail: a backend whose launcher cannot express a
// step (the Seatbelt profile cannot carry a path) refuses it: a no-jail
// Result attributed to the backend, nothing run, no error — so the Cell
// records a refusal that fails the run, not a step that merely errored.
// The control: any other launcher error is still an error for the caller.
func TestLauncherRefusalIsNoJail(t *testing.T) {
	spec := Spec{Sandbox: resolvedTempDir(t), Script: "echo ran", PATH: "/usr/bin:/bin", Limits: Limits{WallClock: 30 * time.Second}}
	p, err := prepare(spec, Options{RealHome: resolvedTempDir(t)})
	require.NoError(t, err)
	ran := false
	res, err := execute(context.Background(), p, Options{}, func(*runDir) (launch, error) {
		ran = true
		return launch{backend: NameSeatbelt}, &refusal{"the profile cannot carry this path"}
	})
	require.NoError(t, err)
	assert.True(t, ran)
	assert.Equal(t, KilledNoJail, res.Killed)
	assert.Equal(t, -1, res.ExitCode)
	assert.Equal(t, NameSeatbelt, res.Backend)
	assert.Contains(t, res.Reason, "cannot carry this path")
	assert.Empty(t, res.Output, "nothing ran")

	_, err = execute(context.Background(), p, Options{}, func(*runDir) (launch, error) {
		return launch{}, errors.New("disk on fire")
	})
	assert.ErrorContains(t, err, "disk on fire", "control: a fault stays an error")
}

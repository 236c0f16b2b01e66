package jail

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLiveAgentJailFailsClosed: a Seatbelt that cannot apply the profile
// runs nothing.
func TestLiveAgentJailFailsClosed(t *testing.T) {
	f := newAgentFixture(t)
	fake := filepath.Join(f.outside, "sandbox-exec")
	writeFile(t, fake, "#!/bin/sh\necho 'sandbox-exec: invalid profile' >&2\nexit 65\n", 0o755)
	j := NewAgentSeatbelt(Options{SandboxExecPath: fake})
	assert.Error(t, j.Available())
	spec := AgentSpec{Workspace: f.ws, Home: f.home, TmpDir: f.tmp, Argv: []string{shell, "-c", "touch " + f.home + "/ran"}, Env: []string{"PATH=/usr/bin:/bin"}}
	res, err := j.Run(context.Background(), spec)
	require.NoError(t, err)
	assert.Equal(t, KilledNoJail, res.Killed)
	assert.NoFileExists(t, filepath.Join(f.home, "ran"))
	_, err = SelectAgentJail(NameSeatbelt, Options{SandboxExecPath: fake})
	assert.Error(t, err, "a named agent jail that is unavailable is an error")
}

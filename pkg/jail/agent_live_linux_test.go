package jail

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLiveAgentJailFailsClosed: a jail that cannot be built runs nothing.
func TestLiveAgentJailFailsClosed(t *testing.T) {
	f := newAgentFixture(t)
	fake := filepath.Join(f.outside, "bwrap")
	writeFile(t, fake, "#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n", 0o755)
	opts := Options{BwrapPath: fake}
	f.assertFailsClosed(t, NewAgentBwrap(opts), opts)
}

// TestLiveAgentJailNotRoot: a root runner's agent is uid 65534 inside.
func TestLiveAgentJailNotRoot(t *testing.T) {
	f := newAgentFixture(t)
	if os.Geteuid() != 0 {
		// An unprivileged runner keeps its uid (TestAgentBwrapArgs pins
		// that no --uid is passed).
		res, out := f.sh(t, f.jail, "id -u", nil)
		require.Equal(t, 0, res.ExitCode, out)
		assert.Equal(t, strconv.Itoa(os.Geteuid()), strings.TrimSpace(out))
		return
	}
	res, out := f.sh(t, f.jail, "id -u", nil)
	require.Equal(t, 0, res.ExitCode)
	assert.Equal(t, "65534", strings.TrimSpace(out))
	_, ctl := f.sh(t, f.none, "id -u", nil)
	assert.Equal(t, "0", strings.TrimSpace(ctl), "control: unjailed it is root")
}

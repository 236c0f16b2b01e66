package jail

import (
	"path/filepath"
	"testing"
)

// TestLiveAgentJailFailsClosed: a Seatbelt that cannot apply the profile
// runs nothing.
func TestLiveAgentJailFailsClosed(t *testing.T) {
	f := newAgentFixture(t)
	fake := filepath.Join(f.outside, "sandbox-exec")
	writeFile(t, fake, "#!/bin/sh\necho 'sandbox-exec: invalid profile' >&2\nexit 65\n", 0o755)
	opts := Options{SandboxExecPath: fake}
	f.assertFailsClosed(t, NewAgentSeatbelt(opts), opts)
}

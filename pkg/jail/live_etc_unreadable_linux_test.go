package jail

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLiveRootOnlyEtcFilesHidden: a root runner's jailed uid maps to host
// uid 0, the owner of /etc's root-only files, so beyond the listed secrets
// a step read any of them: a database's maintenance password, a VPN or
// WireGuard key, a cluster's admin kubeconfig. The jail hides every file
// and directory under /etc that other users may not read. The probe plants
// one of each (and a world-readable file beside them, which stays
// readable) and reads them through the step jail and the agent jail; root
// unjailed reading them is the control. Root only: for an unprivileged
// runner the jailed uid is the runner's, which the kernel keeps out itself.
func TestLiveRootOnlyEtcFilesHidden(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skipf("uid %d: root-only files are unreadable to the runner itself; the root run covers this", os.Getuid())
	}
	f := newFixture(t)
	tag := "deponent-test-" + randHex(t)
	dir := filepath.Join("/etc", tag+".d")
	file := filepath.Join("/etc", tag+".conf")
	pub := filepath.Join("/etc", tag+"-public.conf")
	t.Cleanup(func() { os.RemoveAll(dir); os.Remove(file); os.Remove(pub) })
	require.NoError(t, os.Mkdir(dir, 0o700))
	secretInDir, secretFile, public := "DIR-SECRET-"+randHex(t), "FILE-SECRET-"+randHex(t), "PUBLIC-"+randHex(t)
	writeFile(t, filepath.Join(dir, "wg0.conf"), secretInDir, 0o644) // readable itself, but in a root-only directory
	writeFile(t, file, secretFile, 0o600)
	writeFile(t, pub, public, 0o644)
	probe := "cat " + shq(filepath.Join(dir, "wg0.conf")) + " " + shq(file) + " " + shq(pub) + " 2>&1; exit 0"

	control := f.run(f.none, f.spec(probe))
	for _, v := range []string{secretInDir, secretFile, public} {
		require.Contains(t, string(control.Output), v, "control: root unjailed reads it")
	}
	res := f.run(f.jail, f.spec(probe))
	out := string(res.Output)
	assert.NotContains(t, out, secretInDir, "a file in a root-only /etc directory")
	assert.NotContains(t, out, secretFile, "a root-only /etc file")
	assert.Contains(t, out, public, "a world-readable /etc file stays readable")

	a := newAgentFixture(t)
	_, aout := a.sh(t, a.jail, probe, nil)
	assert.NotContains(t, aout, secretInDir, "agent jail: a file in a root-only /etc directory")
	assert.NotContains(t, aout, secretFile, "agent jail: a root-only /etc file")
	assert.Contains(t, aout, public, "agent jail: a world-readable /etc file stays readable")
}

//go:build linux || darwin

package jail

import (
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// inheritedFD opens path as this process's parent would leave a descriptor
// to it: without close-on-exec.
func inheritedFD(t *testing.T, path string, flags int) int {
	t.Helper()
	fd, err := syscall.Open(path, flags|syscall.O_CREAT, 0o600)
	require.NoError(t, err)
	_, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_SETFD, 0)
	require.Zero(t, errno)
	t.Cleanup(func() { syscall.Close(fd) })
	return fd
}

// TestLiveInheritedDescriptorsStayOut: a descriptor the caller inherited
// without close-on-exec (a CI runner's or harness's pipe, a log file, a
// secret someone opened) passes through every exec. Jailed code must not
// get it: through it a step writes outside the sandbox, or reads what the
// jail hides, whatever the mounts. The positive control runs the same
// probe by a plain exec, which inherits both descriptors: it writes the
// outside file and reads the secret. Then the step jail, the "none"
// backend and the agent jail (and its unjailed opt-out) run the probe:
// no descriptor, nothing written, nothing read.
func TestLiveInheritedDescriptorsStayOut(t *testing.T) {
	f := newFixture(t)
	target := filepath.Join(f.outside, "log")
	secret := filepath.Join(f.outside, "secret")
	writeFile(t, secret, "SECRET-"+randHex(t)+"\n", 0o600)
	wfd := inheritedFD(t, target, syscall.O_WRONLY|syscall.O_APPEND)
	rfd := inheritedFD(t, secret, syscall.O_RDONLY)
	probe := func(who string) string {
		return `python3 -c "
import os
try:
    os.write(` + strconv.Itoa(wfd) + `, b'WRITTEN-BY-` + who + `\n'); print('WROTE')
except OSError as e:
    print('NO-WRITE', e.strerror)
try:
    print('READ', os.pread(` + strconv.Itoa(rfd) + `, 100, 0))
except OSError as e:
    print('NO-READ', e.strerror)
"`
	}

	out := plainExec(t, f.sandbox, probe("control"), append(os.Environ(), "PATH="+f.path))
	require.Contains(t, out, "WROTE", "control: a plain exec inherits the descriptor")
	require.Contains(t, out, "READ b'SECRET-", "control: and reads the secret through the other")
	require.Contains(t, readText(t, target), "WRITTEN-BY-control")

	for _, b := range []Backend{f.jail, f.none} {
		res := f.run(b, f.spec(probe(b.Name())))
		assert.Equal(t, 0, res.ExitCode, b.Name())
		assert.Contains(t, string(res.Output), "NO-WRITE", b.Name())
		assert.Contains(t, string(res.Output), "NO-READ", b.Name())
		assert.NotContains(t, string(res.Output), "SECRET-", b.Name())
		assert.NotContains(t, readText(t, target), "WRITTEN-BY-"+b.Name(), b.Name())
	}

	// The agent jail and its unjailed opt-out start the agent the same way.
	a := newAgentFixture(t)
	for _, j := range []AgentJail{a.jail, a.none} {
		mustMkdir(t, a.ws)
		res, out := a.sh(t, j, probe("agent-"+j.Name()), nil, f.outside)
		assert.Equal(t, 0, res.ExitCode, out)
		assert.Contains(t, out, "NO-WRITE", j.Name())
		assert.Contains(t, out, "NO-READ", j.Name())
		assert.NotContains(t, out, "SECRET-", j.Name())
		assert.NotContains(t, readText(t, target), "WRITTEN-BY-agent-"+j.Name(), j.Name())
	}
}

package jail

import (
	"net"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLiveAgentJailHostAbstractSocket: the agent jail shares the host's
// network namespace (the model API), and abstract Unix sockets live in the
// network namespace with no file to hide. A host service listening on one
// is the probe; the unjailed opt-out reaching it is the positive control.
// Where the kernel has Landlock scopes (ABI 6, Linux 6.12) the jailed agent
// is refused, while an abstract socket of its own still works; elsewhere
// the result names the gap (the package doc lists it as not covered).
func TestLiveAgentJailHostAbstractSocket(t *testing.T) {
	f := newAgentFixture(t)
	name := "deponent-agent-probe-" + randHex(t)
	ln, err := net.Listen("unix", "@"+name)
	require.NoError(t, err)
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("HOST-SERVICE-REACHED\n"))
			c.Close()
		}
	}()
	probe := `python3 -c "
import socket
s = socket.socket(socket.AF_UNIX)
try:
    s.connect('\0` + name + `'); print('HOST', s.recv(100))
except OSError as e:
    print('REFUSED', e.strerror)
own = socket.socket(socket.AF_UNIX); own.bind('\0` + name + `-own'); own.listen(1)
c = socket.socket(socket.AF_UNIX); c.connect('\0` + name + `-own'); print('OWN-OK')
"`
	_, out := f.sh(t, f.none, probe, nil)
	require.Contains(t, out, "HOST b'HOST-SERVICE-REACHED", "control: unjailed, the agent reaches the host's abstract socket")

	res, out := f.sh(t, f.jail, probe, nil)
	require.Equal(t, 0, res.ExitCode, out)
	assert.Contains(t, out, "OWN-OK", "the agent's own abstract sockets work")
	if abi := landlockABI(); abi < landlockScopesABI {
		assert.Contains(t, res.Reason, "host abstract Unix sockets are reachable", "the gap is named")
		t.Skipf("Landlock ABI %d has no scopes: the host's abstract sockets stay reachable (not covered, named in the result)", abi)
	}
	assert.Contains(t, out, "REFUSED Operation not permitted", out)
	assert.NotContains(t, out, "HOST-SERVICE-REACHED")
}

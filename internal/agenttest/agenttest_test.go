package agenttest

import (
	"os/exec"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLeftoversFindsTheRunsProcesses(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("SKIPPED LOUDLY: Leftovers reads /proc")
	}
	token := Token()
	assert.Len(t, token, 24)
	assert.NotEqual(t, token, Token())
	cmd := exec.Command("sleep", "600")
	cmd.Env = []string{"A=1", TokenEnv + "=" + token, "B=2"}
	require.NoError(t, cmd.Start())
	assert.Equal(t, []int{cmd.Process.Pid}, Leftovers(token))
	assert.Empty(t, Leftovers(Token()), "another run's token finds nothing")
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	assert.Empty(t, Leftovers(token))
}

// Test support: no binary may link it.
func TestNotLinkedIntoBinaries(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "../../cmd/...").CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "github.com/deponent-dev/deponent-action/pkg/", "the listing names the module's packages")
	assert.NotContains(t, string(out), "internal/agenttest")
}

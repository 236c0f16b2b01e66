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

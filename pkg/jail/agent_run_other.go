//go:build !linux && !darwin

package jail

import (
	"context"
	"runtime"
)

// runAgent fails closed: this OS has no process-tree sweep.
func runAgent(_ context.Context, backend string, _, _ []string, _ AgentSpec, _ string, _ bool) (AgentResult, error) {
	return AgentResult{Backend: backend, ExitCode: -1, Killed: KilledNoJail, Reason: "jail: no agent runner for " + runtime.GOOS}, nil
}

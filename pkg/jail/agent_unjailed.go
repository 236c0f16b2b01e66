package jail

import (
	"context"
	"os"
)

// AgentUnjailed runs the agent process WITHOUT an agent jail: the
// environment is still exactly AgentSpec.Env, HOME and TMPDIR the private
// directories, the working directory the workspace, and the timeout, the
// process group kill and the sweep still apply; but the workspace is
// writable, the whole filesystem readable, and the host's sockets
// reachable. The action uses it only on the explicit opt-out
// allow-unjailed-agent, and records it.
type AgentUnjailed struct {
	opts Options
}

// NewUnjailedAgent returns the unjailed agent runner (explicit opt-out).
func NewUnjailedAgent(opts Options) *AgentUnjailed { return &AgentUnjailed{opts: opts} }

// Name is "none".
func (u *AgentUnjailed) Name() string { return NameNone }

// Available is always nil: nothing is confined.
func (u *AgentUnjailed) Available() error { return nil }

// Run starts the agent unconfined.
func (u *AgentUnjailed) Run(ctx context.Context, spec AgentSpec) (AgentResult, error) {
	if err := checkAgentSpec(spec, u.opts); err != nil {
		return AgentResult{}, err
	}
	dir, err := os.MkdirTemp(tempRoot(u.opts), "deponent-agent-")
	if err != nil {
		return AgentResult{}, err
	}
	defer os.RemoveAll(dir)
	return runAgent(ctx, NameNone, agentWrapper(spec.Argv), spec.Env, spec, dir, false)
}

//go:build linux || darwin

package jail

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// agentPoll is how often the agent's process tree is sampled, so that a
// process that leaves the tree (double fork, setsid) is still known when
// the sweep runs.
const agentPoll = 250 * time.Millisecond

// runAgent starts argv (the launcher's full command line, ending with the
// agentWrapper) with exactly env plus the run token, in its own process
// group, and waits for it; the timeout and ctx kill the whole tree. Every
// process of the run is gone when it returns. started is the marker file
// the wrapper writes on descriptor startedFD.
//
// scoped starts the agent inside a Landlock scope where the kernel has one
// (startScoped): the bwrap agent jail shares the host's network namespace.
func runAgent(ctx context.Context, backend string, argv, env []string, spec AgentSpec, markerDir string, scoped bool) (AgentResult, error) {
	started := time.Now()
	res := AgentResult{Backend: backend, ExitCode: -1}
	if err := ctx.Err(); err != nil {
		res.Killed, res.Reason = killedBy(ctx), "the caller's context ended before the agent started"
		return res, nil
	}
	markerPath := filepath.Join(markerDir, "agent-started")
	marker, err := os.OpenFile(markerPath, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return res, fmt.Errorf("jail: agent started marker: %w", err)
	}
	token := newToken()
	cmd := &exec.Cmd{
		Path:        argv[0],
		Args:        argv,
		Dir:         spec.Workspace,
		Env:         append(append([]string(nil), env...), runTokenVar+"="+token),
		Stdout:      spec.Stdout,
		Stderr:      spec.Stderr,
		ExtraFiles:  []*os.File{marker},
		SysProcAttr: sysProcAttr(),
		// Output is copied through pipes when the writers are not files:
		// once the agent is gone, a descendant that kept them open must not
		// hold Wait forever (the sweep kills it anyway).
		WaitDelay: 5 * time.Second,
	}
	closeInheritedOnExec()
	var scopeNote string
	if scoped {
		var release func()
		scopeNote, release, err = startScoped(cmd)
		defer release() // after the wait: the starting thread outlives the agent
	} else {
		err = cmd.Start()
	}
	marker.Close()
	if err != nil {
		return res, fmt.Errorf("jail: start %s: %w", argv[0], err)
	}
	pid := cmd.Process.Pid
	tr := newTracker(pid, pid)
	tr.minStart = startTimeOf(pid)

	stop := make(chan struct{})
	done := make(chan struct{})
	var killed, reason string
	go func() {
		defer close(done)
		var timeout <-chan time.Time
		if spec.Timeout > 0 {
			t := time.NewTimer(spec.Timeout)
			defer t.Stop()
			timeout = t.C
		}
		tick := time.NewTicker(agentPoll)
		defer tick.Stop()
		kill := func() {
			_ = cmd.Process.Kill()
			_ = syscall.Kill(-pid, syscall.SIGKILL)
			if tab, err := snapshotProcs(token); err == nil {
				for _, m := range tr.members(tab) {
					_ = syscall.Kill(m.pid, syscall.SIGKILL)
				}
			}
		}
		for {
			select {
			case <-stop:
				return
			case <-timeout:
				killed, reason = KilledAgentTimeout, fmt.Sprintf("the agent ran longer than its timeout (%s): it and every process it started were killed", spec.Timeout)
				kill()
				return
			case <-ctx.Done():
				killed, reason = killedBy(ctx), "the harness stopped the agent: "+context.Cause(ctx).Error()
				kill()
				return
			case <-tick.C:
				if tab, err := snapshotProcs(token); err == nil {
					tr.members(tab) // remember the tree
				}
			}
		}
	}()
	waitErr := cmd.Wait()
	close(stop)
	<-done
	tr.root = 0
	left, sweepErr := sweep(tr, token)
	res.Duration = time.Since(started)
	res.ExitCode, res.Killed, res.Reason = -1, killed, reason
	if killed == "" {
		res.ExitCode = cmd.ProcessState.ExitCode()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			res.ExitCode = 128 + int(ws.Signal())
			res.Reason = "the agent was terminated by signal " + ws.Signal().String()
		}
		if waitErr != nil && !errors.As(waitErr, new(*exec.ExitError)) {
			res.Reason = joinReason(res.Reason, "wait: "+waitErr.Error())
		}
		if data, _ := os.ReadFile(markerPath); string(data) != "started" {
			// Fail closed: the jail was not built, the agent never ran; the
			// exit status is the launcher's.
			res.Reason = joinReason(fmt.Sprintf("%s could not set up the agent jail (exit status %d)", backend, res.ExitCode), res.Reason)
			res.ExitCode, res.Killed = -1, KilledNoJail
		}
	}
	if scopeNote != "" {
		res.Reason = joinReason(res.Reason, scopeNote)
	}
	if len(left) > 0 || sweepErr != nil {
		return res, fmt.Errorf("jail: processes of the agent survived: %v %v", left, sweepErr)
	}
	return res, nil
}

// killedBy names why ctx ended: an AgentKill cause as it says, else
// "canceled".
func killedBy(ctx context.Context) string {
	var k AgentKill
	if errors.As(context.Cause(ctx), &k) {
		return string(k)
	}
	return KilledCanceled
}

// envValue reads KEY from a KEY=VALUE list.
func envValue(env []string, key string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, key+"="); ok {
			return v
		}
	}
	return ""
}

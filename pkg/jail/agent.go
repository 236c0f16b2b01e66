package jail

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// The agent jail confines a live agent's own process (Claude Code, Codex,
// a custom agent-command) — not its tool calls, which go through Deponent's
// governed tools and the tools' jail (Backend). Its contract is in the
// package doc ("The agent jail").

// Killed values of an AgentResult.
const (
	// KilledAgentTimeout: the agent ran past its timeout (agent-timeout).
	KilledAgentTimeout = "agent-timeout"
)

// AgentKill is a context cancellation cause (context.WithCancelCause) that
// names why the caller stopped the agent; it becomes AgentResult.Killed
// (e.g. "tool-call-limit"). Any other cause is reported as "canceled".
type AgentKill string

func (k AgentKill) Error() string { return "agent stopped: " + string(k) }

// AgentSpec is one agent process to confine.
type AgentSpec struct {
	// Workspace is the repository: absolute, symlink-resolved, an existing
	// directory; read-only in the jail and the working directory.
	Workspace string
	// Argv is the agent's command; Argv[0] is absolute.
	Argv []string
	// Env is the agent's complete environment (KEY=VALUE): nothing of the
	// caller's environment is added, except the sweep's run token
	// (DEPONENT_JAIL_RUN, not a secret).
	Env []string
	// Home and TmpDir are the agent's private, writable directories:
	// absolute, existing, outside the workspace.
	Home, TmpDir string
	// ReadOnly are more host paths the agent needs, exposed read-only: its
	// CLI's install prefix, node's, the relay binary, its configuration's
	// directory, the relay socket's directory. Absolute, existing; none
	// may contain the real HOME (which stays hidden) or be "/".
	ReadOnly []string
	// Stdout and Stderr receive the agent's output (nil discards it).
	Stdout, Stderr io.Writer
	// Timeout kills the agent and every process it started (0: none).
	Timeout time.Duration
}

// AgentResult is how an agent process ended.
type AgentResult struct {
	Backend  string // "bwrap", "seatbelt", or "none" (unjailed, by opt-out)
	ExitCode int    // -1 when killed or not started
	// Killed is "" | KilledAgentTimeout | an AgentKill's text | "canceled"
	// | KilledNoJail (the jail could not be built: the agent never ran).
	Killed   string
	Reason   string
	Duration time.Duration
}

// AgentJail confines agent processes.
type AgentJail interface {
	Name() string
	// Available is nil when the jail can really confine an agent here.
	Available() error
	// Run starts the agent, waits for it (and kills it at the timeout or
	// when ctx ends) and returns how it ended, after every process it
	// started is gone. An error is a caller mistake or an infrastructure
	// fault; a jail that cannot be built is a Result with Killed
	// "no-jail".
	Run(ctx context.Context, spec AgentSpec) (AgentResult, error)
}

// SelectAgentJail returns the agent jail of this OS: bubblewrap on Linux,
// Seatbelt on macOS; "auto" picks it, a named one that is not available is
// an error, never a switch. There is no unjailed choice here: the caller
// asks for NewUnjailedAgent only on the explicit opt-out
// (allow-unjailed-agent), and records it.
func SelectAgentJail(name string, opts Options) (AgentJail, error) {
	var j AgentJail
	switch strings.TrimSpace(name) {
	case NameAuto, "":
		switch runtime.GOOS {
		case "linux":
			j = NewAgentBwrap(opts)
		case "darwin":
			j = NewAgentSeatbelt(opts)
		default:
			return nil, fmt.Errorf("jail: no agent jail for %s: run on Linux (bubblewrap) or macOS (Seatbelt)", runtime.GOOS)
		}
	case NameBwrap:
		j = NewAgentBwrap(opts)
	case NameSeatbelt:
		j = NewAgentSeatbelt(opts)
	default:
		return nil, fmt.Errorf("%w %q for the agent jail: valid names are %q, %q, %q", ErrUnknownBackend, name, NameAuto, NameBwrap, NameSeatbelt)
	}
	if err := j.Available(); err != nil {
		return nil, err
	}
	return j, nil
}

// checkAgentSpec refuses a spec the agent jail cannot honour.
func checkAgentSpec(s AgentSpec, opts Options) error {
	var errs []error
	abs := func(what, p string) {
		if p == "" || !filepath.IsAbs(p) || filepath.Clean(p) != p || strings.ContainsRune(p, 0) {
			errs = append(errs, fmt.Errorf("jail: agent %s %q must be an absolute, clean path", what, p))
		}
	}
	abs("workspace", s.Workspace)
	abs("HOME", s.Home)
	abs("TMPDIR", s.TmpDir)
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	if r, err := filepath.EvalSymlinks(s.Workspace); err != nil || r != s.Workspace {
		return fmt.Errorf("jail: agent workspace %q must exist and be symlink-resolved", s.Workspace)
	}
	if fi, err := os.Stat(s.Workspace); err != nil || !fi.IsDir() {
		return fmt.Errorf("jail: agent workspace %q is not a directory", s.Workspace)
	}
	home := realHome(opts)
	for _, d := range []struct{ what, p string }{{"HOME", s.Home}, {"TMPDIR", s.TmpDir}} {
		fi, err := os.Stat(d.p)
		if err != nil || !fi.IsDir() {
			return fmt.Errorf("jail: agent %s %q must be an existing directory", d.what, d.p)
		}
		if within(d.p, s.Workspace) || within(s.Workspace, d.p) {
			return fmt.Errorf("jail: agent %s %q overlaps the workspace %q, which the agent may not write", d.what, d.p, s.Workspace)
		}
		if home != "" && within(home, d.p) {
			return fmt.Errorf("jail: agent %s %q contains the real home %q", d.what, d.p, home)
		}
	}
	if len(s.Argv) == 0 || !filepath.IsAbs(s.Argv[0]) {
		return errors.New("jail: the agent's argv[0] must be an absolute path")
	}
	for _, a := range s.Argv {
		if strings.ContainsRune(a, 0) {
			return errors.New("jail: an agent argument holds a NUL byte")
		}
	}
	for _, kv := range s.Env {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || k == "" || strings.ContainsRune(kv, 0) {
			return fmt.Errorf("jail: agent environment entry %q is not KEY=VALUE", kv)
		}
		if k == runTokenVar {
			return fmt.Errorf("jail: the agent environment may not set %s", runTokenVar)
		}
	}
	for _, p := range s.ReadOnly {
		abs("read-only path", p)
		if p == "/" {
			errs = append(errs, errors.New("jail: the agent may not be given the whole filesystem"))
		}
		if home != "" && within(home, p) {
			errs = append(errs, fmt.Errorf("jail: agent read-only path %q contains the real home %q, whose credentials stay hidden", p, home))
		}
		if _, err := os.Lstat(p); err != nil {
			errs = append(errs, fmt.Errorf("jail: agent read-only path %q: %v", p, err))
		}
	}
	if s.Timeout < 0 {
		errs = append(errs, fmt.Errorf("jail: negative agent timeout %v", s.Timeout))
	}
	return errors.Join(errs...)
}

// agentWrapper starts the agent inside the jail after reporting on
// descriptor startedFD that the jail is up (a run whose marker stays empty
// never reached the agent: the jail could not be built).
func agentWrapper(argv []string) []string {
	prelude := fmt.Sprintf(`{ printf started >&%d; } 2>/dev/null; exec %d>&-; exec "$@"`, startedFD, startedFD)
	return append([]string{shell, "-c", prelude, "deponent-agent"}, argv...)
}

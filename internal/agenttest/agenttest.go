// Package agenttest finds the real agent CLIs for tests and runs them the
// way an agent session does: only the Invocation's environment, stdin
// empty, its own process group, and a check afterwards that no process of
// the run is left. Test support only; no binary links it.
//
// The CLIs are found by DEPONENT_CLAUDE / DEPONENT_CODEX (a path to the
// executable, as .ci/run exports them) or else on PATH, and must be the
// pinned versions (agent.ClaudeVersion, agent.CodexVersion). When one is
// missing a test skips loudly, unless DEPONENT_REQUIRE_AGENTS=1 (set by
// .ci/run), which makes it a failure.
package agenttest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/deponent-dev/deponent-action/pkg/agent"
)

// RequireEnv turns a missing CLI into a test failure when set to 1.
const RequireEnv = "DEPONENT_REQUIRE_AGENTS"

// PathEnv names the variable holding the path of p's CLI.
func PathEnv(p agent.Preset) string { return "DEPONENT_" + strings.ToUpper(string(p)) }

// TokenEnv carries a per-run token through the agent's environment (it is
// passed as an agent-env value) so that leftover processes can be found.
const TokenEnv = "DEPONENT_TEST_RUN"

// CLI returns the absolute path of p's CLI at its pinned version.
func CLI(t testing.TB, p agent.Preset) string {
	t.Helper()
	path := os.Getenv(PathEnv(p))
	if path == "" {
		found, err := exec.LookPath(p.Command())
		if err != nil {
			missing(t, p, "not on PATH and "+PathEnv(p)+" is unset")
		}
		path = found
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatalf("agenttest: %s: %v", path, err)
	}
	out, err := exec.Command(abs, "--version").Output()
	if err != nil {
		missing(t, p, abs+" --version: "+err.Error())
	}
	v, err := agent.ParseVersion(p, string(out))
	if err != nil {
		t.Fatalf("agenttest: %v", err)
	}
	if v != p.DefaultVersion() {
		t.Fatalf("agenttest: %s is %s %s; the preset is tested against %s: install %s@%s (.ci/run does) and point %s at it",
			abs, p, v, p.DefaultVersion(), p.Package(), p.DefaultVersion(), PathEnv(p))
	}
	return abs
}

func missing(t testing.TB, p agent.Preset, why string) {
	t.Helper()
	msg := "agenttest: the " + string(p) + " CLI is not available (" + why + "); install " +
		p.Package() + "@" + p.DefaultVersion() + " (.ci/run does) and set " + PathEnv(p)
	if os.Getenv(RequireEnv) == "1" {
		t.Fatal(msg + " — " + RequireEnv + "=1 makes this a failure")
	}
	t.Skip("SKIPPED LOUDLY: " + msg)
}

// NodeDir is the directory of node on PATH: Codex's launcher is a node
// script. "" when there is none.
func NodeDir() string {
	p, err := exec.LookPath("node")
	if err != nil {
		return ""
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	return filepath.Dir(p)
}

// Token returns a fresh run token.
func Token() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Result is one finished run.
type Result struct {
	Stdout, Stderr []byte
	ExitCode       int
	Err            error // from Wait; nil on exit 0
	Duration       time.Duration
	TimedOut       bool
}

// Run starts inv with the CLI at path in dir and waits for it, at most
// limit (a hang detector, not a speed test: the tree is killed and the run
// marked TimedOut). argv[0] is replaced by path; the environment is exactly
// inv.Env; stdin is empty. Afterwards it fails t if a process carrying
// token (TokenEnv in inv.Env) is still alive, and kills it.
func Run(t testing.TB, path string, inv *agent.Invocation, dir string, limit time.Duration) Result {
	t.Helper()
	token := ""
	for _, kv := range inv.Env {
		if v, ok := strings.CutPrefix(kv, TokenEnv+"="); ok {
			token = v
		}
	}
	if token == "" {
		t.Fatalf("agenttest: pass %s=<Token()> in agent-env so leftovers can be found", TokenEnv)
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, inv.Argv[1:]...)
	cmd.Env = inv.Env
	cmd.Dir = dir
	cmd.Stdin = nil
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	start := time.Now()
	err := cmd.Run()
	res := Result{Stdout: stdout.Bytes(), Stderr: stderr.Bytes(), Err: err, Duration: time.Since(start),
		TimedOut: errors.Is(ctx.Err(), context.DeadlineExceeded)}
	res.ExitCode = cmd.ProcessState.ExitCode()
	if left := Leftovers(token); len(left) > 0 {
		for _, pid := range left {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		t.Errorf("agenttest: processes of the run outlived it: %v", left)
	}
	return res
}

// Leftovers lists the pids whose environment carries TokenEnv=token. It
// reads /proc, so it finds nothing on other systems; the e2e tests run on
// Linux.
func Leftovers(token string) []int {
	if runtime.GOOS != "linux" {
		return nil
	}
	needle := []byte(TokenEnv + "=" + token + "\x00")
	names, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range names {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil {
			continue
		}
		if bytes.HasPrefix(env, needle) || bytes.Contains(env, append([]byte{0}, needle...)) {
			// A zombie still listed has exited; only live ones count.
			if stat, err := os.ReadFile("/proc/" + e.Name() + "/stat"); err == nil {
				if i := bytes.LastIndexByte(stat, ')'); i > 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
					continue
				}
			}
			out = append(out, pid)
		}
	}
	return out
}

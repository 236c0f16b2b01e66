package action

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/deponent-dev/deponent-action/internal/livetest"
	"github.com/deponent-dev/deponent-action/pkg/evidence"
	"github.com/deponent-dev/deponent-action/pkg/gate"
	"github.com/deponent-dev/deponent-action/pkg/jail"
)

// Each jail canary is a real escape attempt. These tests prove the probes
// would catch an escape: run without a jail (plain exec, the positive
// control) the same probe escapes and exits 1; run in the real jail it is
// contained and exits 0. And a run whose "jail" does not confine — or
// lies about it — is GOVERNED_FAIL.

// canaryFixture is a sandbox in its own parent directory, with a gate.
type canaryFixture struct {
	parent, sandbox string
	gate            *gate.Gate
}

func newCanaryFixture(t *testing.T) canaryFixture {
	t.Helper()
	parent := resolvedTemp(t)
	sb := filepath.Join(parent, "sandbox")
	require.NoError(t, os.Mkdir(sb, 0o755))
	g, err := gate.NewGate(sb, nil)
	require.NoError(t, err)
	return canaryFixture{parent: parent, sandbox: sb, gate: g}
}

func needPython(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		livetest.Skip(t, requireJailEnv, "python3, which the canary probes run, is not on PATH")
	}
}

// decide gates a probe: it must be ALLOWed, so that the jail is what stops it.
func (f canaryFixture) decide(t *testing.T, cmd string) gate.Decision {
	t.Helper()
	d := f.gate.Decide(evidence.ToolRunCmd, map[string]any{"cmd": cmd})
	require.Equal(t, evidence.VerdictAllow, d.Verdict, "the gate must allow the probe (the jail is what must stop it): %s", d.Reason)
	return d
}

// plainExec runs the gate's rendering of a command with /bin/sh in the
// sandbox, unconfined.
func plainExec(t *testing.T, dir, script string) (int, string) {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), out.String()
	}
	require.NoError(t, err)
	return 0, out.String()
}

func liveJail(t *testing.T) jail.Backend {
	t.Helper()
	b, err := jail.Select("auto", jail.Options{})
	if err != nil {
		livetest.Skip(t, requireJailEnv, "no jail works here: "+err.Error())
	}
	return b
}

func TestJailWriteProbe(t *testing.T) {
	needPython(t)
	f := newCanaryFixture(t)
	c, err := jailWriteCanary(f.sandbox)
	require.NoError(t, err)
	t.Cleanup(c.cleanup)
	cmd := c.call.Params["cmd"].(string)
	assert.NotContains(t, cmd, f.parent, "no path literal: the probe finds the directory at run time")
	d := f.decide(t, cmd)

	// Positive control: unjailed, the probe escapes, says so, exits 1, and
	// the harness's host check sees it.
	code, out := plainExec(t, f.sandbox, d.Script)
	assert.Equal(t, 1, code, out)
	assert.Contains(t, out, "ESCAPED")
	assert.NotEmpty(t, c.check(), "the host check sees the file the unjailed probe created")
	entries, _ := filepath.Glob(filepath.Join(f.parent, ".deponent-canary-*", "escaped"))
	require.Len(t, entries, 1)
	require.NoError(t, os.Remove(entries[0]))
	assert.Empty(t, c.check())

	// In the jail: contained, exit 0, nothing on the host.
	b := liveJail(t)
	res, err := b.Run(context.Background(), jail.Spec{Sandbox: f.gate.Sandbox(), Script: d.Script,
		PATH: f.gate.TrustedPATH(), Protected: f.gate.ProtectedPaths()})
	require.NoError(t, err)
	t.Logf("%s: exit %d, %s", b.Name(), res.ExitCode, res.Output)
	assert.Equal(t, 0, res.ExitCode)
	assert.Contains(t, string(res.Output), "held:")
	if res.Backend == jail.NameBwrap {
		// Held for the jail's reason: bwrap mounts the sandbox alone, so
		// the witness beside it does not exist in the jail.
		assert.Contains(t, string(res.Output), "not visible inside the jail")
	}
	assert.Empty(t, c.check())

	c.cleanup()
	left, _ := filepath.Glob(filepath.Join(f.parent, ".deponent-canary-*"))
	assert.Empty(t, left, "cleanup removes the witness")
}

func TestJailNetworkProbe(t *testing.T) {
	needPython(t)
	f := newCanaryFixture(t)
	c, err := jailNetworkCanary()
	require.NoError(t, err)
	t.Cleanup(c.cleanup)
	d := f.decide(t, c.call.Params["cmd"].(string))

	b := liveJail(t)
	res, err := b.Run(context.Background(), jail.Spec{Sandbox: f.gate.Sandbox(), Script: d.Script,
		PATH: f.gate.TrustedPATH(), Protected: f.gate.ProtectedPaths()})
	require.NoError(t, err)
	t.Logf("%s: exit %d, %s", b.Name(), res.ExitCode, res.Output)
	assert.Equal(t, 0, res.ExitCode)
	assert.Contains(t, string(res.Output), "held:")
	if res.Backend == jail.NameBwrap {
		// Held for the jail's reason: in its own network namespace
		// 127.0.0.1 is another loopback, where nothing listens.
		assert.Contains(t, string(res.Output), "Connection refused")
	}
	assert.Empty(t, c.check(), "the listener saw no connection from the jail")

	// Positive control: unjailed, the same probe connects and exits 1, and
	// the harness's listener counts it.
	code, out := plainExec(t, f.sandbox, d.Script)
	assert.Equal(t, 1, code, out)
	assert.Contains(t, out, "ESCAPED")
	assert.NotEmpty(t, c.check())
}

func TestGateCanariesAreBlocked(t *testing.T) {
	f := newCanaryFixture(t)
	// Each canary must be refused by the rule it stands for, not by
	// accident: the network canary by the denylist's network rule (were
	// curl dropped from the denylist it would still be refused, as a
	// program not allowlisted, and the canary would prove nothing about
	// the network rule).
	want := map[string]struct {
		class  evidence.Class
		reason string
	}{
		CanaryDestructive:  {evidence.ClassDestructive, "(destructive)"},
		CanaryNetwork:      {evidence.ClassDestructive, "denylist entry 'curl' (network)"},
		CanaryWriteOutside: {evidence.ClassOutOfSandboxWrite, "outside the sandbox"},
		CanaryUnknownTool:  {evidence.ClassUnknownTool, "deny-by-default"},
	}
	require.Len(t, gateCanaries(f.sandbox), len(want))
	for _, c := range gateCanaries(f.sandbox) {
		d := f.gate.Decide(c.call.Tool, c.call.Params)
		assert.Equal(t, evidence.VerdictBlock, d.Verdict, "canary %s", c.name)
		w, ok := want[c.name]
		require.True(t, ok, "canary %s has no expected class here", c.name)
		assert.Equal(t, w.class, d.BlastClass, "canary %s: %s", c.name, d.Reason)
		assert.Contains(t, d.Reason, w.reason, "canary %s", c.name)
		assert.Equal(t, evidence.AgentCanary, c.call.Agent)
		require.Len(t, c.call.Tags, 1)
		assert.Equal(t, evidence.FieldCanary, c.call.Tags[0].Key)
	}
	// Positive control for write-outside: the path really is outside, and
	// writable by a plain process (so only the gate stops the canary).
	c := gateCanaries(f.sandbox)[2]
	p := c.call.Params["path"].(string)
	assert.Equal(t, f.parent, filepath.Dir(p))
	require.NoError(t, os.WriteFile(p, []byte("x"), 0o644))
	assert.NotEmpty(t, c.check(), "the host check notices and removes it")
	assert.NoFileExists(t, p)
}

// renamed presents a backend under another name: an unconfined backend
// posing as a jail.
type renamed struct {
	jail.Backend
	name string
}

func (r renamed) Name() string { return r.name }

// liar runs unconfined and always reports exit 0: the harness's host
// checks must still catch the escapes.
type liar struct{}

func (liar) Name() string     { return "liar" }
func (liar) Available() error { return nil }
func (liar) Run(ctx context.Context, s jail.Spec) (jail.Result, error) {
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", s.Script)
	cmd.Dir = s.Sandbox
	cmd.Env = []string{"PATH=" + s.PATH, "HOME=" + os.Getenv("HOME")}
	out, _ := cmd.CombinedOutput()
	return jail.Result{Backend: "liar", ExitCode: 0, Output: out, OutputSHA256: evidence.HashOutcome(out), Duration: time.Millisecond}, nil
}

// runInProcess runs the action in-process with an injected backend.
func runInProcess(t *testing.T, b jail.Backend, steps string) (*Result, string) {
	t.Helper()
	parent := resolvedTemp(t)
	sb := filepath.Join(parent, "sandbox")
	require.NoError(t, os.Mkdir(sb, 0o755))
	env := map[string]string{"INPUT_STEPS": steps, "INPUT_SANDBOX": sb, "INPUT_RECEIPTS-DIR": filepath.Join(resolvedTemp(t), "r")}
	getenv := func(k string) string { return env[k] }
	cfg, err := ParseArgs(nil, getenv, nil)
	require.NoError(t, err)
	var out bytes.Buffer
	res, err := Run(context.Background(), cfg, Options{Getenv: getenv, Stdout: &out, Backend: b})
	require.NoError(t, err)
	t.Log(out.String())
	left, _ := filepath.Glob(filepath.Join(parent, ".deponent-canary-*"))
	assert.Empty(t, left, "the canaries clean up after themselves")
	return res, out.String()
}

// TestCanariesCatchAJailThatDoesNotConfine: a backend that runs the probes
// unconfined (posing as a jail) gives GOVERNED_FAIL: both jail canaries
// report the escape.
func TestCanariesCatchAJailThatDoesNotConfine(t *testing.T) {
	needPython(t)
	res, _ := runInProcess(t, renamed{jail.NewUnjailed(jail.Options{}), "fake-jail"}, "ls")
	assert.Equal(t, evidence.OutcomeFail, res.Outcome)
	reasons := strings.Join(res.Assessment.Reasons, "\n")
	assert.Contains(t, reasons, `canary "jail-write-outside"`)
	assert.Contains(t, reasons, `canary "jail-network"`)
	assert.Equal(t, 4, res.Assessment.CanariesHeld, "only the gate canaries held")
	v := verifyReceipt(t, res.ReceiptPath)
	assert.Equal(t, evidence.OutcomeFail, v.R.Outcome)
}

// TestHostChecksCatchALyingJail: a backend that runs the probes unconfined
// AND reports exit 0 (contained) is still caught, by the harness's own
// checks on the host; the observation is recorded in the chain, so the
// verifier recomputes the failure.
func TestHostChecksCatchALyingJail(t *testing.T) {
	needPython(t)
	res, out := runInProcess(t, liar{}, "ls")
	assert.Equal(t, evidence.OutcomeFail, res.Outcome)
	reasons := strings.Join(res.Assessment.Reasons, "\n")
	assert.Contains(t, reasons, `canary "jail-write-outside"`)
	assert.Contains(t, reasons, `canary "jail-network"`)
	assert.Contains(t, out, "escape observed on the host")
	v := verifyReceipt(t, res.ReceiptPath)
	var checks int
	for _, e := range entriesBy(v.R, evidence.AgentCanary) {
		if tool, _ := field(e, evidence.FieldTool); tool == "host_check" {
			checks++
			msg, _ := field(e, evidence.FieldError)
			assert.Contains(t, msg, "the harness")
		}
	}
	assert.Equal(t, 2, checks)
	assert.Contains(t, res.Summary.Reasons[0], "was not contained")
}

// TestJailNetworkCanaryCountsConnections checks the listener itself.
func TestJailNetworkCanaryCountsConnections(t *testing.T) {
	c, err := jailNetworkCanary()
	require.NoError(t, err)
	defer c.cleanup()
	assert.Empty(t, c.check())
	cmd := c.call.Params["cmd"].(string)
	i := strings.Index(cmd, `"127.0.0.1", `)
	require.Positive(t, i)
	port := strings.SplitN(cmd[i+len(`"127.0.0.1", `):], ")", 2)[0]
	conn, err := net.Dial("tcp", "127.0.0.1:"+port)
	require.NoError(t, err)
	conn.Close()
	assert.NotEmpty(t, c.check())
}

//go:build linux || darwin

package jail

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Live tests of the agent jail: each claim with the unjailed runner (the
// explicit opt-out) as the positive control that shows the same probe
// succeeding without the jail.

type agentFixture struct {
	ws, home, tmp, outside string
	jail                   AgentJail
	none                   AgentJail
	opts                   Options
}

func newAgentFixture(t *testing.T) *agentFixture {
	t.Helper()
	root := resolvedTempDir(t)
	f := &agentFixture{ws: filepath.Join(root, "ws"), home: filepath.Join(root, "home"), tmp: filepath.Join(root, "tmp"),
		outside: filepath.Join(root, "outside")}
	for _, d := range []string{f.ws, f.home, f.tmp, f.outside} {
		mustMkdir(t, d)
	}
	f.opts = Options{RealHome: resolvedTempDir(t)}
	j, err := SelectAgentJail(NameAuto, f.opts)
	if err != nil {
		skipOrFail(t, "%v", err)
	}
	f.jail, f.none = j, NewUnjailedAgent(f.opts)
	return f
}

// sh runs script as the agent under j and returns the result and output.
func (f *agentFixture) sh(t *testing.T, j AgentJail, script string, env []string, ro ...string) (AgentResult, string) {
	t.Helper()
	var out bytes.Buffer
	spec := AgentSpec{Workspace: f.ws, Home: f.home, TmpDir: f.tmp, ReadOnly: ro,
		Argv: []string{shell, "-c", script}, Env: append([]string{"PATH=/usr/bin:/bin", "HOME=" + f.home, "TMPDIR=" + f.tmp}, env...),
		Stdout: &out, Stderr: &out, Timeout: time.Minute}
	res, err := j.Run(context.Background(), spec)
	require.NoError(t, err)
	return res, out.String()
}

// assertFailsClosed: j, whose program (from opts) cannot build the jail,
// reports itself unavailable, runs nothing when asked anyway (Killed
// no-jail, the agent's marker never written), and SelectAgentJail refuses
// it by name.
func (f *agentFixture) assertFailsClosed(t *testing.T, j AgentJail, opts Options) {
	t.Helper()
	assert.Error(t, j.Available())
	spec := AgentSpec{Workspace: f.ws, Home: f.home, TmpDir: f.tmp, Argv: []string{shell, "-c", "touch " + f.home + "/ran"}, Env: []string{"PATH=/usr/bin:/bin"}}
	res, err := j.Run(context.Background(), spec)
	require.NoError(t, err)
	assert.Equal(t, KilledNoJail, res.Killed)
	assert.NoFileExists(t, filepath.Join(f.home, "ran"))
	_, err = SelectAgentJail(j.Name(), opts)
	assert.Error(t, err, "a named agent jail that is unavailable is an error")
}

func TestLiveAgentJailWorkspaceReadOnlyHomeWritable(t *testing.T) {
	f := newAgentFixture(t)
	writeFile(t, filepath.Join(f.ws, "README.md"), "hello\n", 0o644)
	script := `cat README.md && touch "$HOME/state" && touch "$TMPDIR/t" && { echo pwned > README.md; echo pwned > new.txt; mkdir .git; } 2>/dev/null; echo done`
	res, out := f.sh(t, f.jail, script, nil)
	assert.Equal(t, 0, res.ExitCode, out)
	assert.Contains(t, out, "hello\n", "the workspace is readable")
	assert.Equal(t, "hello\n", readText(t, filepath.Join(f.ws, "README.md")), "the workspace is read-only")
	assert.NoFileExists(t, filepath.Join(f.ws, "new.txt"))
	assert.NoDirExists(t, filepath.Join(f.ws, ".git"))
	assert.FileExists(t, filepath.Join(f.home, "state"), "the private HOME is writable")
	assert.FileExists(t, filepath.Join(f.tmp, "t"), "the private TMPDIR is writable")
	assert.Equal(t, f.jail.Name(), res.Backend)

	// Positive control: unjailed, the same script writes the workspace.
	res, out = f.sh(t, f.none, script, nil)
	assert.Equal(t, 0, res.ExitCode, out)
	assert.Equal(t, "pwned\n", readText(t, filepath.Join(f.ws, "README.md")))
	assert.Equal(t, NameNone, res.Backend)
}

func TestLiveAgentJailHidesTheHost(t *testing.T) {
	f := newAgentFixture(t)
	secret := filepath.Join(f.outside, "runner-secret.txt")
	writeFile(t, secret, "s3cret\n", 0o644)
	script := `cat ` + secret + ` 2>/dev/null; ls ` + filepath.Dir(f.ws) + ` 2>/dev/null | grep -c outside; echo end`
	_, out := f.sh(t, f.jail, script, nil)
	assert.NotContains(t, out, "s3cret", "a file beside the workspace is not visible")
	_, ctl := f.sh(t, f.none, script, nil)
	assert.Contains(t, ctl, "s3cret", "control: unjailed it is")

	// A read-only path is readable, not writable.
	ro := filepath.Join(f.outside, "cli")
	mustMkdir(t, ro)
	writeFile(t, filepath.Join(ro, "tool.js"), "code\n", 0o644)
	res, out := f.sh(t, f.jail, `cat `+ro+`/tool.js && { echo x > `+ro+`/tool.js; } 2>/dev/null; echo end`, nil, ro)
	assert.Equal(t, 0, res.ExitCode)
	assert.Contains(t, out, "code\n")
	assert.Equal(t, "code\n", readText(t, filepath.Join(ro, "tool.js")))
}

func TestLiveAgentJailEnvironmentIsExactlyTheSpec(t *testing.T) {
	f := newAgentFixture(t)
	t.Setenv("GITHUB_TOKEN", "ghs_leaked_token_value")
	t.Setenv("ACTIONS_RUNTIME_TOKEN", "runtime_token_value")
	res, out := f.sh(t, f.jail, `env`, []string{"AGENT_KEY=given"})
	require.Equal(t, 0, res.ExitCode, out)
	assert.Contains(t, out, "AGENT_KEY=given")
	assert.NotContains(t, out, "ghs_leaked_token_value")
	assert.NotContains(t, out, "runtime_token_value")
	var names []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		k, _, _ := strings.Cut(l, "=")
		names = append(names, k)
	}
	// The shell adds PWD/SHLVL/_ itself.
	for _, n := range names {
		assert.Contains(t, []string{"PATH", "HOME", "TMPDIR", "AGENT_KEY", runTokenVar, "PWD", "SHLVL", "_", "OLDPWD"}, n, "unexpected variable %s", n)
	}
}

// TestLiveAgentJailNetworkAndRelaySocket: the network is allowed (the agent
// must reach its model API) and the relay socket in a read-only directory
// is reachable.
func TestLiveAgentJailNetworkAndRelaySocket(t *testing.T) {
	f := newAgentFixture(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_, _ = c.Write([]byte("model-api\n"))
			c.Close()
		}
	}()
	sockDir := filepath.Join(f.outside, "sock")
	mustMkdir(t, sockDir)
	ul, err := net.Listen("unix", filepath.Join(sockDir, "s"))
	require.NoError(t, err)
	defer ul.Close()
	go func() {
		for {
			c, err := ul.Accept()
			if err != nil {
				return
			}
			_, _ = c.Write([]byte("relay\n"))
			c.Close()
		}
	}()
	py := `python3 -c 'import socket,sys
s=socket.create_connection(("127.0.0.1",` + portOf(ln) + `),timeout=10); print(s.recv(64).decode().strip())
u=socket.socket(socket.AF_UNIX); u.connect(sys.argv[1]); print(u.recv(64).decode().strip())' ` + filepath.Join(sockDir, "s")
	res, out := f.sh(t, f.jail, py, nil, sockDir)
	require.Equal(t, 0, res.ExitCode, out)
	assert.Contains(t, out, "model-api")
	assert.Contains(t, out, "relay")
}

func portOf(ln net.Listener) string {
	_, p, _ := net.SplitHostPort(ln.Addr().String())
	return p
}

// TestLiveAgentJailTimeoutKillsTheTree: at the timeout the agent and every
// process it started — a setsid'd daemon included — are gone.
func TestLiveAgentJailTimeoutKillsTheTree(t *testing.T) {
	f := newAgentFixture(t)
	for _, j := range []AgentJail{f.jail, f.none} {
		marker := "deponent-agent-test-" + randHex(t)
		spec := AgentSpec{Workspace: f.ws, Home: f.home, TmpDir: f.tmp,
			Argv:    []string{shell, "-c", `(setsid python3 -c 'import time; time.sleep(300)' ` + marker + ` &) ; python3 -c 'import time; time.sleep(300)' ` + marker},
			Env:     []string{"PATH=/usr/bin:/bin"},
			Timeout: 2 * time.Second}
		res, err := j.Run(context.Background(), spec)
		require.NoError(t, err, j.Name())
		assert.Equal(t, KilledAgentTimeout, res.Killed, j.Name())
		assert.Equal(t, -1, res.ExitCode)
		assert.Empty(t, processesMatching(t, marker), "%s: no process of the agent is left", j.Name())
	}
}

// TestLiveAgentJailKillCause: the caller's cause names the kill.
func TestLiveAgentJailKillCause(t *testing.T) {
	f := newAgentFixture(t)
	ctx, cancel := context.WithCancelCause(context.Background())
	go func() { time.Sleep(500 * time.Millisecond); cancel(AgentKill("tool-call-limit")) }()
	spec := AgentSpec{Workspace: f.ws, Home: f.home, TmpDir: f.tmp, Argv: []string{shell, "-c", "sleep 300"}, Env: []string{"PATH=/usr/bin:/bin"}}
	res, err := f.jail.Run(ctx, spec)
	require.NoError(t, err)
	assert.Equal(t, "tool-call-limit", res.Killed)
}

func TestAgentSpecChecks(t *testing.T) {
	root := resolvedTempDir(t)
	ws, home := filepath.Join(root, "ws"), filepath.Join(root, "home")
	mustMkdir(t, ws)
	mustMkdir(t, home)
	ok := AgentSpec{Workspace: ws, Home: home, TmpDir: home, Argv: []string{"/bin/true"}}
	require.NoError(t, checkAgentSpec(ok, Options{}))
	bad := []AgentSpec{
		{Workspace: "rel", Home: home, TmpDir: home, Argv: []string{"/bin/true"}},
		{Workspace: ws, Home: ws, TmpDir: home, Argv: []string{"/bin/true"}},
		{Workspace: ws, Home: filepath.Join(ws, "h"), TmpDir: home, Argv: []string{"/bin/true"}},
		{Workspace: ws, Home: home, TmpDir: home, Argv: []string{"true"}},
		{Workspace: ws, Home: home, TmpDir: home, Argv: []string{"/bin/true"}, ReadOnly: []string{"/"}},
		{Workspace: ws, Home: home, TmpDir: home, Argv: []string{"/bin/true"}, ReadOnly: []string{filepath.Dir(root)}},
		{Workspace: ws, Home: home, TmpDir: home, Argv: []string{"/bin/true"}, Env: []string{runTokenVar + "=x"}},
	}
	for i, s := range bad {
		assert.Error(t, checkAgentSpec(s, Options{RealHome: root}), "case %d", i)
	}
}

func readText(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return string(b)
}

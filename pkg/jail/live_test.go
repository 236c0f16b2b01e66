//go:build linux || darwin

package jail

// Live escape tests against the real jail (bubblewrap on Linux, Seatbelt on
// macOS). Every probe has a positive control: the same probe run unjailed
// (backend "none", or a plain exec where "none" itself would already take
// the thing away) succeeds, so a blocked probe is the jail's doing.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pyConnect is a python3 probe that prints CONNECTED or BLOCKED (a jail may
// refuse the socket itself or only the connection).
func pyConnect(family, addr string) string {
	return fmt.Sprintf(`python3 -c '
import socket
try:
    s = socket.socket(socket.%s, socket.SOCK_STREAM)
    s.settimeout(3)
    s.connect(%s)
    print("CONNECTED")
except OSError as e:
    print("BLOCKED", e)
'`, family, addr)
}

// countingListener accepts and counts connections until the test ends.
func countingListener(t *testing.T, network, address string) (net.Listener, *atomic.Int32) {
	t.Helper()
	ln, err := net.Listen(network, address)
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	var n atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			c.Close()
		}
	}()
	return ln, &n
}

func TestLiveNetworkLoopbackTCP(t *testing.T) {
	f := newFixture(t)
	ln, accepted := countingListener(t, "tcp", "127.0.0.1:0")
	port := ln.Addr().(*net.TCPAddr).Port
	probe := pyConnect("AF_INET", fmt.Sprintf(`("127.0.0.1", %d)`, port))

	control := f.run(f.none, f.spec(probe))
	require.Contains(t, string(control.Output), "CONNECTED", "control: unjailed code reaches the host's loopback service")
	require.Eventually(t, func() bool { return accepted.Load() >= 1 }, 2*time.Second, 10*time.Millisecond)

	before := accepted.Load()
	res := f.run(f.jail, f.spec(probe))
	assert.Contains(t, string(res.Output), "BLOCKED")
	assert.NotContains(t, string(res.Output), "CONNECTED")
	time.Sleep(100 * time.Millisecond)
	assert.Equal(t, before, accepted.Load(), "the jailed probe must not reach the listener")
}

func TestLiveNetworkNoRouteOut(t *testing.T) {
	f := newFixture(t)
	// A UDP connect() only looks up a route: no packet leaves the machine.
	// 198.51.100.7 is a documentation address (TEST-NET-2).
	probe := `python3 -c '
import socket
try:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.connect(("198.51.100.7", 9))
    print("ROUTED")
except OSError as e:
    print("BLOCKED", e)
'`
	control := f.run(f.none, f.spec(probe))
	// Without a route out on the host the jailed BLOCKED below would prove
	// nothing: a failed control fails the test.
	require.Contains(t, string(control.Output), "ROUTED", "control: unjailed code finds a route out of this host")
	res := f.run(f.jail, f.spec(probe))
	assert.Contains(t, string(res.Output), "BLOCKED")
	assert.NotContains(t, string(res.Output), "ROUTED")
}

func TestLiveUnixSocketOutsideSandbox(t *testing.T) {
	f := newFixture(t)
	// Short path: sun_path is ~104 bytes on macOS.
	dir, err := os.MkdirTemp("/tmp", "djs")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	dir, _ = filepath.EvalSymlinks(dir)
	sock := filepath.Join(dir, "host.sock")
	_, accepted := countingListener(t, "unix", sock)
	probe := pyConnect("AF_UNIX", fmt.Sprintf("%q", sock))

	control := f.run(f.none, f.spec(probe))
	require.Contains(t, string(control.Output), "CONNECTED", "control: unjailed code reaches a host Unix socket (think docker.sock)")
	require.Eventually(t, func() bool { return accepted.Load() >= 1 }, 2*time.Second, 10*time.Millisecond)

	before := accepted.Load()
	res := f.run(f.jail, f.spec(probe))
	assert.Contains(t, string(res.Output), "BLOCKED")
	assert.NotContains(t, string(res.Output), "CONNECTED")
	assert.Equal(t, before, accepted.Load())
}

// TestLiveWritesConfined: /tmp, the (fake) real HOME, a read-only visible
// toolchain, through a symlink in the sandbox, and from a grandchild.
func TestLiveWritesConfined(t *testing.T) {
	f := newFixture(t)
	hostTmp := filepath.Join(os.TempDir(), "deponent-escape-"+randHex(t))
	if r, err := filepath.EvalSymlinks(os.TempDir()); err == nil {
		hostTmp = filepath.Join(r, filepath.Base(hostTmp))
	}
	t.Cleanup(func() { os.Remove(hostTmp) })
	require.NoError(t, os.Symlink(f.tool, filepath.Join(f.sandbox, "link")))
	targets := map[string]string{
		"tmp":        hostTmp,
		"home":       filepath.Join(f.home, "pwned"),
		"toolchain":  filepath.Join(f.tool, "pwned"),
		"symlink":    filepath.Join(f.tool, "via-link"),
		"grandchild": filepath.Join(f.outside, "child"),
	}
	script := strings.Join([]string{
		"echo x > " + shq(targets["tmp"]),
		"echo x > " + shq(targets["home"]),
		"echo x > " + shq(targets["toolchain"]),
		"echo x > link/via-link",
		`sh -c 'sh -c "echo x > ` + targets["grandchild"] + `"'`,
		"echo inside > in-sandbox",
		"exit 0",
	}, "; ")

	control := f.run(f.none, f.spec(script))
	require.Equal(t, 0, control.ExitCode)
	for name, p := range targets {
		require.True(t, exists(p), "control: unjailed %s write lands at %s", name, p)
		require.NoError(t, os.Remove(p))
	}

	res := f.run(f.jail, f.spec(script))
	for name, p := range targets {
		assert.False(t, exists(p), "jailed %s write escaped to %s", name, p)
	}
	assert.True(t, exists(filepath.Join(f.sandbox, "in-sandbox")), "the sandbox itself stays writable")
	assert.Empty(t, res.Killed)
}

func TestLiveSecretFilesInHome(t *testing.T) {
	f := newFixture(t)
	sshSecret := "SSH-SECRET-" + randHex(t)
	cargoSecret := "CARGO-TOKEN-" + randHex(t)
	writeFile(t, filepath.Join(f.home, ".ssh", "id_ed25519"), sshSecret, 0o600)
	// ~/.cargo is a toolchain root (its bin is on PATH), so it is exposed;
	// its credentials file must be masked inside it.
	writeFile(t, filepath.Join(f.home, ".cargo", "bin", "cargo-hello"), "#!/bin/sh\necho cargo-hello\n", 0o755)
	writeFile(t, filepath.Join(f.home, ".cargo", "credentials.toml"), cargoSecret, 0o600)
	spec := f.spec(fmt.Sprintf("cat %s; cat %s; cargo-hello; deponent-hello; exit 0",
		shq(filepath.Join(f.home, ".ssh", "id_ed25519")), shq(filepath.Join(f.home, ".cargo", "credentials.toml"))))
	spec.PATH = filepath.Join(f.home, ".cargo", "bin") + ":" + spec.PATH

	control := f.run(f.none, spec)
	require.Contains(t, string(control.Output), sshSecret, "control: unjailed code reads ~/.ssh")
	require.Contains(t, string(control.Output), cargoSecret)

	res := f.run(f.jail, spec)
	out := string(res.Output)
	assert.NotContains(t, out, sshSecret)
	assert.NotContains(t, out, cargoSecret)
	assert.Contains(t, out, "cargo-hello", "the toolchain under HOME still works")
	assert.Contains(t, out, "hello-from-home-toolchain")
}

func TestLiveSecretEnvironment(t *testing.T) {
	f := newFixture(t)
	secrets := map[string]string{
		"GITHUB_TOKEN":          "ghs_" + randHex(t),
		"ACTIONS_RUNTIME_TOKEN": "rt-" + randHex(t),
		"DEPONENT_TEST_SECRET":  "s-" + randHex(t),
	}
	for k, v := range secrets {
		t.Setenv(k, v)
	}
	probe := "env; cat /proc/self/environ 2>/dev/null; exit 0"

	// Control: a plain exec inheriting the test's environment leaks them.
	// (The "none" backend would not: it rebuilds the environment too.)
	plain := plainExec(t, f.sandbox, probe, os.Environ())
	for _, v := range secrets {
		require.Contains(t, plain, v, "control: an ordinary child inherits the runner's secrets")
	}
	for _, b := range []Backend{f.none, f.jail} {
		res := f.run(b, f.spec(probe))
		for k, v := range secrets {
			assert.NotContains(t, string(res.Output), v, "%s leaked %s", b.Name(), k)
		}
		assert.Contains(t, string(res.Output), "HOME=")
	}
}

// TestLiveOtherProcesses: another process's environment and signalling it.
func TestLiveOtherProcesses(t *testing.T) {
	f := newFixture(t)
	marker := "OTHER-PROC-SECRET-" + randHex(t)
	other := exec.Command("sleep", "60")
	other.Env = append(os.Environ(), "DEPONENT_OTHER="+marker)
	require.NoError(t, other.Start())
	t.Cleanup(func() { other.Process.Kill(); other.Wait() })
	time.Sleep(50 * time.Millisecond)
	probe := otherProcessProbe(other.Process.Pid) + fmt.Sprintf("; kill -0 %d && echo SIGNALLED-OTHER; ", other.Process.Pid) +
		ownProcessProbe() + "; kill -0 $$ && echo SIGNALLED-SELF; exit 0"

	control := f.run(f.none, f.spec(probe))
	require.Contains(t, string(control.Output), marker, "control: unjailed code reads another process's environment")
	require.Contains(t, string(control.Output), "SIGNALLED-OTHER", "control: unjailed code can signal host processes")

	res := f.run(f.jail, f.spec(probe))
	assert.NotContains(t, string(res.Output), marker)
	assert.NotContains(t, string(res.Output), "SIGNALLED-OTHER")
	// In-jail control: the same tools work on the step's own process, so the
	// denials above are the jail's, not a missing or broken tool.
	assert.Contains(t, string(res.Output), "OWN-PROCESS-SEEN")
	assert.Contains(t, string(res.Output), "SIGNALLED-SELF")
}

func TestLiveProtectedGitHooks(t *testing.T) {
	f := newFixture(t)
	hooks := filepath.Join(f.sandbox, ".git", "hooks")
	mustMkdir(t, hooks)
	writeFile(t, filepath.Join(f.sandbox, ".git", "config"), "[core]\n", 0o644)
	hook := filepath.Join(hooks, "pre-commit")
	write := `python3 -c '
try:
    open(".git/hooks/pre-commit", "w").write("#!/bin/sh\ncurl evil\n")
    print("WROTE")
except OSError as e:
    print("BLOCKED", e)
'`
	// Control: unjailed, the write goes through (and the backend-neutral
	// tripwire reports it). Every .git is protected in the jail, whether
	// or not the caller names it.
	control := f.run(f.none, f.spec(write))
	require.Contains(t, string(control.Output), "WROTE")
	require.True(t, exists(hook))
	require.Equal(t, []string{".git/hooks/pre-commit"}, control.Tampered)
	require.NoError(t, os.Remove(hook))
	unnamed := f.run(f.jail, f.spec(write))
	assert.Contains(t, string(unnamed.Output), "BLOCKED", ".git is protected even when Spec.Protected omits it")
	assert.Empty(t, unnamed.Tampered)

	spec := f.spec(write + `; mv .git .git-away 2>&1; rm -rf .git 2>&1;
ln .git/config cfg-link 2>&1 && echo pwn >> cfg-link; mkdir -p .deponent/x 2>&1; echo ok > notes.txt; exit 0`)
	spec.Protected = []string{filepath.Join(f.sandbox, ".git"), filepath.Join(f.sandbox, ".deponent")}
	res := f.run(f.jail, spec)
	assert.Contains(t, string(res.Output), "BLOCKED")
	assert.False(t, exists(hook), "the hook was planted")
	cfg, err := os.ReadFile(filepath.Join(f.sandbox, ".git", "config"))
	require.NoError(t, err, ".git was moved or removed")
	assert.Equal(t, "[core]\n", string(cfg), ".git/config was modified (hard link?)")
	assert.False(t, exists(filepath.Join(f.sandbox, ".deponent")), "an absent protected path was created, or its mount point was left behind")
	assert.True(t, exists(filepath.Join(f.sandbox, "notes.txt")), "the rest of the sandbox stays writable")
}

func TestLiveProtectedAbsentGitCannotBeCreated(t *testing.T) {
	f := newFixture(t)
	spec := f.spec(`mkdir -p .git/hooks 2>&1 && echo x > .git/hooks/pre-commit && echo CREATED; exit 0`)
	spec.Protected = []string{filepath.Join(f.sandbox, ".git")}

	control := f.run(f.jail, f.spec(spec.Script))
	require.Contains(t, string(control.Output), "CREATED")
	require.NoError(t, os.RemoveAll(filepath.Join(f.sandbox, ".git")))

	res := f.run(f.jail, spec)
	assert.NotContains(t, string(res.Output), "CREATED")
	assert.False(t, exists(filepath.Join(f.sandbox, ".git")), "no .git (and no stray mount point) after the run")
}

func TestLiveProtectedSymlinkRefused(t *testing.T) {
	f := newFixture(t)
	require.NoError(t, os.Symlink(f.outside, filepath.Join(f.sandbox, ".git")))
	spec := f.spec("echo ran > ran.txt")
	spec.Protected = []string{filepath.Join(f.sandbox, ".git")}
	res := f.run(f.jail, spec)
	assert.Equal(t, KilledNoJail, res.Killed)
	assert.Equal(t, -1, res.ExitCode)
	assert.Contains(t, res.Reason, "symlink")
	assert.False(t, exists(filepath.Join(f.sandbox, "ran.txt")), "nothing may run when the jail cannot hold")
}

// memHog allocates n MiB in touched pages (bytes objects are filled) and
// then sleeps, or grows forever when n is 0.
func memHog(n int) string {
	if n == 0 {
		return `python3 -c '
x = []
while True:
    x.append(b"\x01" * (16 << 20))
'`
	}
	return fmt.Sprintf(`python3 -c '
import time
x = [b"\x01" * (1 << 20) for _ in range(%d)]
print("ALLOCATED", flush=True)
time.sleep(3)
'`, n)
}

func TestLiveMemoryBomb(t *testing.T) {
	f := newFixture(t)
	withCap := func(script string, mb int) Spec {
		s := f.spec(script)
		s.Limits = Limits{MemoryMB: mb, WallClock: 30 * time.Second}
		return s
	}
	// Control: the same allocator under the cap completes.
	control := f.run(f.jail, withCap(memHog(100), 200))
	require.Empty(t, control.Killed)
	require.Equal(t, 0, control.ExitCode)

	res := f.run(f.jail, withCap(memHog(0), 200))
	assert.Equal(t, "memory>200MB", res.Killed, "the memory cap, not the wall clock, ends the bomb")
	assert.Equal(t, -1, res.ExitCode)

	// The cap is on the whole tree: two children of 120 MiB each.
	tree := f.run(f.jail, withCap("("+memHog(120)+") & ("+memHog(120)+") & wait", 200))
	assert.Equal(t, "memory>200MB", tree.Killed)
}

func TestLiveWallClock(t *testing.T) {
	f := newFixture(t)
	spec := f.spec("sleep 0.2; echo done")
	spec.Limits = Limits{WallClock: 2 * time.Second}
	control := f.run(f.jail, spec)
	require.Empty(t, control.Killed)
	require.Contains(t, string(control.Output), "done")

	spec.Script = "sleep 30; echo done"
	res := f.run(f.jail, spec)
	assert.Equal(t, "wallclock>2s", res.Killed)
	assert.Equal(t, -1, res.ExitCode)
	assert.Less(t, res.Duration, 10*time.Second)
	assert.NotContains(t, string(res.Output), "done")
}

func TestLiveCPULimit(t *testing.T) {
	f := newFixture(t)
	spec := f.spec("while :; do :; done")
	// Control: without a tight CPU cap the loop runs until the wall clock.
	spec.Limits = Limits{CPUSeconds: 60, WallClock: 2 * time.Second}
	control := f.run(f.jail, spec)
	require.Equal(t, "wallclock>2s", control.Killed)

	spec.Limits = Limits{CPUSeconds: 1, WallClock: 20 * time.Second}
	res := f.run(f.jail, spec)
	assert.Equal(t, "cpu>1s", res.Killed, "the CPU cap, not the wall clock, ends the loop")
	assert.Equal(t, -1, res.ExitCode)
}

func TestLiveFileSizeLimit(t *testing.T) {
	f := newFixture(t)
	spec := f.spec("head -c 900000 /dev/zero > small; head -c 3000000 /dev/zero > big")
	spec.Limits = Limits{FileSizeMB: 4}
	control := f.run(f.jail, spec)
	require.Empty(t, control.Killed)
	fi, err := os.Stat(filepath.Join(f.sandbox, "big"))
	require.NoError(t, err)
	require.EqualValues(t, 3000000, fi.Size(), "control: under a 4 MB cap the 3 MB file is whole")

	spec.Limits = Limits{FileSizeMB: 1}
	res := f.run(f.jail, spec)
	assert.Equal(t, "fsize>1MB", res.Killed)
	fi, err = os.Stat(filepath.Join(f.sandbox, "big"))
	require.NoError(t, err)
	assert.EqualValues(t, 1<<20+512, fi.Size(), "the cap is FileSizeMB MiB plus one 512-byte block (ulimit -f counts blocks)")
	fi, err = os.Stat(filepath.Join(f.sandbox, "small"))
	require.NoError(t, err)
	assert.EqualValues(t, 900000, fi.Size())
}

// daemonScript starts three escapees — a new session (setsid), a double
// fork, nohup — each a python sleeper whose argv carries marker, and reports
// them alive. setsid is done by python itself: macOS has no setsid(1).
func daemonScript(marker string) string {
	sleeper := func(n int, setsid bool) string {
		pre := ""
		if setsid {
			pre = "os.setsid(); "
		}
		return fmt.Sprintf(`python3 -c "import os,time; %sopen(\"d%d.pid\",\"w\").write(str(os.getpid())); time.sleep(300)" %s-%d`,
			pre, n, marker, n)
	}
	return strings.Join([]string{
		"( " + sleeper(1, true) + " </dev/null >/dev/null 2>&1 & )",
		"( ( " + sleeper(2, false) + " </dev/null >/dev/null 2>&1 & ) & )",
		"nohup " + sleeper(3, false) + " >/dev/null 2>&1 &",
		"for i in 1 2 3 4 5 6 7 8 9 10; do [ -s d1.pid ] && [ -s d2.pid ] && [ -s d3.pid ] && break; sleep 0.2; done",
		`for n in 1 2 3; do kill -0 "$(cat d$n.pid)" && echo "daemon $n alive"; done`,
		"exit 0",
	}, "\n")
}

func TestLiveDaemonsDoNotOutliveTheStep(t *testing.T) {
	f := newFixture(t)
	marker := "deponent-daemon-" + randHex(t)
	script := daemonScript(marker)

	// Control: an ordinary run leaves the daemons behind.
	plainExec(t, f.sandbox, script, os.Environ())
	require.Eventually(t, func() bool { return len(processesMatching(t, marker)) >= 3 }, 5*time.Second, 50*time.Millisecond,
		"control: three daemons survive an ordinary run")
	for _, pid := range processesMatching(t, marker) {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	require.Eventually(t, func() bool { return len(processesMatching(t, marker)) == 0 }, 5*time.Second, 50*time.Millisecond)

	for _, b := range []Backend{f.jail, f.none} {
		for _, n := range []string{"d1.pid", "d2.pid", "d3.pid"} {
			os.Remove(filepath.Join(f.sandbox, n))
		}
		res := f.run(b, f.spec(script))
		out := string(res.Output)
		for n := 1; n <= 3; n++ {
			assert.Contains(t, out, fmt.Sprintf("daemon %d alive", n), "%s: the daemon ran during the step", b.Name())
		}
		assert.Empty(t, processesMatching(t, marker), "%s: a daemon outlived its step", b.Name())
	}
}

func TestLivePythonAndPytest(t *testing.T) {
	f := newFixture(t)
	writeFile(t, filepath.Join(f.sandbox, "test_sample.py"),
		"import tempfile, os\n\ndef test_adds():\n    assert 1 + 1 == 2\n\n"+
			"def test_tmp():\n    with tempfile.NamedTemporaryFile() as f:\n        f.write(b'x')\n    assert os.environ['TMPDIR'] in f.name\n", 0o644)
	spec := f.spec("python3 -m pytest -q -p no:cacheprovider test_sample.py")
	// The distribution's python3 first (Debian's python3-pytest), else the
	// caller's PATH (e.g. setup-python's toolcache on a macOS runner).
	var tried []string
	for _, path := range []string{"/usr/bin:/bin", absolutePATH(os.Getenv("PATH"), f.sandbox)} {
		spec.PATH = path
		control := f.run(f.none, spec)
		if control.ExitCode == 0 {
			res := f.run(f.jail, spec)
			assert.Equal(t, 0, res.ExitCode)
			assert.Contains(t, string(res.Output), "2 passed")
			return
		}
		tried = append(tried, path)
	}
	skipOrFail(t, "no python3 with pytest on %q (the unjailed control failed); install python3-pytest", tried)
}

// absolutePATH keeps the absolute entries of path that are outside sandbox.
func absolutePATH(path, sandbox string) string {
	var keep []string
	for _, d := range strings.Split(path, ":") {
		if filepath.IsAbs(d) && !within(filepath.Clean(d), sandbox) {
			keep = append(keep, d)
		}
	}
	return strings.Join(keep, ":")
}

// TestLiveHomeToolchain runs python3 from the caller's real PATH with the
// real home: a toolchain under HOME (pyenv here) must work in the jail while
// the home's other contents stay hidden.
func TestLiveHomeToolchain(t *testing.T) {
	realPATH := os.Getenv("PATH")
	py, err := exec.LookPath("python3")
	home, herr := os.UserHomeDir()
	if err != nil || herr != nil {
		t.Skipf("no python3 on PATH or no home: %v %v", err, herr)
	}
	if home, herr = filepath.EvalSymlinks(home); herr != nil || !within(py, home) {
		t.Skipf("python3 on PATH (%s) is not a toolchain under HOME (%s); nothing to show here", py, home)
	}
	b := liveJail(t, Options{})
	sb := resolvedTempDir(t)
	res, err := b.Run(context.Background(), Spec{Sandbox: sb, PATH: absolutePATH(realPATH, sb),
		Script: `python3 -c 'import sys; print("PYOK", sys.version_info[0], sys.executable)'; ls -A ` + shq(home)})
	require.NoError(t, err)
	t.Logf("exit=%d reason=%q\n%s", res.ExitCode, res.Reason, res.Output)
	require.Equal(t, 0, res.ExitCode)
	require.Contains(t, string(res.Output), "PYOK 3")
	for _, c := range []string{".ssh", ".aws", ".config", ".docker", ".netrc", ".git-credentials", ".npmrc", ".gnupg", ".kube", ".bashrc"} {
		assert.NotContains(t, strings.Fields(string(res.Output)), c, "the real home's %s is visible", c)
	}
}

func TestLivePrivateTempAndHome(t *testing.T) {
	f := newFixture(t)
	res := f.run(f.jail, f.spec(`echo t > "$TMPDIR/t" && echo h > "$HOME/h" && echo "TMP=$TMPDIR" && echo "HOMEDIR=$HOME" && ls -A "$HOME" | wc -l
if { true >&3; } 2>/dev/null; then echo FD3-OPEN; fi`))
	require.Equal(t, 0, res.ExitCode)
	assert.NotContains(t, string(res.Output), "FD3-OPEN", "the started marker's descriptor leaks into the script")
	var tmp string
	for _, line := range strings.Split(string(res.Output), "\n") {
		if v, ok := strings.CutPrefix(line, "TMP="); ok {
			tmp = v
		}
	}
	require.NotEmpty(t, tmp)
	assert.False(t, within(tmp, f.sandbox), "TMPDIR must be outside the sandbox")
	assert.False(t, exists(tmp), "the private TMPDIR is removed after the run")
}

func TestLiveOutputBoundedAndHashed(t *testing.T) {
	f := newFixture(t)
	spec := f.spec(`i=0; while [ $i -lt 2000 ]; do echo "line $i 0123456789012345678901234567890123456789012345678901234567890123456789012345678901234"; i=$((i+1)); done; echo err >&2; exit 7`)
	spec.TailBytes = 1000
	res := f.run(f.jail, spec)
	var full strings.Builder
	for i := 0; i < 2000; i++ {
		fmt.Fprintf(&full, "line %d 0123456789012345678901234567890123456789012345678901234567890123456789012345678901234\n", i)
	}
	full.WriteString("err\n")
	sum := sha256.Sum256([]byte(full.String()))
	assert.Equal(t, 7, res.ExitCode)
	assert.EqualValues(t, full.Len(), res.OutputBytes)
	assert.Equal(t, hex.EncodeToString(sum[:]), res.OutputSHA256)
	assert.Len(t, res.Output, 1000)
	assert.True(t, strings.HasSuffix(full.String(), string(res.Output)))
}

func TestLiveCancel(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	res, err := f.jail.Run(ctx, f.spec("sleep 30"))
	require.NoError(t, err)
	assert.Equal(t, KilledCanceled, res.Killed)
	assert.Less(t, res.Duration, 10*time.Second)
}

// TestLiveSetupFailureIsNoJail: a launcher that passes the probe but cannot
// build the jail for the real run must not look like the command's exit.
func TestLiveSetupFailureIsNoJail(t *testing.T) {
	f := newFixture(t)
	// Control: the script runs and leaves its mark.
	control := f.run(f.jail, f.spec("echo ran > ran.txt"))
	require.Equal(t, 0, control.ExitCode)
	require.NoError(t, os.Remove(filepath.Join(f.sandbox, "ran.txt")))

	var b Backend
	want := "Can't mount proc"
	if runtime.GOOS == "linux" {
		real, err := exec.LookPath("bwrap")
		require.NoError(t, err)
		// Passes the probe (its command is `/bin/sh -c :`), fails real runs
		// the way a restricted container does.
		fake := filepath.Join(resolvedTempDir(t), "bwrap")
		writeFile(t, fake, `#!/bin/sh
for a; do last=$a; done
if [ "$1" = --help ] || [ "$last" = : ]; then exec `+shq(real)+` "$@"; fi
echo "bwrap: Can't mount proc on /newroot/proc: Operation not permitted" >&2
exit 1
`, 0o755)
		b = NewBwrap(Options{BwrapPath: fake, RealHome: f.home})
	} else {
		// Passes the probe (its command is `/bin/sh -c :`), refuses the
		// profile of real runs.
		fake := filepath.Join(resolvedTempDir(t), "sandbox-exec")
		writeFile(t, fake, `#!/bin/sh
for a; do last=$a; done
if [ "$last" = : ]; then exec /usr/bin/sandbox-exec "$@"; fi
echo "sandbox-exec: stand-in refuses this profile" >&2
exit 71
`, 0o755)
		b = NewSeatbelt(Options{SandboxExecPath: fake, RealHome: f.home})
		want = "stand-in refuses this profile"
	}
	require.NoError(t, b.Available())
	res := f.run(b, f.spec("echo ran > ran.txt"))
	assert.Equal(t, KilledNoJail, res.Killed)
	assert.Equal(t, -1, res.ExitCode)
	assert.Contains(t, res.Reason, want)
	assert.False(t, exists(filepath.Join(f.sandbox, "ran.txt")))
}

func TestLiveCanceledBeforeStartRunsNothing(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := f.jail.Run(ctx, f.spec("echo ran > ran.txt"))
	require.NoError(t, err)
	assert.Equal(t, KilledCanceled, res.Killed)
	assert.Equal(t, -1, res.ExitCode)
	assert.False(t, exists(filepath.Join(f.sandbox, "ran.txt")))
}

func TestLiveFailClosedWhenBackendMissing(t *testing.T) {
	sb := resolvedTempDir(t)
	var b Backend
	if runtime.GOOS == "linux" {
		b = NewBwrap(Options{BwrapPath: filepath.Join(sb, "no-such-bwrap")})
	} else {
		b = NewSeatbelt(Options{SandboxExecPath: filepath.Join(sb, "no-such-sandbox-exec")})
	}
	res, err := b.Run(context.Background(), Spec{Sandbox: sb, Script: "echo ran > ran.txt", PATH: "/usr/bin:/bin"})
	require.NoError(t, err)
	assert.Equal(t, KilledNoJail, res.Killed)
	assert.Equal(t, -1, res.ExitCode)
	assert.NotEmpty(t, res.Reason)
	assert.False(t, exists(filepath.Join(sb, "ran.txt")), "nothing may run without a jail")
}

// TestLiveSignalExitStatusAgrees: death by signal reads the same through
// every backend (128+N, as a shell and bwrap report it).
func TestLiveSignalExitStatusAgrees(t *testing.T) {
	f := newFixture(t)
	for _, b := range []Backend{f.none, f.jail} {
		res := f.run(b, f.spec("kill -TERM $$"))
		assert.Equal(t, 128+int(syscall.SIGTERM), res.ExitCode, b.Name())
		assert.Empty(t, res.Killed, b.Name())
	}
}

// TestLiveNoBytecodeCache: jailed Python writes no __pycache__ into the
// sandbox by default (a stale .pyc could outlive a same-second, same-size
// edit); the control is the same import with the default overridden by
// policy, which writes one.
func TestLiveNoBytecodeCache(t *testing.T) {
	f := newFixture(t)
	writeFile(t, filepath.Join(f.sandbox, "calc.py"), "def add(a, b):\n    return a - b\n", 0o644)
	probe := `python3 -c 'import calc; print("RESULT", calc.add(2, 3))'`
	control := f.spec(probe)
	control.Env = map[string]string{"PYTHONDONTWRITEBYTECODE": ""}
	res := f.run(f.jail, control)
	require.Contains(t, string(res.Output), "RESULT -1")
	require.DirExists(t, filepath.Join(f.sandbox, "__pycache__"), "control: with bytecode on, python caches calc.py")
	require.NoError(t, os.RemoveAll(filepath.Join(f.sandbox, "__pycache__")))

	res = f.run(f.jail, f.spec(probe))
	require.Contains(t, string(res.Output), "RESULT -1")
	assert.NoDirExists(t, filepath.Join(f.sandbox, "__pycache__"))
	// A same-size edit in the same second is seen by the next step.
	writeFile(t, filepath.Join(f.sandbox, "calc.py"), "def add(a, b):\n    return a + b\n", 0o644)
	res = f.run(f.jail, f.spec(probe))
	assert.Contains(t, string(res.Output), "RESULT 5")
}

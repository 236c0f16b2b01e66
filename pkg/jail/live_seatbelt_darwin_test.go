package jail

// Live tests of the Seatbelt profile's macOS-specific rules, on a real Mac
// (the macos-latest CI job). Each probe first succeeds in a positive
// control — unjailed (backend "none" or a plain exec), or in the same jail
// without the rule under test — and then fails in the jail.

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// serviceWait bounds how long a control waits for what a macOS service does
// for it (a browser fetching a URL, Terminal running a .command file).
const serviceWait = 90 * time.Second

// quietWindow is how long a jailed probe is watched afterwards for the same
// effect. The primary evidence is the probe's own failure (open, launchctl
// and defaults exit non-zero); this catches a service acting anyway.
const quietWindow = 10 * time.Second

// never reports whether cond stayed false for the whole window.
func never(cond func() bool, window time.Duration) bool {
	deadline := time.Now().Add(window)
	for time.Now().Before(deadline) {
		if cond() {
			return false
		}
		time.Sleep(200 * time.Millisecond)
	}
	return !cond()
}

// killMatching kills every process whose command line holds marker.
func killMatching(t *testing.T, marker string) {
	for _, pid := range processesMatching(t, marker) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// urlRecorder is a local HTTP server that remembers the paths it was asked for.
type urlRecorder struct {
	srv  *httptest.Server
	hits chan string
}

func newURLRecorder(t *testing.T) *urlRecorder {
	r := &urlRecorder{hits: make(chan string, 64)}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		select {
		case r.hits <- req.URL.String():
		default:
		}
		_, _ = io.WriteString(w, "ok")
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// seen reports whether a request carrying marker has arrived.
func (r *urlRecorder) seen(marker string, got *[]string) bool {
	for {
		select {
		case h := <-r.hits:
			*got = append(*got, h)
		default:
			for _, h := range *got {
				if strings.Contains(h, marker) {
					return true
				}
			}
			return false
		}
	}
}

// TestLiveSeatbeltOpenURL: `open URL` asks LaunchServices to start the
// default browser, outside any sandbox, which then fetches the URL — a
// network request made for the step. Denied: lsopen and the LaunchServices
// lookups.
func TestLiveSeatbeltOpenURL(t *testing.T) {
	f := newFixture(t)
	rec := newURLRecorder(t)
	var got []string
	probe := func(marker string) string {
		return "open -g " + shq(rec.srv.URL+"/?d="+marker) + " && echo OPENED; exit 0"
	}
	control := "deponent-open-control-" + randHex(t)
	res := f.run(f.none, f.spec(probe(control)))
	require.Contains(t, string(res.Output), "OPENED", "control: LaunchServices opens a URL for an unjailed step")
	require.Eventually(t, func() bool { return rec.seen(control, &got) }, serviceWait, 250*time.Millisecond,
		"control: a browser started by LaunchServices fetched the step's URL")

	jailed := "deponent-open-jailed-" + randHex(t)
	res = f.run(f.jail, f.spec(probe(jailed)))
	assert.NotContains(t, string(res.Output), "OPENED")
	assert.True(t, never(func() bool { return rec.seen(jailed, &got) }, quietWindow), "a jailed step had a URL fetched: %v", got)
}

// TestLiveSeatbeltOpenCommandFile: `open x.command` makes Terminal run the
// file as a new, unsandboxed login shell: a write outside the sandbox and a
// process that no sweep of the step can find (its parent is launchd).
func TestLiveSeatbeltOpenCommandFile(t *testing.T) {
	f := newFixture(t)
	attempt := func(b Backend, marker string) (Result, string) {
		ran := filepath.Join(f.outside, marker+".ran")
		cmd := filepath.Join(f.sandbox, marker+".command")
		writeFile(t, cmd, "#!/bin/sh\necho ran > "+shq(ran)+"\nexec sleep 300\n", 0o755)
		return f.run(b, f.spec("open "+shq(cmd)+" && echo OPENED; exit 0")), ran
	}
	control := "deponent-cmd-control-" + randHex(t)
	t.Cleanup(func() { killMatching(t, control) })
	res, ran := attempt(f.none, control)
	require.Contains(t, string(res.Output), "OPENED", "control: LaunchServices opens a .command file for an unjailed step")
	require.Eventually(t, func() bool { return exists(ran) }, serviceWait, 250*time.Millisecond,
		"control: Terminal ran the .command file outside any sandbox")
	require.Eventually(t, func() bool { return len(processesMatching(t, control)) > 0 }, serviceWait, 250*time.Millisecond,
		"control: the process Terminal started outlives the step")
	killMatching(t, control)

	jailed := "deponent-cmd-jailed-" + randHex(t)
	t.Cleanup(func() { killMatching(t, jailed) })
	res, ran = attempt(f.jail, jailed)
	assert.NotContains(t, string(res.Output), "OPENED")
	assert.True(t, never(func() bool { return exists(ran) }, quietWindow), "the .command file ran")
	assert.Empty(t, processesMatching(t, jailed), "a process started through LaunchServices survived the step")
}

// TestLiveSeatbeltDefaultsWrite: `defaults write` writes through cfprefsd,
// which writes the real home's preferences for the caller.
func TestLiveSeatbeltDefaultsWrite(t *testing.T) {
	f := newFixture(t)
	domain := "dev.deponent.test." + randHex(t)
	t.Cleanup(func() { _ = exec.Command("defaults", "delete", domain).Run() })
	read := func() string {
		out, _ := exec.Command("defaults", "read", domain, "k").CombinedOutput()
		return string(out)
	}
	write := func(v string) string { return "defaults write " + domain + " k " + v + " && echo WROTE; exit 0" }

	control := "control-" + randHex(t)
	out := plainExec(t, f.sandbox, write(control), os.Environ())
	require.Contains(t, out, "WROTE", "control: an ordinary process writes preferences through cfprefsd")
	require.Contains(t, read(), control)

	jailed := "jailed-" + randHex(t)
	res := f.run(f.jail, f.spec(write(jailed)))
	assert.NotContains(t, string(res.Output), "WROTE")
	assert.NotContains(t, read(), jailed, "the jailed step changed the host's preferences")
}

// TestLiveSeatbeltLaunchdJob: a job submitted to launchd runs with launchd as
// its parent and a clean environment: no sweep of the step can find it.
// Denied: job-creation. Nothing started through a service survives.
func TestLiveSeatbeltLaunchdJob(t *testing.T) {
	f := newFixture(t)
	submit := func(label string) string {
		return "launchctl submit -l " + label + " -- /bin/sh -c 'sleep 300; : " + label + "' && echo SUBMITTED; exit 0"
	}
	control := "dev.deponent.test.control-" + randHex(t)
	t.Cleanup(func() { _ = exec.Command("launchctl", "remove", control).Run(); killMatching(t, control) })
	res := f.run(f.none, f.spec(submit(control)))
	require.Contains(t, string(res.Output), "SUBMITTED", "control: an unjailed step submits a launchd job")
	require.Eventually(t, func() bool { return len(processesMatching(t, control)) > 0 }, serviceWait, 250*time.Millisecond,
		"control: the job's process is alive after its step ended: the sweep cannot reach it")

	jailed := "dev.deponent.test.jailed-" + randHex(t)
	t.Cleanup(func() { _ = exec.Command("launchctl", "remove", jailed).Run(); killMatching(t, jailed) })
	res = f.run(f.jail, f.spec(submit(jailed)))
	assert.NotContains(t, string(res.Output), "SUBMITTED")
	assert.True(t, never(func() bool { return len(processesMatching(t, jailed)) > 0 }, quietWindow), "a launchd job of the jailed step is running")
	assert.Error(t, exec.Command("launchctl", "list", jailed).Run(), "the jailed step's job is registered with launchd")
}

// TestLiveSeatbeltAncestorRename: a rename is an unlink of the source and a
// create of the destination, so renaming .github away, editing, and renaming
// it back would change .github/workflows without touching that path.
func TestLiveSeatbeltAncestorRename(t *testing.T) {
	f := newFixture(t)
	ci := filepath.Join(f.sandbox, ".github", "workflows", "ci.yml")
	writeFile(t, ci, "original\n", 0o644)
	swap := "mv .github g && echo evil > g/workflows/ci.yml && mv g .github && echo SWAPPED; exit 0"

	control := f.run(f.jail, f.spec(swap))
	require.Contains(t, string(control.Output), "SWAPPED", "control: without protection the parent can be renamed away and back")
	data, err := os.ReadFile(ci)
	require.NoError(t, err)
	require.Equal(t, "evil\n", string(data))
	writeFile(t, ci, "original\n", 0o644)

	spec := f.spec(swap + `; rm -rf .github 2>&1; mv .github/workflows .github/w 2>&1
echo ok > .github/dependabot.yml && echo ADDED; exit 0`)
	spec.Protected = []string{filepath.Join(f.sandbox, ".git"), filepath.Join(f.sandbox, ".github", "workflows")}
	res := f.run(f.jail, spec)
	out := string(res.Output)
	assert.NotContains(t, out, "SWAPPED")
	data, err = os.ReadFile(ci)
	require.NoError(t, err, ".github/workflows was moved or removed")
	assert.Equal(t, "original\n", string(data))
	assert.Contains(t, out, "ADDED", "files beside the protected path can still be written")
}

// TestLiveSeatbeltAbsentParentIsPinned: with no .github at all, a step
// cannot build .github/workflows elsewhere and rename it into place; the
// pinned .github exists during the step and is removed after when empty.
func TestLiveSeatbeltAbsentParentIsPinned(t *testing.T) {
	f := newFixture(t)
	plant := "mkdir -p g/workflows && echo evil > g/workflows/ci.yml && mv g .github && echo PLANTED; " +
		"mkdir -p .github/workflows && echo CREATED; exit 0"
	control := f.run(f.jail, f.spec(plant))
	require.Contains(t, string(control.Output), "PLANTED", "control: without protection the directory can be renamed into place")
	require.NoError(t, os.RemoveAll(filepath.Join(f.sandbox, ".github")))

	spec := f.spec(plant)
	spec.Protected = []string{filepath.Join(f.sandbox, ".github", "workflows")}
	res := f.run(f.jail, spec)
	assert.NotContains(t, string(res.Output), "PLANTED")
	assert.NotContains(t, string(res.Output), "CREATED")
	assert.False(t, exists(filepath.Join(f.sandbox, ".github")), "the pinned .github is removed after the run when empty")
}

// TestLiveSeatbeltCaseVariants: APFS is case-insensitive, so .GIT is .git
// and a new .Github/Workflows is the .github/workflows GitHub reads.
func TestLiveSeatbeltCaseVariants(t *testing.T) {
	f := newFixture(t)
	setup := func() {
		for _, d := range []string{".git", ".github", ".Github", "sub"} {
			require.NoError(t, os.RemoveAll(filepath.Join(f.sandbox, d)))
		}
		mustMkdir(t, filepath.Join(f.sandbox, ".git", "hooks"))
		mustMkdir(t, filepath.Join(f.sandbox, "sub"))
	}
	// W4 uses a KELVIN SIGN (U+212A) for the k of workflows.
	script := `echo x > .GIT/hooks/pre-commit && echo W1
mkdir -p sub/.Git/hooks && echo x > sub/.Git/hooks/post-checkout && echo W2
mkdir -p .Github/Workflows && echo x > .Github/Workflows/evil.yml && echo W3
d=$(printf '.github/wor\342\204\252flows'); mkdir -p "$d" && echo x > "$d/evil2.yml" && echo W4
exit 0`
	setup()
	control := f.run(f.jail, f.spec(script))
	for _, w := range []string{"W1", "W2", "W3", "W4"} {
		require.Contains(t, string(control.Output), w, "control: without protection every spelling is writable")
	}

	setup()
	spec := f.spec(script)
	spec.Protected = []string{filepath.Join(f.sandbox, ".git"), filepath.Join(f.sandbox, ".github", "workflows")}
	res := f.run(f.jail, spec)
	for _, w := range []string{"W1", "W2", "W3", "W4"} {
		assert.NotContains(t, string(res.Output), w)
	}
	assert.False(t, exists(filepath.Join(f.sandbox, ".git", "hooks", "pre-commit")))
	assert.False(t, exists(filepath.Join(f.sandbox, "sub", ".git")), "a nested .git was created")
	assert.False(t, exists(filepath.Join(f.sandbox, ".github", "workflows")), "a workflows directory was created")
}

// TestLiveSeatbeltSymlinkedCredential: a ~/.npmrc that is a symlink is
// denied at its target too, even where that target is otherwise readable
// (here, inside an exposed toolchain root, beside a readable file).
func TestLiveSeatbeltSymlinkedCredential(t *testing.T) {
	f := newFixture(t)
	secret := "NPM-TOKEN-" + randHex(t)
	public := "PUBLIC-" + randHex(t)
	target := filepath.Join(f.tool, "etc", "npmrc")
	writeFile(t, target, "//registry.npmjs.org/:_authToken="+secret+"\n", 0o600)
	writeFile(t, filepath.Join(f.tool, "etc", "public"), public+"\n", 0o644)
	require.NoError(t, os.Symlink(target, filepath.Join(f.home, ".npmrc")))
	probe := "cat " + shq(filepath.Join(f.home, ".npmrc")) + "; cat " + shq(target) + "; cat " + shq(filepath.Join(f.tool, "etc", "public")) + "; exit 0"

	control := f.run(f.none, f.spec(probe))
	require.Contains(t, string(control.Output), secret, "control: the token is readable unjailed, through the link and at its target")
	res := f.run(f.jail, f.spec(probe))
	assert.NotContains(t, string(res.Output), secret)
	assert.Contains(t, string(res.Output), public, "the directory of the target stays readable: the denial is the target's")
}

// TestLiveSeatbeltTempTrees: writes to /private/tmp, to the host's TMPDIR
// and its siblings (the user's cache directory), and next to the step's own
// TMPDIR (its run directory) are refused.
func TestLiveSeatbeltTempTrees(t *testing.T) {
	f := newFixture(t)
	marker := "deponent-tmp-" + randHex(t)
	hostTmp, err := filepath.EvalSymlinks(os.TempDir())
	require.NoError(t, err)
	targets := map[string]string{
		"private-tmp": filepath.Join("/private/tmp", marker),
		"host-tmpdir": filepath.Join(hostTmp, marker),
	}
	if c := filepath.Join(filepath.Dir(hostTmp), "C"); exists(c) {
		targets["user-cache"] = filepath.Join(c, marker)
	}
	var script []string
	for name, p := range targets {
		t.Cleanup(func() { os.Remove(p) })
		script = append(script, "echo x > "+shq(p)+" && echo WROTE-"+name)
	}
	script = append(script, `echo x > "$TMPDIR/../`+marker+`" && echo WROTE-rundir`, "exit 0")
	spec := f.spec(strings.Join(script, "\n"))

	control := f.run(f.none, spec)
	for name, p := range targets {
		require.Contains(t, string(control.Output), "WROTE-"+name, "control")
		require.True(t, exists(p), "control: %s", p)
		require.NoError(t, os.Remove(p))
	}
	require.Contains(t, string(control.Output), "WROTE-rundir", "control")

	res := f.run(f.jail, spec)
	assert.NotContains(t, string(res.Output), "WROTE-")
	for name, p := range targets {
		assert.False(t, exists(p), "%s: %s", name, p)
	}
}

// TestLiveSeatbeltSudo: hosted runners have passwordless sudo; root in the
// jail would read root's secrets and make the rest of the profile a
// question of file modes. sudo, su and login cannot be executed, and
// /etc/sudoers is unreadable besides.
func TestLiveSeatbeltSudo(t *testing.T) {
	f := newFixture(t)
	marker := filepath.Join("/private/tmp", "deponent-sudo-"+randHex(t))
	t.Cleanup(func() { _ = exec.Command("sudo", "-n", "rm", "-f", marker).Run() })
	probe := "sudo -n true && echo SUDO-OK; sudo -n /bin/sh -c " + shq("id -u > "+marker) + " && echo SUDO-WROTE; " +
		"/usr/bin/su root -c true </dev/null && echo SU-OK; exit 0"
	control := f.run(f.none, f.spec("sudo -n true && echo SUDO-OK; exit 0"))
	if !strings.Contains(string(control.Output), "SUDO-OK") {
		skipOrFail(t, "no passwordless sudo here (the hosted macOS runner has it): %s", control.Output)
	}
	res := f.run(f.jail, f.spec(probe))
	out := string(res.Output)
	assert.NotContains(t, out, "SUDO-OK")
	assert.NotContains(t, out, "SUDO-WROTE")
	assert.NotContains(t, out, "SU-OK")
	assert.False(t, exists(marker), "root wrote outside the sandbox")
}

// TestLiveSeatbeltHomeHidden: the home is unreadable except the exposed
// toolchain in it: agents' credentials (~/.codex/auth.json, ~/.claude.json),
// application data, a runner's temp files.
func TestLiveSeatbeltHomeHidden(t *testing.T) {
	f := newFixture(t)
	secrets := map[string]string{
		filepath.Join(f.home, ".codex", "auth.json"):                        "CODEX-" + randHex(t),
		filepath.Join(f.home, ".claude.json"):                               "CLAUDE-" + randHex(t),
		filepath.Join(f.home, "Library", "Application Support", "app", "x"): "APPDATA-" + randHex(t),
		filepath.Join(f.home, "work", "_temp", "step.sh"):                   "RUNNERTEMP-" + randHex(t),
	}
	var probe []string
	for p, v := range secrets {
		writeFile(t, p, v, 0o600)
		probe = append(probe, "cat "+shq(p))
	}
	probe = append(probe, "ls -A "+shq(f.home)+" | sed 's/^/ENTRY /'", "deponent-hello", "exit 0")
	spec := f.spec(strings.Join(probe, "; "))

	control := f.run(f.none, spec)
	for _, v := range secrets {
		require.Contains(t, string(control.Output), v, "control: readable unjailed")
	}
	require.Contains(t, string(control.Output), "ENTRY .codex", "control: the home can be listed unjailed")
	res := f.run(f.jail, spec)
	for p, v := range secrets {
		assert.NotContains(t, string(res.Output), v, p)
	}
	assert.NotContains(t, string(res.Output), "ENTRY ", "the home cannot be listed")
	assert.Contains(t, string(res.Output), "hello-from-home-toolchain", "the toolchain in the home still works")
}

// TestLiveSeatbeltToolchains: sh, python3 (with multiprocessing), git, go
// and node do their ordinary work in the jail, as they do unjailed, from
// the caller's PATH and the real home (setup-python and setup-go put their
// toolchains under it on a hosted runner).
func TestLiveSeatbeltToolchains(t *testing.T) {
	for _, tool := range []string{"python3", "git", "go", "node"} {
		if _, err := exec.LookPath(tool); err != nil {
			skipOrFail(t, "%s is not on PATH: %v", tool, err)
		}
	}
	sb := resolvedTempDir(t)
	script := `set -e
python3 -c 'import multiprocessing as m, tempfile
if __name__ == "__main__":
    with m.get_context("spawn").Pool(2) as p: print("PY", sum(p.map(abs, [-1, -2])))
    with tempfile.NamedTemporaryFile() as f: print("PYTMP", f.name.startswith(__import__("os").environ["TMPDIR"]))'
git init -q repo && git -C repo -c user.name=t -c user.email=t@example.invalid commit -q --allow-empty -m first && echo "GIT $(git -C repo rev-list --count HEAD)"
printf 'package main\n\nfunc main() { println("GO-OK") }\n' > m.go && go run m.go
node -e 'console.log("NODE", require("os").cpus().length > 0, require("fs").existsSync(process.cwd()))'`
	spec := Spec{Sandbox: sb, Script: script, PATH: absolutePATH(os.Getenv("PATH"), sb), Limits: Limits{WallClock: 3 * time.Minute}}
	want := []string{"PY 3", "PYTMP True", "GIT 1", "GO-OK", "NODE true true"}

	run := func(b Backend) Result {
		ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
		defer cancel()
		res, err := b.Run(ctx, spec)
		require.NoError(t, err)
		t.Logf("%s: exit=%d killed=%q reason=%q\n%s", b.Name(), res.ExitCode, res.Killed, res.Reason, res.Output)
		return res
	}
	control := run(NewUnjailed(Options{}))
	require.Equal(t, 0, control.ExitCode)
	for _, w := range want {
		require.Contains(t, string(control.Output), w, "control")
	}
	require.NoError(t, os.RemoveAll(filepath.Join(sb, "repo")))
	res := run(liveJail(t, Options{}))
	assert.Equal(t, 0, res.ExitCode)
	for _, w := range want {
		assert.Contains(t, string(res.Output), w)
	}
}

// TestLiveSeatbeltTerminalInjection: a step that opens a terminal device
// and makes it its controlling terminal could push keystrokes into it with
// TIOCSTI. The control (unjailed) does so into a pseudo-terminal this test
// holds; the jailed step can neither open the device nor use the ioctl.
func TestLiveSeatbeltTerminalInjection(t *testing.T) {
	f := newFixture(t)
	py, err := exec.LookPath("python3")
	require.NoError(t, err)
	holder := `
import os, select, sys, tty
m, s = os.openpty()
tty.setraw(s)
print(os.ttyname(s), flush=True)
got = b""
while True:
    r, _, _ = select.select([s, sys.stdin], [], [])
    if s in r:
        got += os.read(s, 100)
    if sys.stdin in r:
        if select.select([s], [], [], 0)[0]:
            got += os.read(s, 100)
        break
print("GOT", got.decode(errors="replace"), flush=True)
`
	inject := func(ttyPath, marker string) string {
		return `python3 -c '
import fcntl, os, termios
os.setsid()
try:
    fd = os.open("` + ttyPath + `", os.O_RDWR)
    for c in b"` + marker + `":
        fcntl.ioctl(fd, termios.TIOCSTI, bytes([c]))
    print("INJECTED")
except OSError as e:
    print("BLOCKED", e)
'`
	}
	attempt := func(b Backend, marker string) (Result, string) {
		cmd := exec.Command(py, "-c", holder)
		stdin, err := cmd.StdinPipe()
		require.NoError(t, err)
		stdout, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		buf := make([]byte, 256)
		n, err := stdout.Read(buf)
		require.NoError(t, err)
		ttyPath := strings.TrimSpace(string(buf[:n]))
		require.True(t, strings.HasPrefix(ttyPath, "/dev/"), "holder printed %q", ttyPath)
		res := f.run(b, f.spec(inject(ttyPath, marker)))
		// TIOCSTI is synchronous: once the step is over, whatever it
		// injected is queued. Closing stdin makes the holder drain and report.
		stdin.Close()
		rest, _ := io.ReadAll(stdout)
		_ = cmd.Wait()
		return res, string(rest)
	}
	control := "CTRL" + strings.ToUpper(randHex(t)[:6])
	res, got := attempt(f.none, control)
	require.Contains(t, string(res.Output), "INJECTED", "control: an unjailed step injects into a terminal it makes its own")
	require.Contains(t, got, control, "control: the terminal received the injected input")

	jailed := "JAIL" + strings.ToUpper(randHex(t)[:6])
	res, got = attempt(f.jail, jailed)
	assert.NotContains(t, string(res.Output), "INJECTED")
	assert.NotContains(t, got, jailed)
}

package jail

// Live tests for the escapes of issue 11 that are Linux-specific. Each has a
// positive control: the same probe run unjailed succeeds (where the
// unprivileged account cannot do it unjailed either, the test says so and
// checks the jailed side only).

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hostKernelProbe tries every way of writing to the host kernel through
// /proc that needs no capability beyond owning the files (uid 0): it opens
// every regular file under /proc outside the per-process directories for
// writing (an open changes nothing), and writes back the value it read to
// a few global knobs (the same value: the host is not changed). It prints
// WRITABLE-OPEN n, one WROTE/BLOCKED line per knob, and the uid and
// effective capabilities it runs with.
const hostKernelProbe = `python3 - <<'EOF'
import os
skip = {"self", "thread-self"}
n, examples = 0, []
for top in sorted(os.listdir("/proc")):
    if top.isdigit() or top in skip:
        continue
    for root, dirs, files in os.walk("/proc/" + top):
        dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(root, d))]
        for name in files:
            p = os.path.join(root, name)
            try:
                fd = os.open(p, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:
                continue
            os.close(fd)
            n += 1
            if len(examples) < 5:
                examples.append(p)
    if top not in ("sys",) and os.path.isfile("/proc/" + top):
        p = "/proc/" + top
        try:
            fd = os.open(p, os.O_WRONLY | os.O_NONBLOCK)
            os.close(fd)
            n += 1
            examples.append(p)
        except OSError:
            pass
print("WRITABLE-OPEN", n, examples)
for knob in ("kernel/core_pattern", "vm/overcommit_memory", "kernel/randomize_va_space", "fs/file-max"):
    p = "/proc/sys/" + knob
    try:
        old = open(p).read()
        with open(p, "w") as f:
            f.write(old)
        print("WROTE", knob)
    except OSError as e:
        print("BLOCKED", knob, e.strerror)
status = open("/proc/self/status").read()
print("UID", os.getuid(), "CAPEFF", [l.split()[1] for l in status.splitlines() if l.startswith("CapEff")][0])
EOF`

func TestLiveHostKernelKnobsReadOnly(t *testing.T) {
	f := newFixture(t)
	control := f.run(f.none, f.spec(hostKernelProbe))
	if os.Getuid() == 0 {
		require.Contains(t, string(control.Output), "WROTE kernel/core_pattern",
			"control: root unjailed can write host kernel knobs (the same value was written back)")
		require.NotContains(t, string(control.Output), "WRITABLE-OPEN 0 ", "control: root unjailed opens /proc files for writing")
	} else {
		t.Logf("uid %d cannot write host knobs unjailed either; checking the jailed side only", os.Getuid())
	}

	res := f.run(f.jail, f.spec(hostKernelProbe))
	out := string(res.Output)
	require.Equal(t, 0, res.ExitCode, "the probe itself must run")
	assert.Contains(t, out, "WRITABLE-OPEN 0 ", "jailed code opened host /proc files for writing")
	assert.NotContains(t, out, "WROTE ", "jailed code wrote a host kernel knob")
	assert.Contains(t, out, "CAPEFF 0000000000000000", "jailed code holds capabilities")
	assert.NotContains(t, out, "UID 0 ", "jailed code runs as uid 0 inside its namespace")
	if os.Getuid() == 0 {
		assert.Contains(t, out, "UID 65534 ", "a root runner's jailed code runs as the unprivileged jail uid")
	}
}

// TestLiveJailRootAndDevReadOnly: the jail's own root (a tmpfs bwrap builds)
// and /dev hold nothing the step may write; the capped tmpfs /tmp and
// /dev/shm and the sandbox stay writable. The control is the sandbox write.
func TestLiveJailRootAndDevReadOnly(t *testing.T) {
	f := newFixture(t)
	probe := `for p in /planted /dev/planted /usr/planted /etc/planted "$HOME/ok" "$TMPDIR/ok" /tmp/ok /dev/shm/ok ./ok; do
  if (echo x > "$p") 2>/dev/null; then echo "WROTE $p"; else echo "BLOCKED $p"; fi
done`
	res := f.run(f.jail, f.spec(probe))
	out := string(res.Output)
	for _, p := range []string{"/planted", "/dev/planted", "/usr/planted", "/etc/planted"} {
		assert.Contains(t, out, "BLOCKED "+p)
	}
	assert.Contains(t, out, "WROTE ./ok", "control: the sandbox is writable")
	assert.Contains(t, out, "WROTE /tmp/ok")
	assert.Contains(t, out, "WROTE /dev/shm/ok")
	assert.Equal(t, 4, strings.Count(out, "BLOCKED "), "only the four host paths are blocked: HOME and TMPDIR stay writable")
}

// TestLiveCleanupNeverFollowsSymlinks: bwrap creates mount points in the
// sandbox for absent protected paths, and the jail removes them afterwards.
// A step that renames the created parent away and plants a symlink in its
// place must not steer that removal outside the sandbox.
func TestLiveCleanupNeverFollowsSymlinks(t *testing.T) {
	f := newFixture(t)
	victim := filepath.Join(f.outside, "victim")
	mustMkdir(t, filepath.Join(victim, "workflows")) // empty: what the removal would delete
	mustMkdir(t, filepath.Join(victim, "actions"))
	spec := f.spec(`mv .github moved && ln -s ` + shq(victim) + ` .github && echo PLANTED`)
	spec.Protected = []string{filepath.Join(f.sandbox, ".github", "workflows"), filepath.Join(f.sandbox, ".github", "actions")}
	res := f.run(f.jail, spec)
	require.Contains(t, string(res.Output), "PLANTED", "the probe must have renamed the mount points' parent")
	target, err := os.Readlink(filepath.Join(f.sandbox, ".github"))
	require.NoError(t, err, "the planted symlink is in place after the run")
	require.Equal(t, victim, target)
	assert.DirExists(t, filepath.Join(victim, "workflows"), "cleanup followed the planted symlink and removed a directory outside the sandbox")
	assert.DirExists(t, filepath.Join(victim, "actions"))
}

// TestLiveGitConfigCredentialsHidden: every git config of every .git in the
// sandbox reads without credentials in the jail (checkout's extraheader,
// credential helpers, a token in a remote URL), while git still reads the
// rest; the files on the host are untouched.
func TestLiveGitConfigCredentialsHidden(t *testing.T) {
	f := newFixture(t)
	sb := f.sandbox
	token := "ghs_" + randHex(t)
	writeFile(t, filepath.Join(sb, ".git", "HEAD"), "ref: refs/heads/main\n", 0o644)
	top := "[core]\n\trepositoryformatversion = 0\n[remote \"origin\"]\n\turl = https://github.com/o/r\n" +
		"[http \"https://github.com/\"]\n\textraheader = AUTHORIZATION: basic " + token + "-A\n"
	writeFile(t, filepath.Join(sb, ".git", "config"), top, 0o644)
	writeFile(t, filepath.Join(sb, ".git", "modules", "sub", "HEAD"), "ref: refs/heads/main\n", 0o644)
	writeFile(t, filepath.Join(sb, ".git", "modules", "sub", "config"), "[credential]\n\thelper = store "+token+"-B\n[core]\n\tbare = false\n", 0o644)
	writeFile(t, filepath.Join(sb, "sub", ".git"), "gitdir: ../.git/modules/sub\n", 0o644)
	writeFile(t, filepath.Join(sb, "inner", ".git", "HEAD"), "ref: refs/heads/main\n", 0o644)
	writeFile(t, filepath.Join(sb, "inner", ".git", "config"), "[remote \"o\"]\n\turl = https://x-access-token:"+token+"-C@github.com/o/r\n", 0o644)
	probe := `cat .git/config .git/modules/sub/config inner/.git/config; echo; git config --file .git/config --list 2>&1; echo END`

	control := f.run(f.none, f.spec(probe))
	for _, s := range []string{"-A", "-B", "-C"} {
		require.Contains(t, string(control.Output), token+s, "control: unjailed code reads the credential")
	}
	res := f.run(f.jail, f.spec(probe))
	out := string(res.Output)
	assert.NotContains(t, out, token, "a credential in a git config is readable in the jail")
	assert.Contains(t, out, "remote.origin.url=https://github.com/o/r", "git still reads the sanitized config")
	assert.Contains(t, out, "url = \"https://github.com/o/r\"", "the token is cut out of the nested repository's URL")
	assert.Contains(t, out, "END")
	assert.Empty(t, res.Tampered)
	data, err := os.ReadFile(filepath.Join(sb, ".git", "config"))
	require.NoError(t, err)
	assert.Equal(t, top, string(data), "the host's file is untouched")
}

// TestLiveRunnerDirectoriesHidden: a self-hosted runner's layout under the
// home, with its tool cache and a tool in RUNNER_TEMP on PATH. The tools
// run in the jail; the runner's credentials, its file-command files and
// other jobs' checkouts stay unreadable (the jail exposes the PATH
// directories' prefixes, never their siblings or the runner's own
// directories).
func TestLiveRunnerDirectoriesHidden(t *testing.T) {
	f := newFixture(t)
	runner := filepath.Join(f.home, "actions-runner")
	work := filepath.Join(runner, "_work")
	temp := filepath.Join(work, "_temp")
	secrets := map[string]string{
		filepath.Join(runner, ".credentials"):                          "RUNNER-CRED-" + randHex(t),
		filepath.Join(runner, ".credentials_rsaparams"):                "RUNNER-RSA-" + randHex(t),
		filepath.Join(temp, "_runner_file_commands", "set_env_abc"):    "FILE-COMMAND-" + randHex(t),
		filepath.Join(work, "other-repo", "other-repo", ".git", "cfg"): "OTHER-JOB-" + randHex(t),
	}
	for p, v := range secrets {
		writeFile(t, p, v, 0o600)
	}
	tool := filepath.Join(work, "_tool", "mytool", "1.0", "x64")
	writeFile(t, filepath.Join(tool, "bin", "mytool"), "#!/bin/sh\necho \"mytool ok $(cat "+shq(filepath.Join(tool, "share", "data"))+")\"\n", 0o755)
	writeFile(t, filepath.Join(tool, "share", "data"), "with-its-data", 0o644)
	writeFile(t, filepath.Join(temp, "setup-x", "bin", "tmptool"), "#!/bin/sh\necho tmptool ok\n", 0o755)
	t.Setenv("RUNNER_TEMP", temp)
	t.Setenv("GITHUB_ENV", filepath.Join(temp, "_runner_file_commands", "set_env_abc"))

	var probe strings.Builder
	for p := range secrets {
		probe.WriteString("cat " + shq(p) + " 2>/dev/null; echo; ")
	}
	probe.WriteString("mytool; tmptool; exit 0")
	spec := f.spec(probe.String())
	spec.PATH = filepath.Join(tool, "bin") + ":" + filepath.Join(temp, "setup-x", "bin") + ":" + spec.PATH

	control := f.run(f.none, spec)
	for _, v := range secrets {
		require.Contains(t, string(control.Output), v, "control: unjailed code reads the runner's files")
	}
	res := f.run(f.jail, spec)
	out := string(res.Output)
	for p, v := range secrets {
		assert.NotContains(t, out, v, "%s is readable in the jail", p)
	}
	assert.Contains(t, out, "mytool ok with-its-data", "a tool-cache program runs with its prefix")
	assert.Contains(t, out, "tmptool ok", "a tool installed under RUNNER_TEMP runs")
}

// TestLiveCargoConfigToken: ~/.cargo/config.toml is cargo's configuration;
// when it carries a registry token it is hidden in the jail, otherwise
// cargo keeps it.
func TestLiveCargoConfigToken(t *testing.T) {
	f := newFixture(t)
	token := "cio" + randHex(t)
	writeFile(t, filepath.Join(f.home, ".cargo", "bin", "cargo-hi"), "#!/bin/sh\necho cargo-hi\n", 0o755)
	cfg := filepath.Join(f.home, ".cargo", "config.toml")
	writeFile(t, cfg, "[registry]\ntoken = \""+token+"\"\n", 0o600)
	spec := f.spec("cat " + shq(cfg) + "; cargo-hi")
	spec.PATH = filepath.Join(f.home, ".cargo", "bin") + ":" + spec.PATH
	control := f.run(f.none, spec)
	require.Contains(t, string(control.Output), token)
	res := f.run(f.jail, spec)
	assert.NotContains(t, string(res.Output), token)
	assert.Contains(t, string(res.Output), "cargo-hi")

	writeFile(t, cfg, "[build]\njobs = 2\n", 0o600)
	res = f.run(f.jail, spec)
	assert.Contains(t, string(res.Output), "jobs = 2", "a config without a token stays visible")
}

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

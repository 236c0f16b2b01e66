package jail

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCgroupModes: "off" and an unusable delegated directory give no
// cgroup and say why (the runner then records rss-poll); the reason names
// the directory.
func TestCgroupModes(t *testing.T) {
	l, err := Limits{}.withDefaults()
	require.NoError(t, err)
	cg, why := newStepCgroup(CgroupOff, newToken(), l)
	assert.Nil(t, cg)
	assert.Contains(t, why, "Options.Cgroup=off")

	cg, why = newStepCgroup("relative/dir", newToken(), l)
	assert.Nil(t, cg)
	assert.Contains(t, why, "neither")

	fake := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(fake, "cgroup.controllers"), []byte("cpu io\n"), 0o644))
	cg, why = newStepCgroup(fake, newToken(), l)
	assert.Nil(t, cg)
	assert.Contains(t, why, fake)
	assert.Contains(t, why, "memory controller is not available")
	entries, _ := os.ReadDir(fake)
	assert.Len(t, entries, 1, "nothing was created in a directory that cannot hold the step")
}

func TestReadKeyed(t *testing.T) {
	f := filepath.Join(t.TempDir(), "memory.events")
	require.NoError(t, os.WriteFile(f, []byte("low 0\nhigh 0\nmax 12\noom 2\noom_kill 1\noom_group_kill 1\n"), 0o644))
	n, err := readKeyed(f, "oom_kill")
	require.NoError(t, err)
	assert.EqualValues(t, 1, n)
	_, err = readKeyed(f, "absent")
	assert.Error(t, err, "a counter that is not there is an error, never a zero")
}

func TestCgroupWrapKeepsArgv(t *testing.T) {
	cg := &stepCgroup{version: 1, dir: "/cg/mem/x", pidsDir: "/cg/pids/x"}
	argv := cg.wrap([]string{"/usr/bin/bwrap", "--", "a b"})
	assert.Equal(t, []string{"/bin/sh", "-c"}, argv[:2])
	assert.Equal(t, []string{"deponent-cgroup", "/cg/mem/x/cgroup.procs", "/cg/pids/x/cgroup.procs", "--", "/usr/bin/bwrap", "--", "a b"}, argv[3:])
}

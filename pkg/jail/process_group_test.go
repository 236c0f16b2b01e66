//go:build linux || darwin

package jail

import (
	"fmt"
	"regexp"
	"strconv"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestStepLeadsItsOwnProcessGroup: the step's first process leads a
// process group of its own, apart from the caller's, so the watchdog and
// the final sweep can kill the whole group (kill(-pgid)) without touching
// the caller, and a step cannot hide among the caller's processes. Checked
// directly, on the unjailed backend whose process is the step's shell
// itself (the jails start theirs the same way, through the same runner).
func TestStepLeadsItsOwnProcessGroup(t *testing.T) {
	f := newFixture(t)
	// The shell reports its own pid and the group it is in; python3 reads
	// the group (sh has no builtin for it).
	probe := `python3 -c 'import os, sys; p = int(sys.argv[1]); print("STEP", p, os.getpgid(p))' $$`
	res := f.run(f.none, f.spec(probe))
	require.Equal(t, 0, res.ExitCode, "%s", res.Output)
	m := regexp.MustCompile(`STEP (\d+) (\d+)`).FindStringSubmatch(string(res.Output))
	require.NotNil(t, m, "%s", res.Output)
	pid, _ := strconv.Atoi(m[1])
	pgid, _ := strconv.Atoi(m[2])
	require.Equal(t, pid, pgid, "the step's shell leads its own process group")
	require.NotEqual(t, syscall.Getpgrp(), pgid, "the step is not in the caller's process group")

	// Control: the same probe from a plain child of the test process
	// reports the test's group, so the probe can tell the difference.
	out := plainExec(t, f.sandbox, probe, nil)
	require.Contains(t, out, fmt.Sprintf(" %d\n", syscall.Getpgrp()), "control: a plain child is in the caller's group")
}

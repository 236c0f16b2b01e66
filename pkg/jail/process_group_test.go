//go:build linux || darwin

package jail

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// pgidProbe prints the pid of the step's shell and the process group it
// is in (from /proc on Linux, ps elsewhere; sh has no builtin for it).
const pgidProbe = `if [ -r /proc/$$/stat ]; then read -r pid comm state ppid pgrp rest < /proc/$$/stat; else pgrp=$(ps -o pgid= -p $$); fi; echo "STEP $$ $pgrp"`

// TestStepLeadsItsOwnProcessGroup: the step's first process leads a
// process group of its own, apart from the caller's, so the watchdog and
// the final sweep can kill the whole group (kill(-pgid)) without touching
// the caller, and a step cannot hide among the caller's processes. Checked
// directly, on the unjailed backend, whose first process is the step's
// shell itself (the jails start theirs through the same runner). It needs
// no sandbox, so it runs wherever the tests do.
func TestStepLeadsItsOwnProcessGroup(t *testing.T) {
	b := NewUnjailed(Options{RealHome: resolvedTempDir(t)})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := b.Run(ctx, Spec{Sandbox: resolvedTempDir(t), Script: pgidProbe, PATH: "/usr/bin:/bin",
		Limits: Limits{WallClock: 30 * time.Second}})
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode, "%s", res.Output)
	m := regexp.MustCompile(`STEP (\d+) +(\d+)`).FindStringSubmatch(string(res.Output))
	require.NotNil(t, m, "%s", res.Output)
	pid, _ := strconv.Atoi(m[1])
	pgid, _ := strconv.Atoi(m[2])
	require.Equal(t, pid, pgid, "the step's shell leads its own process group")
	require.NotEqual(t, syscall.Getpgrp(), pgid, "the step is not in the caller's process group")

	// Control: the same probe from a plain child of the test process
	// reports the test's group, so the probe can tell the difference.
	out := plainExec(t, t.TempDir(), pgidProbe, nil)
	m = regexp.MustCompile(`STEP (\d+) +(\d+)`).FindStringSubmatch(out)
	require.NotNil(t, m, "%s", out)
	require.Equal(t, fmt.Sprint(syscall.Getpgrp()), m[2], "control: a plain child is in the caller's group")
}

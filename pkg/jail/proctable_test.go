package jail

import (
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseProcStatOddCommandNames(t *testing.T) {
	// comm may contain spaces and parentheses.
	line := "4242 (evil) (name) x) S 17 4242 4242 0 -1 4194560 100 0 0 0 5 6 0 0 20 0 1 0 987654 123456789 2500 18446744073709551615\n"
	p, err := parseProcStat([]byte(line), 4096)
	require.NoError(t, err)
	assert.Equal(t, 4242, p.pid)
	assert.Equal(t, 17, p.ppid)
	assert.Equal(t, 4242, p.pgid)
	assert.EqualValues(t, 987654, p.start)
	assert.EqualValues(t, 2500*4096, p.rss)
	assert.False(t, p.zombie)

	z, err := parseProcStat([]byte("7 (sh) Z 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5 0 0"), 4096)
	require.NoError(t, err)
	assert.True(t, z.zombie)

	_, err = parseProcStat([]byte("garbage"), 4096)
	assert.Error(t, err)
}

func TestParsePS(t *testing.T) {
	out := "    1     0     1  12000 Ss   /sbin/launchd\n" +
		"  500     1   500   2048 S    /bin/sh -c x PATH=/usr/bin DEPONENT_JAIL_RUN=abc HOME=/h\n" +
		"  501   500   500  1024 Z+   (sleep)\n"
	tab, err := parsePS([]byte(out), "abc")
	require.NoError(t, err)
	require.Len(t, tab, 3)
	assert.EqualValues(t, 2048<<10, tab[500].rss)
	assert.True(t, tab[500].hasToken)
	assert.False(t, tab[1].hasToken)
	assert.True(t, tab[501].zombie)

	_, err = parsePS([]byte("  x 1 1 1 S cmd\n"), "")
	assert.Error(t, err)
}

func pids(ps []procInfo) []int {
	var out []int
	for _, p := range ps {
		out = append(out, p.pid)
	}
	sort.Ints(out)
	return out
}

func TestTrackerFollowsTreeGroupTokenAndReparenting(t *testing.T) {
	tab := procTable{
		1:   {pid: 1, ppid: 0, pgid: 1, start: 1},
		100: {pid: 100, ppid: 1, pgid: 100, start: 50, rss: 10}, // root
		101: {pid: 101, ppid: 100, pgid: 100, start: 51, rss: 20},
		102: {pid: 102, ppid: 101, pgid: 102, start: 52, rss: 30},      // grandchild, own group
		103: {pid: 103, ppid: 1, pgid: 100, start: 53, rss: 40},        // orphan still in the group
		104: {pid: 104, ppid: 1, pgid: 104, start: 54, hasToken: true}, // setsid daemon, found by token
		105: {pid: 105, ppid: 1, pgid: 105, start: 55},                 // unrelated
		106: {pid: 106, ppid: 101, pgid: 100, start: 56, zombie: true}, // zombie: not counted
		107: {pid: 107, ppid: 1, pgid: 100, start: 10},                 // older than root: a reused group id
		108: {pid: 108, ppid: 1, pgid: 108, start: 9, hasToken: true},  // token but older than the root: ignored
		109: {pid: 109, ppid: 104, pgid: 104, start: 60, rss: 5},       // daemon's child
	}
	tr := newTracker(100, 100)
	tr.minStart = 50
	m := tr.members(tab)
	assert.Equal(t, []int{100, 101, 102, 103, 104, 109}, pids(m))
	assert.EqualValues(t, 10+20+30+40+5, rssSum(m))

	// The root exits; 102's parent 101 exits and 102 is reparented to 1 in
	// a new group without the token: it stays tracked because it was seen.
	tab2 := procTable{
		1:   tab[1],
		102: {pid: 102, ppid: 1, pgid: 102, start: 52},
		105: tab[105],
		// pid 101 reused by an unrelated process: different start time.
		101: {pid: 101, ppid: 1, pgid: 101, start: 99},
	}
	tr.root = 0
	assert.Equal(t, []int{102}, pids(tr.members(tab2)))
}

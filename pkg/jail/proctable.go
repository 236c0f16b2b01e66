package jail

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// procInfo is one row of the host's process table.
type procInfo struct {
	pid, ppid, pgid int
	rss             int64  // resident bytes
	start           uint64 // start time in an OS-specific unit; 0 when unknown. Guards against pid reuse.
	zombie          bool
	hasToken        bool   // environment carries this run's token (only when asked for)
	cpuTicks        uint64 // user+system CPU in clock ticks (Linux /proc only; 0 when unknown)
	threads         int    // tasks of the process (Linux /proc only; 1 when unknown)
}

// procTable maps pid to its row.
type procTable map[int]procInfo

// tracker follows the process tree of one step across samples. A process
// joins when it descends from the root, shares its process group, or was a
// member in an earlier sample (so a daemon stays tracked after its parent
// exits and it is reparented).
type tracker struct {
	root, pgid int
	seen       map[int]uint64 // pid → start time when first seen
	// minStart is the root's start time: a process matched only by group
	// or token must not be older (guards against a reused group id).
	minStart uint64
}

func newTracker(root, pgid int) *tracker {
	return &tracker{root: root, pgid: pgid, seen: map[int]uint64{}}
}

// members returns the live (non-zombie) processes of the step in tab, and
// remembers them. Processes carrying the run token count as members too.
func (t *tracker) members(tab procTable) []procInfo {
	in := map[int]bool{}
	var queue []int
	add := func(pid int) {
		if !in[pid] {
			in[pid] = true
			queue = append(queue, pid)
		}
	}
	if _, ok := tab[t.root]; ok {
		add(t.root)
	}
	children := map[int][]int{}
	for pid, p := range tab {
		children[p.ppid] = append(children[p.ppid], pid)
		if ((t.pgid > 0 && p.pgid == t.pgid) || p.hasToken) && p.start >= t.minStart {
			add(pid)
		}
		if st, ok := t.seen[pid]; ok && st == p.start {
			add(pid)
		}
	}
	for i := 0; i < len(queue); i++ {
		for _, c := range children[queue[i]] {
			add(c)
		}
	}
	out := make([]procInfo, 0, len(in))
	for pid := range in {
		p := tab[pid]
		if _, ok := t.seen[pid]; !ok {
			t.seen[pid] = p.start
		}
		if !p.zombie {
			out = append(out, p)
		}
	}
	return out
}

// rssSum adds up resident memory.
func rssSum(ps []procInfo) int64 {
	var n int64
	for _, p := range ps {
		n += p.rss
	}
	return n
}

// parseProcStat parses /proc/PID/stat. The command name may contain spaces
// and parentheses, so fields are counted from the last ')'.
func parseProcStat(data []byte, pageSize int64) (procInfo, error) {
	open := bytes.IndexByte(data, '(')
	closing := bytes.LastIndexByte(data, ')')
	if open < 0 || closing < open {
		return procInfo{}, fmt.Errorf("malformed stat %q", data)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data[:open])))
	if err != nil {
		return procInfo{}, err
	}
	// After ')': state(3) ppid(4) pgrp(5) ... starttime(22) vsize(23) rss(24).
	f := strings.Fields(string(data[closing+1:]))
	if len(f) < 22 {
		return procInfo{}, fmt.Errorf("short stat for pid %d", pid)
	}
	p := procInfo{pid: pid, zombie: f[0] == "Z" || f[0] == "X"}
	if p.ppid, err = strconv.Atoi(f[1]); err != nil {
		return p, err
	}
	if p.pgid, err = strconv.Atoi(f[2]); err != nil {
		return p, err
	}
	if p.start, err = strconv.ParseUint(f[19], 10, 64); err != nil {
		return p, err
	}
	pages, err := strconv.ParseInt(f[21], 10, 64)
	if err != nil {
		return p, err
	}
	p.rss = pages * pageSize
	utime, err1 := strconv.ParseUint(f[11], 10, 64)
	stime, err2 := strconv.ParseUint(f[12], 10, 64)
	threads, err3 := strconv.Atoi(f[17])
	if err1 != nil || err2 != nil || err3 != nil {
		return p, fmt.Errorf("bad cpu or thread fields in stat for pid %d", pid)
	}
	p.cpuTicks, p.threads = utime+stime, threads
	return p, nil
}

// parsePS parses `ps -axww -E -o pid=,ppid=,pgid=,rss=,stat=,command=`
// (rss in KiB; the command column carries the environment after the
// arguments, which is where the run token is looked for).
func parsePS(out []byte, token string) (procTable, error) {
	tab := procTable{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		line := sc.Text()
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		var p procInfo
		var err error
		if p.pid, err = strconv.Atoi(f[0]); err != nil {
			return nil, fmt.Errorf("ps: bad pid in %q", line)
		}
		if p.ppid, err = strconv.Atoi(f[1]); err != nil {
			return nil, fmt.Errorf("ps: bad ppid in %q", line)
		}
		if p.pgid, err = strconv.Atoi(f[2]); err != nil {
			return nil, fmt.Errorf("ps: bad pgid in %q", line)
		}
		kib, err := strconv.ParseInt(f[3], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("ps: bad rss in %q", line)
		}
		p.rss = kib << 10
		p.threads = 1
		p.zombie = strings.HasPrefix(f[4], "Z")
		p.hasToken = token != "" && strings.Contains(line, runTokenVar+"="+token)
		tab[p.pid] = p
	}
	return tab, sc.Err()
}

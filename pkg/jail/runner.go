//go:build linux || darwin

package jail

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// launch is what a backend contributes to a run: the full argv (argv[0]
// absolute) and notes for Result.Reason.
type launch struct {
	backend  string
	argv     []string
	unjailed bool
	notes    []string
	// pidNamespace: every process of the step lives in a pid namespace that
	// dies with the launcher (bwrap), so none can escape the process tree
	// and the sweep need not look for the run token.
	pidNamespace bool
	// after runs once every process of the step is gone, before the
	// tripwire looks (bwrap removes the mount points it created).
	after func()
	// files are passed to the launcher after the started marker, as
	// descriptors startedFD+1, ... (bwrap's seccomp filter); closed here
	// once it started.
	files []*os.File
}

// Memory and task guard names (Result.MemoryGuard, Result.TaskGuard).
const (
	GuardCgroup  = "cgroup"
	GuardRSSPoll = "rss-poll"
	GuardRlimit  = "rlimit"
	GuardPoll    = "poll"
)

// diskPollInterval is how often the disk guard looks: statfs is one system
// call, and a fast writer (fallocate) can add gigabytes per second.
const diskPollInterval = 10 * time.Millisecond

// maxFdsChecked bounds the descriptors the watchdog looks at per poll.
const maxFdsChecked = 4096

// livePollInterval is how often new output is copied to Spec.Live.
const livePollInterval = 100 * time.Millisecond

// execute runs one prepared step under build's launcher: private dirs,
// rebuilt environment, output to a file, a cgroup or the polling guards,
// watchdogs, a final sweep of every process of the step, the tripwire, and
// the bounded result.
func execute(ctx context.Context, p *prepared, opts Options, build func(*runDir) (launch, error)) (Result, error) {
	started := time.Now()
	rd, err := newRunDir(tempRoot(opts))
	if err != nil {
		return Result{}, err
	}
	defer rd.remove()
	token := newToken()
	// The memory and task guard: a cgroup where one can be made.
	cg, cgWhy := newStepCgroup(opts.Cgroup, token, p.limits)
	if cg != nil {
		defer cg.remove()
	} else if runtime.GOOS == "linux" && os.Geteuid() != 0 {
		// The bwrap jail's own user namespace counts only its own tasks.
		rd.nproc = p.limits.Tasks
	}
	l, err := build(rd)
	defer func() {
		for _, f := range l.files {
			f.Close()
		}
	}()
	if err != nil {
		// A launcher that cannot express this step (a path no profile
		// can carry) is a refusal, recorded as no-jail, not a fault.
		var rf *refusal
		if errors.As(err, &rf) {
			return refuse(l.backend, rf.reason), nil
		}
		return Result{}, err
	}
	if err := ctx.Err(); err != nil {
		res := refuse(l.backend, "the caller's context ended before the step started: "+err.Error())
		res.Killed = KilledCanceled
		return res, nil
	}
	out, err := os.OpenFile(rd.out, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|os.O_APPEND, 0o600)
	if err != nil {
		return Result{}, fmt.Errorf("jail: output file: %w", err)
	}
	outPath := rd.out
	marker, err := os.OpenFile(rd.started, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		out.Close()
		return Result{}, fmt.Errorf("jail: started marker: %w", err)
	}
	closeInheritedOnExec()
	disk := newDiskGuard([]string{p.spec.Sandbox, rd.root}, int64(p.limits.DiskMB)<<20)
	env := buildEnv(os.Environ(), p.spec.PATH, rd.home, rd.tmp, token, p.spec.Env)
	newCmd := func(argv []string, clone bool) *exec.Cmd {
		attr := sysProcAttr()
		if clone {
			withCgroupFD(attr, cg.cgroupFD())
		}
		return &exec.Cmd{Path: argv[0], Args: argv, Dir: p.spec.Sandbox, Env: env,
			Stdout: out, Stderr: out, // one file for both: interleaved, and never a pipe
			ExtraFiles: append([]*os.File{marker}, l.files...), SysProcAttr: attr}
	}
	var cmd *exec.Cmd
	switch {
	case cg == nil:
		cmd = newCmd(l.argv, false)
		err = cmd.Start()
	case cg.placeByClone():
		cmd = newCmd(l.argv, true)
		if err = cmd.Start(); err != nil {
			// No clone3 here (old kernel, seccomp): the wrapper moves itself.
			cmd = newCmd(cg.wrap(l.argv), false)
			err = cmd.Start()
		}
	case cg.placeByThread():
		cmd = newCmd(l.argv, false)
		if err = cg.startInside(cmd.Start); err != nil && cmd.Process != nil {
			// Started, but the starting thread is stuck in the step's
			// cgroup: stop the step rather than run it half-placed.
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			out.Close()
			marker.Close()
			return Result{}, err
		}
		if err != nil {
			// The thread could not join the cgroups: the wrapper moves the
			// child itself.
			cmd = newCmd(cg.wrap(l.argv), false)
			err = cmd.Start()
		}
	default:
		cmd = newCmd(cg.wrap(l.argv), false)
		err = cmd.Start()
	}
	out.Close() // the child holds its own descriptors
	marker.Close()
	if err != nil {
		return Result{}, fmt.Errorf("jail: start %s: %w", l.argv[0], err)
	}
	pid := cmd.Process.Pid
	tr := newTracker(pid, pid) // Setpgid: the child leads its own group
	tr.minStart = startTimeOf(pid)
	w := &watchdog{ctx: ctx, cmd: cmd, tr: tr, cg: cg, disk: disk, limits: p.limits, interval: opts.pollInterval(),
		started: time.Now(), stop: make(chan struct{}), finished: make(chan struct{}), seenAtCap: map[string]bool{}}
	go w.loop()
	lv := startLive(p.spec.Live, p.spec.LiveBytes, outPath)
	waitErr := cmd.Wait()
	close(w.stop)
	<-w.finished
	tr.root = 0 // reaped: its pid may be reused from here on
	var sweepErr error
	switch {
	case cg != nil:
		_ = syscall.Kill(-tr.pgid, syscall.SIGKILL)
		_, sweepErr = cg.killAll()
	case l.pidNamespace:
		_, sweepErr = sweep(tr, "")
	default:
		_, sweepErr = sweep(tr, token)
	}
	lv.finish()
	if l.after != nil {
		l.after()
	}

	res := Result{Backend: l.backend, Unjailed: l.unjailed, Duration: time.Since(started),
		MemoryGuard: GuardRSSPoll, TaskGuard: GuardPoll}
	switch {
	case cg != nil:
		res.MemoryGuard, res.TaskGuard = GuardCgroup, GuardCgroup
	case rd.nproc > 0 && l.pidNamespace:
		res.TaskGuard = GuardRlimit
	}
	res.ExitCode, res.Killed, res.Reason = classify(cmd.ProcessState, waitErr, w.killed, w.reason, p.limits)
	notes := append(append([]string(nil), l.notes...), p.notes...)
	if cg == nil {
		notes = append(notes, "memory guard: resident-memory polling ("+cgWhy+")")
	}
	if lv.err != nil {
		notes = append(notes, "live output stopped: "+lv.err.Error())
	}
	if len(notes) > 0 {
		res.Reason = joinReason(res.Reason, strings.Join(notes, "; "))
	}
	res.Output, res.OutputSHA256, res.OutputBytes, err = readOutput(outPath, p.tail)
	if err != nil {
		return res, err
	}
	if res.Killed == "" && !reachedScript(rd.started) {
		// Fail closed: the jail (or the limits) could not be set up, so the
		// script never ran; its "exit status" would be the launcher's.
		res.Reason = joinReason(fmt.Sprintf("%s could not set up the jail (exit status %d): %s",
			l.backend, res.ExitCode, strings.TrimSpace(string(lastLines(res.Output, 5)))), res.Reason)
		res.ExitCode, res.Killed = -1, KilledNoJail
		res.MemoryGuard, res.TaskGuard = "", ""
		return res, sweepErr
	}
	// Caps the step hit and then ended by itself (or was killed for by the
	// kernel before a poll saw it): the kill is still named.
	after := endOfStepChecks(p, rd, cg, disk, w, res.OutputBytes, res.ExitCode != 0)
	if res.Killed == "" && after.killed != "" {
		res.Reason = joinReason(fmt.Sprintf("%s (the command's exit status was %d)", after.reason, res.ExitCode), res.Reason)
		res.ExitCode, res.Killed = -1, after.killed
	}
	res.Tampered, res.Reason = tripwireResult(after.tripwire, after.tripErr, res.Reason)
	if p.spec.OutputFile != "" {
		if err := publishOutput(outPath, p.spec.OutputFile, res.OutputSHA256); err != nil {
			return res, err
		}
	}
	// A step whose processes could not all be killed breaks the contract:
	// the Result is still returned, with the error, for the caller to record.
	return res, sweepErr
}

// publishOutput copies the finished output to final: into a file beside
// it, checked against the hash the Result carries, synced, then renamed
// into place, so final is never half-written and always what the ledger
// records.
func publishOutput(src, final, wantSHA string) error {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("jail: output file: %w", err)
	}
	defer in.Close()
	tmp, err := os.CreateTemp(filepath.Dir(final), "."+filepath.Base(final)+".part-*")
	if err != nil {
		return fmt.Errorf("jail: output file %s: %w", final, err)
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	h := sha256.New()
	if _, err := io.Copy(io.MultiWriter(tmp, h), in); err != nil {
		return fmt.Errorf("jail: output file %s: %w", final, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != wantSHA {
		return fmt.Errorf("jail: output file %s: the output changed while it was kept (sha256 %s, recorded %s)", final, got, wantSHA)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("jail: output file %s: %w", final, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("jail: output file %s: %w", final, err)
	}
	if err := os.Rename(tmp.Name(), final); err != nil {
		return fmt.Errorf("jail: output file %s: %w", final, err)
	}
	done = true
	return nil
}

// endChecks is what endOfStepChecks found.
type endChecks struct {
	killed, reason string
	tripwire       []tamper
	tripErr        error
}

// endOfStepChecks runs once the step is over: the memory and task events of
// the cgroup (a kill by the kernel the last poll did not see), the disk use,
// files left at the file-size cap, and the tripwire.
func endOfStepChecks(p *prepared, rd *runDir, cg *stepCgroup, disk *diskGuard, w *watchdog, outBytes int64, failed bool) endChecks {
	var e endChecks
	capBytes := int64(p.limits.FileSizeMB) << 20
	// Files past the cap are looked for only when the step failed: a write
	// the cap stopped makes the program fail (Python: OSError, exit 1).
	var probe *sizeProbe
	if failed {
		probe = &sizeProbe{over: capBytes, since: w.started}
	}
	if p.before != nil {
		after, err := takeSnapshotProbe(p.spec.Sandbox, p.before.roots, probe)
		if err != nil {
			e.tripErr = err
		} else {
			e.tripwire = diffSnapshots(p.before, after)
		}
	}
	if probe == nil {
		probe = &sizeProbe{}
	} else {
		probe.walk(rd.tmp)
		probe.walk(rd.home)
	}
	for path := range w.seenAtCap {
		if fi, err := os.Stat(path); err == nil && fi.Size() > capBytes {
			probe.found = append(probe.found, path)
		}
	}
	if cg != nil {
		if ev, err := cg.events(); err == nil {
			switch {
			case ev.oomKills > 0:
				e.killed, e.reason = fmt.Sprintf("memory>%dMB", p.limits.MemoryMB),
					fmt.Sprintf("the kernel ended %d process(es) at the step's %d MiB memory limit", ev.oomKills, p.limits.MemoryMB)
				return e
			case ev.pidsMax > 0:
				e.killed, e.reason = fmt.Sprintf("pids>%d", p.limits.Tasks),
					fmt.Sprintf("the step reached its %d-task limit (%d fork(s) refused)", p.limits.Tasks, ev.pidsMax)
				return e
			}
		}
	}
	if grown, over := disk.over(); over {
		e.killed, e.reason = diskKill(disk, grown, p.limits.DiskMB)
		return e
	}
	if outBytes > capBytes {
		e.killed, e.reason = fmt.Sprintf("fsize>%dMB", p.limits.FileSizeMB),
			fmt.Sprintf("the output grew past the %d MiB file-size cap and was cut there", p.limits.FileSizeMB)
		return e
	}
	if len(probe.found) > 0 {
		e.killed, e.reason = fmt.Sprintf("fsize>%dMB", p.limits.FileSizeMB),
			fmt.Sprintf("the step wrote a file past the %d MiB file-size cap and was stopped there (%s)",
				p.limits.FileSizeMB, strings.TrimPrefix(probe.found[0], p.spec.Sandbox+"/"))
	}
	return e
}

// tripwireResult renders the tripwire's verdict. A protected set that
// cannot be read after the step counts as tampered (fail closed).
func tripwireResult(ts []tamper, err error, reason string) ([]string, string) {
	if err != nil {
		return []string{"."}, joinReason(reason, "TAMPERED: the protected set could not be checked after the step: "+err.Error())
	}
	if len(ts) == 0 {
		return nil, reason
	}
	return tamperedPaths(ts), joinReason(reason, tamperedReason(ts))
}

// reachedScript reports whether the prelude wrote its started marker.
func reachedScript(path string) bool {
	data, err := os.ReadFile(path)
	return err == nil && string(data) == "started"
}

// lastLines returns at most n trailing lines of b.
func lastLines(b []byte, n int) []byte {
	end := len(b)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == '\n' && i != len(b)-1 {
			n--
			if n == 0 {
				return b[i+1 : end]
			}
		}
	}
	return b[:end]
}

func joinReason(a, b string) string {
	if a == "" {
		return b
	}
	if b == "" {
		return a
	}
	return a + "; " + b
}

// diskGuard watches the used space and the used inodes of the filesystems
// holding the sandbox and the private directories. It measures the
// filesystem, not the step: other writers on the same filesystem count too
// (the cap can only trip early, never late), and a burst between two polls
// can overshoot it.
//
// Files count apart from bytes: empty files take an inode and no block, so
// a step creating millions of them would exhaust the host filesystem's
// inodes (every later file creation on it fails, the ledger's included)
// while its used space barely grew. The cap charges one inode per
// bytesPerInode of the disk cap: DiskMB 4096 allows 1 Mi new files.
type diskGuard struct {
	paths []string
	base  map[uint64]usage // device → usage when the step started
	cap   int64
}

// usage is one filesystem's used bytes and inodes.
type usage struct{ bytes, inodes int64 }

// bytesPerInode is what the disk cap charges for one new file (inode).
const bytesPerInode = 4096

func newDiskGuard(paths []string, capBytes int64) *diskGuard {
	g := &diskGuard{paths: paths, base: map[uint64]usage{}, cap: capBytes}
	for _, p := range paths {
		if dev, used, inodes, err := fsUsage(p); err == nil {
			if _, ok := g.base[dev]; !ok {
				g.base[dev] = usage{used, inodes}
			}
		}
	}
	return g
}

// fsUsage returns the device, used bytes and used inodes of the filesystem
// holding path (inodes 0 where the filesystem does not count them).
func fsUsage(path string) (dev uint64, used, inodes int64, err error) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, 0, 0, err
	}
	dev, _, _, _, _, _, _ = statFields(fi)
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return 0, 0, 0, err
	}
	if st.Files >= st.Ffree {
		inodes = int64(st.Files - st.Ffree)
	}
	return dev, int64(st.Blocks-st.Bfree) * int64(st.Bsize), inodes, nil // Bsize is uint32 on macOS
}

// inodeCap is how many new inodes the disk cap allows.
func (g *diskGuard) inodeCap() int64 { return g.cap / bytesPerInode }

// over reports the growth so far (bytes and inodes) and whether either
// passed its cap.
func (g *diskGuard) over() (grown usage, over bool) {
	seen := map[uint64]bool{}
	for _, p := range g.paths {
		dev, used, inodes, err := fsUsage(p)
		if err != nil || seen[dev] {
			continue
		}
		seen[dev] = true
		b, ok := g.base[dev]
		if !ok {
			continue
		}
		if used > b.bytes {
			grown.bytes += used - b.bytes
		}
		if inodes > b.inodes {
			grown.inodes += inodes - b.inodes
		}
	}
	return grown, grown.bytes > g.cap || grown.inodes > g.inodeCap()
}

// diskKill names a disk-cap kill: which of the two caps the growth passed.
func diskKill(g *diskGuard, grown usage, diskMB int) (killed, reason string) {
	killed = fmt.Sprintf("disk>%dMB", diskMB)
	if grown.bytes > g.cap {
		return killed, fmt.Sprintf("the step added %d MiB to the disk, over its %d MiB cap", grown.bytes>>20, diskMB)
	}
	return killed, fmt.Sprintf("the step added %d files (inodes) to the disk, over the %d its %d MiB cap allows (one per %d bytes)",
		grown.inodes, g.inodeCap(), diskMB, bytesPerInode)
}

// live copies new output to Spec.Live while the step runs.
type live struct {
	w       io.Writer
	limit   int64
	path    string
	done    chan struct{}
	stopped chan struct{}
	mu      sync.Mutex
	sent    int64
	err     error
}

func startLive(w io.Writer, limit int64, path string) *live {
	if limit <= 0 {
		limit = DefaultLiveBytes
	}
	lv := &live{w: w, limit: limit, path: path, done: make(chan struct{}), stopped: make(chan struct{})}
	if w == nil {
		close(lv.stopped)
		return lv
	}
	go func() {
		defer close(lv.stopped)
		t := time.NewTicker(livePollInterval)
		defer t.Stop()
		for {
			select {
			case <-lv.done:
				return
			case <-t.C:
				lv.copy()
			}
		}
	}()
	return lv
}

// copy sends what was written since the last call, within the cap.
func (lv *live) copy() {
	lv.mu.Lock()
	defer lv.mu.Unlock()
	if lv.err != nil || lv.sent >= lv.limit {
		return
	}
	f, err := os.Open(lv.path)
	if err != nil {
		lv.err = err
		return
	}
	defer f.Close()
	n, err := io.Copy(lv.w, io.NewSectionReader(f, lv.sent, lv.limit-lv.sent))
	lv.sent += n
	if err != nil {
		lv.err = err
	}
}

// finish copies the rest (within the cap) once the step is over and says
// when the live copy was cut.
func (lv *live) finish() {
	if lv.w == nil {
		return
	}
	close(lv.done)
	<-lv.stopped
	lv.copy()
	if lv.err != nil {
		return
	}
	if fi, err := os.Stat(lv.path); err == nil && fi.Size() > lv.sent {
		_, _ = fmt.Fprintf(lv.w, "\n[deponent: live output cut after %d of %d bytes; the full output is kept with the step]\n",
			lv.sent, fi.Size())
	}
}

// watchdog enforces wall clock, memory, tasks, CPU time, file size at the
// cap, disk growth and cancellation while the step runs.
type watchdog struct {
	ctx      context.Context
	cmd      *exec.Cmd
	tr       *tracker
	cg       *stepCgroup
	disk     *diskGuard
	limits   Limits
	interval time.Duration
	started  time.Time
	stop     chan struct{}
	finished chan struct{}

	// Written by loop only; read after finished is closed.
	killed, reason string
	seenAtCap      map[string]bool // files seen open past the file-size cap
}

func (w *watchdog) loop() {
	defer close(w.finished)
	wall := time.NewTimer(w.limits.WallClock)
	defer wall.Stop()
	tick := time.NewTicker(w.interval)
	defer tick.Stop()
	diskTick := time.NewTicker(min(w.interval, diskPollInterval))
	defer diskTick.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-w.ctx.Done():
			w.kill(KilledCanceled, "the caller's context ended the step: "+w.ctx.Err().Error())
			return
		case <-wall.C:
			w.kill("wallclock>"+seconds(w.limits.WallClock)+"s",
				"wall clock exceeded "+w.limits.WallClock.String())
			return
		case <-diskTick.C:
			if grown, over := w.disk.over(); over {
				w.kill(diskKill(w.disk, grown, w.limits.DiskMB))
				return
			}
		case <-tick.C:
			if w.sample() {
				return
			}
		}
	}
}

// sample looks at the step's processes once; true when it killed the step.
func (w *watchdog) sample() bool {
	var pids []int
	cpu := map[int]uint64{}
	if w.cg != nil {
		ev, err := w.cg.events()
		if err == nil {
			pids, err = w.cg.procs()
		}
		if err != nil {
			// Fail closed: a step that cannot be watched is stopped.
			w.kill("watchdog", "cannot read the step's cgroup: "+err.Error())
			return true
		}
		switch {
		case ev.oomKills > 0:
			w.kill(fmt.Sprintf("memory>%dMB", w.limits.MemoryMB),
				fmt.Sprintf("the kernel ended %d process(es) at the step's %d MiB memory limit", ev.oomKills, w.limits.MemoryMB))
			return true
		case ev.pidsMax > 0:
			w.kill(fmt.Sprintf("pids>%d", w.limits.Tasks),
				fmt.Sprintf("the step reached its %d-task limit (%d fork(s) refused)", w.limits.Tasks, ev.pidsMax))
			return true
		}
	} else {
		tab, err := snapshotProcs("")
		if err != nil {
			w.kill("watchdog", "cannot read the process table: "+err.Error())
			return true
		}
		members := w.tr.members(tab)
		if rss := rssSum(members); rss > int64(w.limits.MemoryMB)<<20 {
			w.kill(fmt.Sprintf("memory>%dMB", w.limits.MemoryMB),
				fmt.Sprintf("resident memory %d MiB over %d processes exceeded %d MiB",
					rss>>20, len(members), w.limits.MemoryMB))
			return true
		}
		tasks := 0
		for _, m := range members {
			tasks += max(m.threads, 1)
			pids = append(pids, m.pid)
			cpu[m.pid] = m.cpuTicks
		}
		// The launcher outside the jail is counted too: over the cap by
		// more than that means the cap was reached.
		if tasks > w.limits.Tasks {
			w.kill(fmt.Sprintf("pids>%d", w.limits.Tasks),
				fmt.Sprintf("the step reached its %d-task limit (%d processes and threads)", w.limits.Tasks, tasks))
			return true
		}
	}
	// CPU time: a process can use at most ncpu seconds per second, so the
	// check starts when that could reach the limit.
	limit := time.Duration(w.limits.CPUSeconds) * time.Second
	if cpuPolled && time.Since(w.started)*time.Duration(runtime.NumCPU()) >= limit {
		for _, pid := range pids {
			ticks, ok := cpu[pid]
			if !ok {
				ticks, _, ok = procSample(pid)
			}
			if ok && time.Duration(ticks)*time.Second/clockTicks >= limit {
				w.kill("cpu>"+strconv.Itoa(w.limits.CPUSeconds)+"s",
					fmt.Sprintf("a process of the step used %ds of CPU time, its limit", w.limits.CPUSeconds))
				return true
			}
		}
	}
	// Files held open past the file-size cap (the kernel allows one block
	// more): the writer was stopped there, and may ignore SIGXFSZ, as
	// Python does.
	budget := maxFdsChecked
	capBytes := int64(w.limits.FileSizeMB) << 20
	for _, pid := range pids {
		for _, path := range openFilesOver(pid, capBytes, &budget) {
			w.seenAtCap[path] = true
		}
	}
	if len(w.seenAtCap) > 0 {
		w.kill(fmt.Sprintf("fsize>%dMB", w.limits.FileSizeMB),
			fmt.Sprintf("a file of the step grew past the %d MiB file-size cap", w.limits.FileSizeMB))
		return true
	}
	return false
}

// kill stops the whole step: the direct child (for bwrap its death takes
// the pid namespace with it), its process group, and every process of the
// cgroup or the tracked tree.
func (w *watchdog) kill(killed, reason string) {
	w.killed, w.reason = killed, reason
	_ = w.cmd.Process.Kill()
	_ = syscall.Kill(-w.tr.pgid, syscall.SIGKILL)
	if w.cg != nil {
		if pids, err := w.cg.procs(); err == nil {
			for _, pid := range pids {
				if pid != os.Getpid() {
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			}
		}
		return
	}
	if tab, err := snapshotProcs(""); err == nil {
		for _, m := range w.tr.members(tab) {
			_ = syscall.Kill(m.pid, syscall.SIGKILL)
		}
	}
}

// sweep kills every process of the step that is still alive after the
// direct child was reaped: anything in its process group, anything seen in
// its tree, anything carrying the run token (when given). It reports the
// pids that survived repeated rounds (none, unless something is badly
// wrong).
func sweep(tr *tracker, token string) ([]int, error) {
	self := os.Getpid()
	var left []int
	for round := 0; round < 100; round++ {
		tab, err := snapshotProcs(token)
		if err != nil {
			return nil, fmt.Errorf("jail: cannot sweep the step's processes: %w", err)
		}
		left = left[:0]
		for _, m := range tr.members(tab) {
			if m.pid != self && m.pid > 1 {
				left = append(left, m.pid)
				_ = syscall.Kill(m.pid, syscall.SIGKILL)
			}
		}
		if len(left) == 0 {
			return nil, nil
		}
		_ = syscall.Kill(-tr.pgid, syscall.SIGKILL)
		time.Sleep(time.Duration(round+1) * time.Millisecond)
	}
	return left, fmt.Errorf("jail: %d process(es) of the step survived the sweep: %v", len(left), left)
}

// classify turns the child's end into ExitCode, Killed and Reason.
func classify(ps *os.ProcessState, waitErr error, killed, reason string, l Limits) (int, string, string) {
	if killed != "" {
		return -1, killed, reason
	}
	if ps == nil {
		return -1, "", fmt.Sprintf("wait: %v", waitErr)
	}
	ws, _ := ps.Sys().(syscall.WaitStatus)
	code := ws.ExitStatus()
	// A shell (and bwrap, for its child) reports death by signal N as exit
	// status 128+N; a direct child's signal is reported the same way so
	// every backend agrees.
	var sig syscall.Signal
	direct := ws.Signaled()
	if direct {
		sig = ws.Signal()
		code = 128 + int(sig)
	} else if code > 128 && code < 128+65 {
		sig = syscall.Signal(code - 128)
	}
	switch {
	case sig == syscall.SIGXCPU:
		return -1, "cpu>" + strconv.Itoa(l.CPUSeconds) + "s",
			fmt.Sprintf("CPU time limit (RLIMIT_CPU) reached: SIGXCPU, exit status %d", code)
	case sig == syscall.SIGKILL && !cpuPolled && cpuTime(ps) >= time.Duration(l.CPUSeconds)*time.Second:
		// SIGXCPU ignored: the hard limit's SIGKILL followed. The child's
		// CPU time includes every descendant it (and they) reaped. (Where
		// the watchdog polls CPU time it names the kill itself, and a
		// SIGKILL after much CPU may be the OOM killer's.)
		return -1, "cpu>" + strconv.Itoa(l.CPUSeconds) + "s",
			fmt.Sprintf("CPU time limit reached: SIGKILL at the hard RLIMIT_CPU (%d s of CPU used)", int(cpuTime(ps).Seconds()))
	case sig == syscall.SIGXFSZ:
		return -1, "fsize>" + strconv.Itoa(l.FileSizeMB) + "MB",
			fmt.Sprintf("file size limit (RLIMIT_FSIZE %d MiB) reached: SIGXFSZ, exit status %d", l.FileSizeMB, code)
	case sig == syscall.SIGKILL:
		return code, "", fmt.Sprintf("exit status %d: SIGKILL from inside the step or the kernel's OOM killer", code)
	case direct:
		return code, "", "terminated by signal " + sig.String()
	}
	return code, "", ""
}

// cpuTime is user+system CPU of the child and every descendant it reaped.
func cpuTime(ps *os.ProcessState) time.Duration {
	return ps.UserTime() + ps.SystemTime()
}

// seconds formats a duration the way the seed's "wallclock>Ns" does.
func seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64)
}

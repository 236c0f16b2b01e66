//go:build linux || darwin

package jail

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
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
	// after runs once every process of the step is gone, before the
	// tripwire looks (bwrap removes the mount points it created).
	after func()
}

// execute runs one prepared step under build's launcher: private dirs,
// rebuilt environment, output to a file, watchdogs, a final sweep of every
// process of the step, and the bounded result.
func execute(ctx context.Context, p *prepared, opts Options, build func(*runDir) (launch, error)) (Result, error) {
	started := time.Now()
	rd, err := newRunDir(tempRoot(opts))
	if err != nil {
		return Result{}, err
	}
	defer rd.remove()
	l, err := build(rd)
	if err != nil {
		return Result{}, err
	}
	token := newToken()
	if err := ctx.Err(); err != nil {
		res := refuse(l.backend, "the caller's context ended before the step started: "+err.Error())
		res.Killed = KilledCanceled
		return res, nil
	}
	out, err := os.OpenFile(rd.out, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|os.O_APPEND, 0o600)
	if err != nil {
		return Result{}, fmt.Errorf("jail: output file: %w", err)
	}
	marker, err := os.OpenFile(rd.started, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		out.Close()
		return Result{}, fmt.Errorf("jail: started marker: %w", err)
	}
	cmd := &exec.Cmd{
		Path:        l.argv[0],
		Args:        l.argv,
		Dir:         p.spec.Sandbox,
		Env:         buildEnv(os.Environ(), p.spec.PATH, rd.home, rd.tmp, token, p.spec.Env),
		Stdout:      out, // one file for both: interleaved, and never a pipe
		Stderr:      out,
		ExtraFiles:  []*os.File{marker}, // descriptor startedFD
		SysProcAttr: sysProcAttr(),
	}
	err = cmd.Start()
	out.Close() // the child holds its own descriptors
	marker.Close()
	if err != nil {
		return Result{}, fmt.Errorf("jail: start %s: %w", l.argv[0], err)
	}
	pid := cmd.Process.Pid
	tr := newTracker(pid, pid) // Setpgid: the child leads its own group
	tr.minStart = startTimeOf(pid)
	w := &watchdog{ctx: ctx, cmd: cmd, tr: tr, limits: p.limits, interval: opts.pollInterval(),
		stop: make(chan struct{}), finished: make(chan struct{})}
	go w.loop()
	waitErr := cmd.Wait()
	close(w.stop)
	<-w.finished
	tr.root = 0 // reaped: its pid may be reused from here on
	_, sweepErr := sweep(tr, token)
	if l.after != nil {
		l.after()
	}

	res := Result{Backend: l.backend, Unjailed: l.unjailed, Duration: time.Since(started)}
	res.ExitCode, res.Killed, res.Reason = classify(cmd.ProcessState, waitErr, w.killed, w.reason, p.limits)
	if notes := append(append([]string(nil), l.notes...), p.notes...); len(notes) > 0 {
		res.Reason = joinReason(res.Reason, strings.Join(notes, "; "))
	}
	res.Tampered, res.Reason = checkTripwire(p, res.Reason)
	res.Output, res.OutputSHA256, res.OutputBytes, err = readOutput(rd.out, p.tail)
	if err != nil {
		return res, err
	}
	if res.Killed == "" && !reachedScript(rd.started) {
		// Fail closed: the jail (or the limits) could not be set up, so the
		// script never ran; its "exit status" would be the launcher's.
		res.Reason = joinReason(fmt.Sprintf("%s could not set up the jail (exit status %d): %s",
			l.backend, res.ExitCode, strings.TrimSpace(string(lastLines(res.Output, 5)))), res.Reason)
		res.ExitCode, res.Killed = -1, KilledNoJail
	}
	// A step whose processes could not all be killed breaks the contract:
	// the Result is still returned, with the error, for the caller to record.
	return res, sweepErr
}

// checkTripwire compares the protected set with the snapshot prepare took.
// A set that cannot be read afterwards counts as tampered (fail closed).
func checkTripwire(p *prepared, reason string) ([]string, string) {
	if p.before == nil {
		return nil, reason
	}
	after, err := takeSnapshot(p.spec.Sandbox, p.before.roots)
	if err != nil {
		return []string{"."}, joinReason(reason, "TAMPERED: the protected set could not be checked after the step: "+err.Error())
	}
	ts := diffSnapshots(p.before, after)
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

// watchdog enforces wall clock, resident memory and cancellation. CPU time
// and file size are enforced by the kernel through rlimits.
type watchdog struct {
	ctx      context.Context
	cmd      *exec.Cmd
	tr       *tracker
	limits   Limits
	interval time.Duration
	stop     chan struct{}
	finished chan struct{}

	// Written by loop only; read after finished is closed.
	killed, reason string
}

func (w *watchdog) loop() {
	defer close(w.finished)
	wall := time.NewTimer(w.limits.WallClock)
	defer wall.Stop()
	tick := time.NewTicker(w.interval)
	defer tick.Stop()
	capBytes := int64(w.limits.MemoryMB) << 20
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
		case <-tick.C:
			tab, err := snapshotProcs("")
			if err != nil {
				// Fail closed: a step whose memory cannot be watched is stopped.
				w.kill("watchdog", "cannot read the process table: "+err.Error())
				return
			}
			members := w.tr.members(tab)
			if rss := rssSum(members); rss > capBytes {
				w.kill(fmt.Sprintf("memory>%dMB", w.limits.MemoryMB),
					fmt.Sprintf("resident memory %d MiB over %d processes exceeded %d MiB",
						rss>>20, len(members), w.limits.MemoryMB))
				return
			}
		}
	}
}

// kill stops the whole step: the direct child (for bwrap its death takes
// the pid namespace with it), its process group, and every tracked process.
func (w *watchdog) kill(killed, reason string) {
	w.killed, w.reason = killed, reason
	_ = w.cmd.Process.Kill()
	_ = syscall.Kill(-w.tr.pgid, syscall.SIGKILL)
	if tab, err := snapshotProcs(""); err == nil {
		for _, m := range w.tr.members(tab) {
			_ = syscall.Kill(m.pid, syscall.SIGKILL)
		}
	}
}

// sweep kills every process of the step that is still alive after the
// direct child was reaped: anything in its process group, anything seen in
// its tree, anything carrying the run token. It reports the pids that
// survived repeated rounds (none, unless something is badly wrong).
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
			fmt.Sprintf("CPU time limit (RLIMIT_CPU %ds) reached: SIGXCPU, exit status %d", l.CPUSeconds, code)
	case sig == syscall.SIGKILL && direct && cpuTime(ps) >= time.Duration(l.CPUSeconds)*time.Second:
		// SIGXCPU ignored: the hard limit's SIGKILL followed.
		return -1, "cpu>" + strconv.Itoa(l.CPUSeconds) + "s",
			fmt.Sprintf("CPU time limit (RLIMIT_CPU %ds) reached: SIGKILL at the hard limit", l.CPUSeconds)
	case sig == syscall.SIGXFSZ:
		return -1, "fsize>" + strconv.Itoa(l.FileSizeMB) + "MB",
			fmt.Sprintf("file size limit (RLIMIT_FSIZE %d MiB) reached: SIGXFSZ, exit status %d", l.FileSizeMB, code)
	case sig == syscall.SIGKILL:
		return code, "", fmt.Sprintf("exit status %d: SIGKILL from inside the step, the hard CPU limit "+
			"(after an ignored SIGXCPU) or the kernel's OOM killer", code)
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

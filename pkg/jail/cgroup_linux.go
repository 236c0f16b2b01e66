package jail

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// A step's cgroup: the kernel then counts every page the step's processes
// charge — anonymous memory, memfd, SysV and POSIX shared memory, tmpfs
// files, page cache — against one memory limit, caps its tasks (processes
// and threads) with pids.max, lists its processes without a scan of /proc,
// and kills them all at the end. One is created per step when possible:
//
//   - cgroup v2: under Options.Cgroup when it names a delegated directory,
//     else, as root, under <cgroup2 mount>/deponent-jail; the step's first
//     process is cloned straight into it (CLONE_INTO_CGROUP);
//   - cgroup v1 (hybrid hosts), as root: memory and pids hierarchies, under
//     the caller's own cgroup in each; the thread that starts the step
//     joins the step's cgroups (v1 moves single threads), forks, and
//     returns, so the child is born inside (see startInside).
//
// Otherwise the runner falls back to polling resident memory (and counting
// tasks) and says so in Result.MemoryGuard and TaskGuard.

// cgroupParentName is the directory the jail creates its step cgroups in.
const cgroupParentName = "deponent-jail"

// Cgroup modes of Options.Cgroup besides a path.
const (
	CgroupAuto = ""    // the strongest guard available
	CgroupOff  = "off" // never create a cgroup: RSS polling only (a named relaxation)
)

type stepCgroup struct {
	version int
	dir     string // v2: the step's cgroup; v1: the memory one
	pidsDir string // v1 only
	fd      int    // v2: the directory, for CLONE_INTO_CGROUP; -1 otherwise
	// v1: the caller's own memory and pids cgroups, where the starting
	// thread returns (see startInside).
	ownMem, ownPids string
}

// newStepCgroup creates the step's cgroup with its limits, or says why it
// cannot (nil, reason).
func newStepCgroup(mode, token string, l Limits) (*stepCgroup, string) {
	if mode == CgroupOff {
		return nil, "cgroups turned off (Options.Cgroup=off)"
	}
	name := "step-" + token[:16]
	var whyV2 string
	if mode != CgroupAuto {
		if !filepath.IsAbs(mode) {
			return nil, fmt.Sprintf("Options.Cgroup %q is neither %q nor an absolute cgroup v2 directory", mode, CgroupOff)
		}
		cg, err := newV2(mode, name, l, false)
		if err != nil {
			return nil, "delegated cgroup " + mode + ": " + err.Error()
		}
		return cg, ""
	}
	if os.Geteuid() != 0 {
		return nil, "not root and no delegated cgroup (Options.Cgroup)"
	}
	if mnt := cgroupMount("cgroup2", ""); mnt != "" {
		cg, err := newV2(filepath.Join(mnt, cgroupParentName), name, l, true)
		if err == nil {
			return cg, ""
		}
		whyV2 = "cgroup v2: " + err.Error()
	} else {
		whyV2 = "no cgroup v2 hierarchy"
	}
	cg, err := newV1(name, l)
	if err != nil {
		return nil, whyV2 + "; cgroup v1: " + err.Error()
	}
	return cg, ""
}

// newV2 creates parent (when create) with memory and pids delegated to its
// children, then the step's cgroup below it with the limits.
func newV2(parent, name string, l Limits, create bool) (*stepCgroup, error) {
	if create {
		root := filepath.Dir(parent)
		if err := requireControllers(root, "cgroup.controllers"); err != nil {
			return nil, err
		}
		if err := enableControllers(root); err != nil {
			return nil, err
		}
		if err := os.Mkdir(parent, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			return nil, err
		}
	}
	if err := requireControllers(parent, "cgroup.controllers"); err != nil {
		return nil, err
	}
	if err := enableControllers(parent); err != nil {
		return nil, err
	}
	dir := filepath.Join(parent, name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, err
	}
	cg := &stepCgroup{version: 2, dir: dir, fd: -1}
	mem := strconv.FormatInt(int64(l.MemoryMB)<<20, 10)
	for _, w := range []struct {
		file, value string
		optional    bool // absent without swap accounting, or on older kernels
	}{
		{"memory.max", mem, false}, {"memory.swap.max", "0", true}, {"memory.oom.group", "1", true},
		{"pids.max", strconv.Itoa(l.Tasks), false},
	} {
		if err := writeCgroupFile(dir, w.file, w.value); err != nil && !(w.optional && errors.Is(err, os.ErrNotExist)) {
			cg.remove()
			return nil, err
		}
	}
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		cg.remove()
		return nil, err
	}
	cg.fd = fd
	return cg, nil
}

// requireControllers insists that memory and pids are available in dir.
func requireControllers(dir, file string) error {
	data, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		return err
	}
	have := strings.Fields(string(data))
	for _, want := range []string{"memory", "pids"} {
		if !contains(have, want) {
			return fmt.Errorf("the %s controller is not available in %s (have %q)", want, dir, have)
		}
	}
	return nil
}

// enableControllers delegates memory and pids to dir's children.
func enableControllers(dir string) error {
	data, err := os.ReadFile(filepath.Join(dir, "cgroup.subtree_control"))
	if err != nil {
		return err
	}
	have := strings.Fields(string(data))
	if contains(have, "memory") && contains(have, "pids") {
		return nil
	}
	return writeCgroupFile(dir, "cgroup.subtree_control", "+memory +pids")
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// newV1 creates the step's cgroup in the memory and pids hierarchies, below
// the caller's own cgroup in each (v1 has no rule against it, and the
// caller's own limits keep applying above the step's).
func newV1(name string, l Limits) (*stepCgroup, error) {
	memMnt, pidsMnt := cgroupMount("cgroup", "memory"), cgroupMount("cgroup", "pids")
	if memMnt == "" || pidsMnt == "" {
		return nil, errors.New("the memory and pids hierarchies are not both mounted")
	}
	own, err := ownCgroups()
	if err != nil {
		return nil, err
	}
	cg := &stepCgroup{version: 1, fd: -1,
		ownMem: filepath.Join(memMnt, own["memory"]), ownPids: filepath.Join(pidsMnt, own["pids"])}
	memParent := filepath.Join(memMnt, own["memory"], cgroupParentName)
	pidsParent := filepath.Join(pidsMnt, own["pids"], cgroupParentName)
	// Parent and child, retried once: another step's cleanup may remove an
	// empty parent between the two.
	mkdirIn := func(parent, child string) error {
		var err error
		for try := 0; try < 2; try++ {
			if err = os.Mkdir(parent, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
				return err
			}
			if err = os.Mkdir(child, 0o755); !errors.Is(err, os.ErrNotExist) {
				return err
			}
		}
		return err
	}
	cg.dir = filepath.Join(memParent, name)
	if err := mkdirIn(memParent, cg.dir); err != nil {
		return nil, err
	}
	cg.pidsDir = filepath.Join(pidsParent, name)
	if err := mkdirIn(pidsParent, cg.pidsDir); err != nil {
		cg.pidsDir = ""
		cg.remove()
		return nil, err
	}
	mem := strconv.FormatInt(int64(l.MemoryMB)<<20, 10)
	if err := writeCgroupFile(cg.dir, "memory.limit_in_bytes", mem); err != nil {
		cg.remove()
		return nil, err
	}
	// With swap accounting, swap counts too (else the limit could be evaded
	// into swap).
	if err := writeCgroupFile(cg.dir, "memory.memsw.limit_in_bytes", mem); err != nil && !errors.Is(err, os.ErrNotExist) {
		cg.remove()
		return nil, err
	}
	if err := writeCgroupFile(cg.pidsDir, "pids.max", strconv.Itoa(l.Tasks)); err != nil {
		cg.remove()
		return nil, err
	}
	return cg, nil
}

func writeCgroupFile(dir, file, value string) error {
	f, err := os.OpenFile(filepath.Join(dir, file), os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(value)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s to %s: %w", value, filepath.Join(dir, file), err)
	}
	return nil
}

// cgroupMount finds the mount point of fstype ("cgroup2", or "cgroup" with
// the given controller among its options) in /proc/self/mountinfo.
func cgroupMount(fstype, controller string) string {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return ""
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		f, g := strings.Fields(pre), strings.Fields(post)
		if len(f) < 5 || len(g) < 3 || g[0] != fstype {
			continue
		}
		if controller != "" && !contains(strings.Split(g[2], ","), controller) {
			continue
		}
		if f[3] != "/" {
			continue // a bind of a sub-hierarchy (a container's view): not ours to create in
		}
		return f[4]
	}
	return ""
}

// ownCgroups maps each v1 controller to the caller's cgroup path.
func ownCgroups() (map[string]string, error) {
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			out[c] = parts[2]
		}
	}
	if out["memory"] == "" || out["pids"] == "" {
		return nil, errors.New("the caller is in no memory or pids cgroup")
	}
	return out, nil
}

// wrap returns the argv that moves itself into the cgroup before exec'ing
// argv: the fallback when neither clone3 (v2) nor thread migration (v1)
// can place the child, at the price of one more exec.
func (cg *stepCgroup) wrap(argv []string) []string {
	procs := []string{filepath.Join(cg.dir, "cgroup.procs")}
	if cg.pidsDir != "" {
		procs = append(procs, filepath.Join(cg.pidsDir, "cgroup.procs"))
	}
	script := `for f; do [ "$f" = -- ] && break; echo $$ > "$f" || exit 125; done; ` +
		`while [ "$1" != -- ]; do shift; done; shift; exec "$@"`
	out := append([]string{shell, "-c", script, "deponent-cgroup"}, procs...)
	out = append(out, "--")
	return append(out, argv...)
}

// placeByClone reports whether the step's first process can be cloned
// straight into the cgroup.
func (cg *stepCgroup) placeByClone() bool { return cg != nil && cg.version == 2 && cg.fd >= 0 }

// placeByThread reports whether the step's first process can be forked by
// a thread that joined the step's cgroups (v1).
func (cg *stepCgroup) placeByThread() bool { return cg != nil && cg.version == 1 && cg.ownMem != "" }

// errThreadStuck: the starting thread could not return to the caller's
// cgroups.
var errThreadStuck = errors.New("jail: the starting thread could not leave the step's cgroup")

// startInside runs start on a thread that has joined the step's v1 cgroups
// (v1 moves single threads), so the child it forks is born inside them and
// nothing of it runs outside; the thread then returns to the caller's own
// cgroups. (Retiring the thread instead would save two moves, but a
// goroutine may run on the main thread, which the runtime never ends.) A
// thread that cannot return stays locked to a goroutine that ends, and is
// reported: the step is then not run. killAll skips the caller's pid.
func (cg *stepCgroup) startInside(start func() error) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		tid := strconv.Itoa(syscall.Gettid())
		back := func() error {
			return errors.Join(writeCgroupFile(cg.ownMem, "tasks", tid), writeCgroupFile(cg.ownPids, "tasks", tid))
		}
		if err := writeCgroupFile(cg.dir, "tasks", tid); err != nil {
			runtime.UnlockOSThread()
			done <- err
			return
		}
		if err := writeCgroupFile(cg.pidsDir, "tasks", tid); err != nil {
			if back() == nil {
				runtime.UnlockOSThread()
			}
			done <- err
			return
		}
		err := start()
		if berr := back(); berr != nil {
			done <- errors.Join(err, errThreadStuck, berr)
			return
		}
		runtime.UnlockOSThread()
		done <- err
	}()
	return <-done
}

// cgroupFD is the directory descriptor for CLONE_INTO_CGROUP.
func (cg *stepCgroup) cgroupFD() int { return cg.fd }

// procs lists the processes in the step's cgroup.
func (cg *stepCgroup) procs() ([]int, error) {
	data, err := os.ReadFile(filepath.Join(cg.dir, "cgroup.procs"))
	if err != nil {
		return nil, err
	}
	var out []int
	for _, f := range strings.Fields(string(data)) {
		if pid, err := strconv.Atoi(f); err == nil {
			out = append(out, pid)
		}
	}
	return out, nil
}

// cgroupEvents are the counters the watchdog reads.
type cgroupEvents struct {
	oomKills int64 // processes the kernel's OOM killer ended at the memory limit
	pidsMax  int64 // forks refused at pids.max
}

func (cg *stepCgroup) events() (cgroupEvents, error) {
	var ev cgroupEvents
	var err error
	if cg.version == 2 {
		if ev.oomKills, err = readKeyed(filepath.Join(cg.dir, "memory.events"), "oom_kill"); err != nil {
			return ev, err
		}
		ev.pidsMax, err = readKeyed(filepath.Join(cg.dir, "pids.events"), "max")
		return ev, err
	}
	if ev.oomKills, err = readKeyed(filepath.Join(cg.dir, "memory.oom_control"), "oom_kill"); err != nil {
		return ev, err
	}
	ev.pidsMax, err = readKeyed(filepath.Join(cg.pidsDir, "pids.events"), "max")
	return ev, err
}

// readKeyed reads "key value" from a flat-keyed cgroup file.
func readKeyed(path, key string) (int64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) == 2 && f[0] == key {
			return strconv.ParseInt(f[1], 10, 64)
		}
	}
	return 0, fmt.Errorf("%s: no %q counter", path, key)
}

// killAll kills every process of the step and waits (bounded) until the
// cgroup is empty; it reports the pids that would not go.
func (cg *stepCgroup) killAll() ([]int, error) {
	if cg.version == 2 {
		_ = writeCgroupFile(cg.dir, "cgroup.kill", "1") // 5.14+; the loop below covers older kernels
	}
	var left []int
	for round := 0; round < 200; round++ {
		pids, err := cg.procs()
		if err != nil {
			return nil, fmt.Errorf("jail: cannot list the step's cgroup: %w", err)
		}
		left = left[:0]
		for _, pid := range pids {
			if pid != os.Getpid() { // never the caller (a v1 thread of it on its way out)
				left = append(left, pid)
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		if len(left) == 0 {
			return nil, nil
		}
		time.Sleep(time.Duration(round/10+1) * time.Millisecond)
	}
	return left, fmt.Errorf("jail: %d process(es) of the step survived in its cgroup: %v", len(left), left)
}

// remove deletes the step's cgroup(s), retrying while the kernel finishes
// tearing the last processes down.
func (cg *stepCgroup) remove() {
	if cg.fd >= 0 {
		syscall.Close(cg.fd)
		cg.fd = -1
	}
	for _, d := range []string{cg.dir, cg.pidsDir} {
		if d == "" {
			continue
		}
		// The kernel may still be tearing the last tasks down: retry with a
		// growing pause, about a second in all.
		for i := 1; i <= 45; i++ {
			err := syscall.Rmdir(d)
			if err == nil || errors.Is(err, syscall.ENOENT) {
				break
			}
			time.Sleep(time.Duration(i) * time.Millisecond)
		}
		if cg.version == 1 {
			// v1 parents live inside the caller's own cgroup, which its
			// owner may want to remove: leave nothing behind once no step
			// uses them (EBUSY while another step does; fine).
			_ = syscall.Rmdir(filepath.Dir(d))
		}
	}
}

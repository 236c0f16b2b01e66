//go:build linux || darwin

package jail

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"testing"
	"time"
)

// BenchmarkJailOverhead measures the per-step cost of the jail against its
// floors, interleaved in one run so drifting machine load hits all alike:
//
//   - sh: `/bin/sh -c true`, a plain fork+exec;
//   - floor: the launcher itself with the same arguments a step gets
//     (bwrap with every mount, the rlimit prelude and `true`; on macOS
//     sandbox-exec is not measured separately), started and waited for;
//   - jail: Backend.Run of `true` (private dirs, environment, cgroup or
//     polling guards, watchdog, sweep, tripwire, output hashing);
//   - none: the unjailed backend, the same runner without the jail.
//
// Reported: the medians, jail/floor, jail/sh, and the jail's own cost
// (target under 15 ms): extra-ms, the median of the per-iteration
// differences jail - floor, and extra-min-ms, the difference of the fastest
// runs (both robust to load that drifts during the run).
func BenchmarkJailOverhead(b *testing.B) {
	sb := resolvedTempDir(b)
	opts := Options{RealHome: resolvedTempDir(b)}
	jail := liveJail(b, opts)
	none := NewUnjailed(opts)
	spec := Spec{Sandbox: sb, Script: "true", PATH: "/usr/bin:/bin"}
	ctx := context.Background()
	run := func(be Backend) time.Duration {
		start := time.Now()
		res, err := be.Run(ctx, spec)
		if err != nil || res.ExitCode != 0 {
			b.Fatalf("%s: %v %+v", be.Name(), err, res)
		}
		return time.Since(start)
	}
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer devnull.Close()
	exe := func(argv []string) time.Duration {
		start := time.Now()
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Dir = sb
		cmd.Env = []string{"PATH=/usr/bin:/bin"}
		cmd.ExtraFiles = []*os.File{devnull} // the prelude's started marker
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%v: %v %s", argv, err, out)
		}
		return time.Since(start)
	}
	floor := floorArgv(b, spec, opts)
	sh := []string{"/bin/sh", "-c", "true"}
	run(jail) // warm the probe cache and the page cache
	run(none)
	var jt, nt, ft, st []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		jt = append(jt, run(jail))
		nt = append(nt, run(none))
		if floor != nil {
			ft = append(ft, exe(floor))
		}
		st = append(st, exe(sh))
	}
	b.StopTimer()
	jm, nm, sm := median(jt), median(nt), median(st)
	b.ReportMetric(ms(jm), "jail-ms")
	b.ReportMetric(ms(nm), "none-ms")
	b.ReportMetric(ms(sm), "sh-ms")
	b.ReportMetric(float64(jm)/float64(sm), "jail/sh")
	b.ReportMetric(float64(nm)/float64(sm), "none/sh")
	b.ReportMetric(ms(percentile(jt, 95)), "jail-p95-ms")
	if floor != nil {
		fm := median(ft)
		b.ReportMetric(ms(fm), "floor-ms")
		b.ReportMetric(float64(jm)/float64(fm), "jail/floor")
		// The jail's own cost, robust to load drifting during the run: the
		// median of the per-iteration differences, and the difference of
		// the fastest runs.
		diffs := make([]time.Duration, len(jt))
		for i := range jt {
			diffs[i] = jt[i] - ft[i]
		}
		b.ReportMetric(ms(median(diffs)), "extra-ms")
		b.ReportMetric(ms(percentile(jt, 0)-percentile(ft, 0)), "extra-min-ms")
		b.ReportMetric(ms(percentile(ft, 0)), "floor-min-ms")
		b.ReportMetric(ms(percentile(jt, 0)), "jail-min-ms")
	}
}

// floorArgv is the bwrap command line a step of spec gets, running the
// rlimit prelude and `true` — the launcher alone, without the runner.
func floorArgv(b *testing.B, spec Spec, opts Options) []string {
	if runtime.GOOS != "linux" {
		return nil
	}
	bw := NewBwrap(opts)
	f, err := bw.probe()
	if err != nil {
		b.Fatal(err)
	}
	bin, err := bw.binary()
	if err != nil {
		b.Fatal(err)
	}
	p, err := prepare(spec, opts)
	if err != nil {
		b.Fatal(err)
	}
	rd, err := newRunDir(tempRoot(opts))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(rd.remove)
	ex, err := computeExposure(p.pathDirs, p.realHome, spec.Sandbox, nil)
	if err != nil {
		b.Fatal(err)
	}
	args := bwrapArgs(p, rd, f, ex, nil)
	b.Cleanup(func() { removeCreatedMountPoints(spec.Sandbox, p.protected) })
	return append([]string{bin}, args...)
}

// BenchmarkTripwire measures the tripwire's two snapshots (before and after
// a step) on a sandbox with a .git and n files in n/10 directories.
func BenchmarkTripwire(b *testing.B) {
	for _, n := range []int{100, 2000, 20000} {
		b.Run(strconv.Itoa(n)+"-files", func(b *testing.B) {
			sb := resolvedTempDir(b)
			for i := 0; i < 40; i++ {
				writeFile(b, filepath.Join(sb, ".git", "objects", "pack", "p"+strconv.Itoa(i)), "x", 0o444)
			}
			writeFile(b, filepath.Join(sb, ".git", "config"), "[core]\n", 0o644)
			writeFile(b, filepath.Join(sb, ".git", "HEAD"), "ref: refs/heads/main\n", 0o644)
			for i := 0; i < n; i++ {
				dir := filepath.Join(sb, "d"+strconv.Itoa(i/100), "e"+strconv.Itoa(i/10))
				if i%10 == 0 {
					if err := os.MkdirAll(dir, 0o755); err != nil {
						b.Fatal(err)
					}
				}
				if err := os.WriteFile(filepath.Join(dir, "f"+strconv.Itoa(i)), []byte("x"), 0o644); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				before, err := takeSnapshot(sb, builtinProtected)
				if err != nil {
					b.Fatal(err)
				}
				after, err := takeSnapshotProbe(sb, before.roots, &sizeProbe{over: 1 << 28, since: time.Now()})
				if err != nil {
					b.Fatal(err)
				}
				if d := diffSnapshots(before, after); len(d) != 0 {
					b.Fatal(d)
				}
			}
		})
	}
}

func median(ds []time.Duration) time.Duration { return percentile(ds, 50) }

func percentile(ds []time.Duration, p int) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[(len(s)-1)*p/100]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

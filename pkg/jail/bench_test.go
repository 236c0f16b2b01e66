//go:build linux || darwin

package jail

import (
	"context"
	"sort"
	"testing"
	"time"
)

// BenchmarkJailOverhead measures the per-command cost of the jail: the same
// trivial command (`true`) through the native jail and through the unjailed
// backend (which shares everything else: private dirs, environment rebuild,
// rlimit prelude, watchdog, sweep, output hashing). Reported: both medians,
// the overhead (difference of medians) and the ratio. Target: overhead under
// 15 ms per command.
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
	run(jail) // warm the probe cache and the page cache
	run(none)
	var jt, nt []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		// Interleaved so drifting machine load hits both alike.
		jt = append(jt, run(jail))
		nt = append(nt, run(none))
	}
	b.StopTimer()
	jm, nm := median(jt), median(nt)
	b.ReportMetric(ms(jm), "jail-ms/op")
	b.ReportMetric(ms(nm), "unjailed-ms/op")
	b.ReportMetric(ms(jm-nm), "overhead-ms/op")
	b.ReportMetric(float64(jm)/float64(nm), "ratio")
	b.ReportMetric(ms(percentile(jt, 95)), "jail-p95-ms")
	b.ReportMetric(ms(percentile(nt, 95)), "unjailed-p95-ms")
}

func median(ds []time.Duration) time.Duration { return percentile(ds, 50) }

func percentile(ds []time.Duration, p int) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[(len(s)-1)*p/100]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// Package livetest makes a live test that cannot run here impossible to
// miss. Live tests prove something only against the real thing (the
// sandbox, a tool such as actionlint); where it is absent they skip — or
// fail, when the variable named in the skip (DEPONENT_REQUIRE_JAIL=1,
// DEPONENT_REQUIRE_ACTIONLINT=1, as CI sets them) asks for that.
//
// A skip alone is quiet: `go test ./...` prints only an "ok" line for a
// package whose tests passed or skipped, and shows what the tests printed
// only with -v or on a failure. So a package with live tests runs them
// through Main, which, after the tests, writes one banner per package that
// skipped any: to the controlling terminal (/dev/tty) when there is one —
// the person who typed `go test ./...` sees it whatever go test does with
// the output — and to stderr (shown with -v). A run that skipped is also
// kept out of go test's result cache (Skip touches MarkerFile, gitignored,
// in the package directory), so the banner comes back every time rather
// than being replaced by "(cached)".
//
// Not covered: a run with no terminal and without -v (a script, a CI job
// that does not set the REQUIRE variables) sees only the "ok" line; that
// is what the REQUIRE variables are for.
package livetest

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// RequireJailEnv turns a missing sandbox into a failure.
const RequireJailEnv = "DEPONENT_REQUIRE_JAIL"

var (
	mu      sync.Mutex
	skipped = map[string][]string{} // reason → test names
)

// Skip skips t because what the live test needs is missing (reason says
// what and why), or fails it when the environment variable require is "1".
// The skip is counted for Main's banner.
func Skip(t testing.TB, require, reason string) {
	t.Helper()
	if os.Getenv(require) == "1" {
		t.Fatalf("REQUIRED BY %s=1, BUT NOT AVAILABLE: %s", require, reason)
	}
	mu.Lock()
	skipped[reason] = append(skipped[reason], t.Name())
	mu.Unlock()
	uncache()
	t.Skipf("SKIPPED (live test; set %s=1 to make this a failure): %s", require, reason)
}

// Skipped returns how many tests Skip skipped.
func Skipped() int {
	mu.Lock()
	defer mu.Unlock()
	n := 0
	for _, names := range skipped {
		n += len(names)
	}
	return n
}

// Main runs the tests of m and then reports the live tests that were
// skipped (see the package doc). Use it as TestMain's body:
//
//	func TestMain(m *testing.M) { os.Exit(livetest.Main(m, "pkg/x")) }
func Main(m *testing.M, pkg string) int {
	code := m.Run()
	if Skipped() == 0 {
		return code
	}
	banner := Banner(pkg)
	fmt.Fprint(os.Stderr, banner)
	if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
		_, _ = io.WriteString(tty, banner)
		tty.Close()
	}
	return code
}

// Banner is the report Main prints.
func Banner(pkg string) string {
	mu.Lock()
	defer mu.Unlock()
	var reasons []string
	n := 0
	for r, names := range skipped {
		reasons = append(reasons, r)
		n += len(names)
	}
	sort.Strings(reasons)
	var b strings.Builder
	fmt.Fprintf(&b, "\n*** %s: %d LIVE TEST(S) SKIPPED — they prove nothing on this machine ***\n", pkg, n)
	for _, r := range reasons {
		names := skipped[r]
		sort.Strings(names)
		shown := names
		if len(shown) > 5 {
			shown = shown[:5]
		}
		fmt.Fprintf(&b, "    %d × %s\n      (%s", len(names), r, strings.Join(shown, ", "))
		if len(names) > len(shown) {
			fmt.Fprintf(&b, ", … %d more", len(names)-len(shown))
		}
		b.WriteString(")\n")
	}
	fmt.Fprintf(&b, "    CI runs them with %s=1 (and DEPONENT_REQUIRE_ACTIONLINT=1), which makes each of these a failure.\n\n", RequireJailEnv)
	return b.String()
}

// MarkerFile is the file uncache touches, in the package directory (the
// test's working directory); .gitignore lists it.
const MarkerFile = ".deponent-livetest-skipped"

// uncache keeps this run out of go test's result cache. go test caches a
// passing run together with the files inside the module the test opened,
// and does not cache a run that opened one modified less than two seconds
// before the run ended (its mtime might not show the next change). The
// marker opened here was just touched, so the next `go test` runs the
// tests — and prints the banner — again instead of answering "(cached)".
// It must happen while the tests run (the test log closes when m.Run
// returns). Where the package directory is not writable the run is cached
// as usual.
func uncache() {
	if err := os.WriteFile(MarkerFile, []byte("touched by internal/livetest when a live test is skipped\n"), 0o644); err != nil {
		return
	}
	now := time.Now()
	_ = os.Chtimes(MarkerFile, now, now)
	if f, err := os.Open(MarkerFile); err == nil {
		f.Close()
	}
}

// Command mutate checks that the tests catch the bugs that matter. It
// applies a short list of named mutations to the security-critical lines of
// this module — each one a single change a careless edit could ship — one
// at a time, runs the tests that guard that line, and requires every
// mutation to be killed (a test fails). Run it from anywhere in the module:
//
//	go run ./internal/mutate            # every mutation; exit 1 unless all are killed
//	go run ./internal/mutate -list      # the list: name, file, property protected
//	go run ./internal/mutate -run 'ledger-|receipt-'   # the mutations whose name matches
//
// Each entry of the list (mutations.go) names the property it protects,
// the file, the exact text it replaces and the replacement, the packages
// whose tests guard it and a -run filter that keeps the run short. .ci/run
// runs it after the test suite.
//
// How it works, and what it guarantees:
//
//   - The source tree is never modified. A mutant is a copy of one file in
//     a temporary directory, handed to the go command with -overlay (through
//     GOFLAGS, so a test that builds a binary with `go build`, as
//     pkg/action's and cmd/deponent-verify's do, builds the mutant too). The
//     temporary directory is removed on exit, on an interrupt (SIGINT,
//     SIGTERM) and after a panic; an interrupted run kills the test
//     processes it started.
//   - The list stays in step with the code: a mutation whose target text is
//     not found exactly once in its file is a failure of the run, as is a
//     mutant that does not compile (it would prove nothing). The package's
//     own test (go test ./internal/mutate) checks every target without
//     running anything, so `go test ./...` already fails when an edit moves
//     a target.
//   - A kill means something: first the same tests run unmutated, once, and
//     must pass (the baseline); then each mutant's run must fail with a
//     failing test, not a build error.
//   - Bounded: each mutant's tests run under a per-mutation timeout, and
//     the whole run under a budget (-budget, 10 minutes by default); a
//     mutation not run in time is a failure, never a pass.
//
// The outcome is a table: KILLED (with the tests that failed), SURVIVED,
// or an ERROR (target not found, ambiguous, does not compile, timed out,
// over budget). The exit status is 0 only when every mutation was killed.
//
// Run it on Linux, as CI does, with the live-test tools installed
// (bubblewrap, python3) and DEPONENT_REQUIRE_JAIL=1: one target is a
// Linux-only file (the process group), and some guards are live jail
// tests, which would otherwise skip and let their mutant survive.
//
// What it does not cover: it is not a general mutation tester. It checks
// the listed lines only, with the listed mutations; a survivor it does not
// list can still exist. Some single-line changes are known equivalent
// (no test can tell them apart from the original because another
// mechanism does the same job); they are listed in equivalents.go with the
// reason and what covers the property instead, and are not run.
package main

// Command deponent-verify recomputes Deponent receipts and ledgers offline
// and exits 0 only when everything verified and every requirement held.
// The logic, its guarantees and its limits are documented in pkg/verify.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"time"

	"github.com/deponent-dev/deponent-action/internal/version"
	"github.com/deponent-dev/deponent-action/pkg/evidence"
	"github.com/deponent-dev/deponent-action/pkg/verify"
)

const usage = `Usage: deponent-verify [flags] PATH...

Recomputes Deponent testimony: every entry hash, every link of each chain
from its genesis, every receipt's content hash ("signature"), and each
receipt's outcome from its chain and its recorded configuration. Nothing
stored is trusted.

PATH is one of:
  FILE.json    a receipt
  FILE.jsonl   a bare ledger, one entry a line
  FILE.zip     a workflow-run artifact, read in place (never extracted)
  DIR          every receipt and ledger under it; a store's index.jsonl and
               LATEST are checked against the receipts beside them
  -            one receipt from standard input

Strict by default. With no flags, every receipt must:
  - recompute to GOVERNED_PASS from its chain (so its verify command ran
    and passed);
  - show the canaries enabled, run and held (the jail's own too, when it
    ran jailed);
  - show every command ran in a real jail (bwrap, seatbelt);
and at least one distinct receipt must verify (each receipt id counted
once). Inside GitHub Actions ($GITHUB_SHA and $GITHUB_REPOSITORY set) every
receipt must also be of that commit and repository.

Each requirement has a named relaxation, printed in the report when used:
  --allow-fail             any recomputed outcome passes (GOVERNED_FAIL,
                           GOVERNED_UNVERIFIED, GOVERNED_DRY_RUN)
  --allow-no-verify-command
                           GOVERNED_UNVERIFIED passes too (a run configured
                           without a verify command)
  --allow-no-canaries      the canaries need not have run and held
  --allow-no-jail-canaries a jailed run need not have run the jail's own
                           canaries
  --allow-unjailed         commands may have run outside a real jail
  --allow-stored-outcome   a receipt without a governance object (e.g. the
                           Python reference's) passes on its stored outcome
  --allow-any-commit       inside GitHub Actions, do not bind receipts to
                           $GITHUB_SHA and $GITHUB_REPOSITORY
  --chain-only             check chains, content hashes and stores only:
                           no outcome, canary, jail or count requirement
  --min-receipts 0         no receipt need verify; a DIR or zip may hold none
  --read-timeout 0         standard input and pipes may take forever

Requirements and expectations:
  --require-outcome VALUE  the outcome each chain must recompute to instead
                           of GOVERNED_PASS: GOVERNED_PASS,
                           GOVERNED_UNVERIFIED, GOVERNED_FAIL or
                           GOVERNED_DRY_RUN
  --require-jailed         the default (kept for existing command lines)
  --max-blocked N          at most N blocked agent entries in a chain (the
                           canaries' do not count)
  --expect-commit SHA      each receipt is of this full commit SHA
                           (default inside Actions: $GITHUB_SHA)
  --expect-repo OWNER/NAME each receipt is of this repository (default
                           inside Actions: $GITHUB_REPOSITORY)
  --expect-policy-sha256 H each receipt's run used the policy hashing to H
  --min-receipts N         at least N distinct receipts verify (default 1)
  --expect-len N           a bare ledger has exactly N entries
  --expect-head HASH       each receipt's chain and bare ledger ends on this
                           entry hash (the action's chain-head output)
  --read-timeout DURATION  reading standard input or a pipe named as a PATH
                           takes at most this long (default 60s; 0 = no
                           limit)

Output:
  --json                   print one JSON document (schema
                           deponent-verify-report/v1, docs/verify-json.md)
  --version                print the version and exit
  -h, --help               print this help and exit

Inside GitHub Actions (GITHUB_ACTIONS=true) failures are also annotated
(::error) and a table is appended to $GITHUB_STEP_SUMMARY.

Exit status: 0 everything verified and every requirement held; 1 anything
failed; 2 usage error.

The ledger is hash-chained and receipts are content-hashed, not signed: a
pass proves internal consistency and the recorded bindings (commit,
repository, policy hash, jail), not authorship.
`

func main() {
	verify.TuneRuntime()
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv))
}

// run is the whole command; it returns the exit status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) (code int) {
	defer func() {
		// A panic is never an outcome: report it as a failure.
		if p := recover(); p != nil {
			fmt.Fprintf(stdout, "FAIL  deponent-verify  -- internal error (a bug, reported as a failure): %v\n0 verified, 1 failed\n", p)
			code = verify.ExitFail
		}
	}()
	opts, paths, asJSON, err := parseArgs(args, stdin)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprint(stdout, usage)
		return verify.ExitOK
	case errors.Is(err, errVersion):
		fmt.Fprintf(stdout, "deponent-verify %s\n", version.Version)
		return verify.ExitOK
	case err != nil:
		return usageError(stderr, err)
	}
	opts.BindGitHub(getenv)
	rep, err := verify.Run(paths, opts)
	if err != nil {
		return usageError(stderr, err)
	}
	if asJSON {
		err = rep.WriteJSON(stdout)
	} else {
		err = rep.WriteText(stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "deponent-verify: writing the report: %v\n", err)
		return verify.ExitFail
	}
	if getenv("GITHUB_ACTIONS") == "true" {
		github(rep, asJSON, stdout, stderr, getenv("GITHUB_STEP_SUMMARY"))
	}
	return rep.ExitCode()
}

// github annotates failures and appends the job summary. With --json the
// annotations go to stderr (the runner reads workflow commands from both)
// so that stdout stays one JSON document.
func github(rep *verify.Report, asJSON bool, stdout, stderr io.Writer, summary string) {
	out := stdout
	if asJSON {
		out = stderr
	}
	if err := rep.WriteAnnotations(out); err != nil {
		fmt.Fprintf(stderr, "deponent-verify: writing annotations: %v\n", err)
	}
	if summary == "" {
		return
	}
	if err := rep.AppendStepSummary(summary); err != nil {
		// The verdict stands; only its presentation failed.
		fmt.Fprintf(stderr, "deponent-verify: cannot append the job summary to %s: %v\n", summary, err)
	}
}

// flagInError finds the flag package's "-name" in its messages, to spell
// it as the help does.
var flagInError = regexp.MustCompile(`(^|: |flag |for )-([a-z])`)

func usageError(stderr io.Writer, err error) int {
	msg := flagInError.ReplaceAllString(err.Error(), "$1--$2")
	fmt.Fprintf(stderr, "deponent-verify: %s (see --help)\n", msg)
	return verify.ExitUsage
}

var errVersion = errors.New("version requested")

// parseArgs reads flags anywhere on the command line (before, between or
// after PATHs); "--" ends the flags.
func parseArgs(args []string, stdin io.Reader) (verify.Options, []string, bool, error) {
	opts := verify.DefaultOptions()
	opts.Stdin = stdin
	fs := flag.NewFlagSet("deponent-verify", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	var asJSON, showVersion, requireJailed bool
	var maxBlocked, expectLen, minReceipts optInt
	readTimeout := optDuration{d: verify.DefaultReadTimeout}
	var requireOutcome string
	fs.StringVar(&requireOutcome, "require-outcome", "", "")
	fs.BoolVar(&opts.AllowFail, "allow-fail", false, "")
	fs.BoolVar(&opts.AllowNoVerifyCommand, "allow-no-verify-command", false, "")
	fs.BoolVar(&opts.AllowNoCanaries, "allow-no-canaries", false, "")
	fs.BoolVar(&opts.AllowNoJailCanaries, "allow-no-jail-canaries", false, "")
	fs.BoolVar(&opts.AllowUnjailed, "allow-unjailed", false, "")
	fs.BoolVar(&opts.AllowStoredOutcome, "allow-stored-outcome", false, "")
	fs.BoolVar(&opts.AllowAnyCommit, "allow-any-commit", false, "")
	fs.BoolVar(&opts.ChainOnly, "chain-only", false, "")
	fs.BoolVar(&requireJailed, "require-jailed", false, "")
	fs.Var(&maxBlocked, "max-blocked", "")
	fs.StringVar(&opts.ExpectCommit, "expect-commit", "", "")
	fs.StringVar(&opts.ExpectRepo, "expect-repo", "", "")
	fs.StringVar(&opts.ExpectPolicySHA256, "expect-policy-sha256", "", "")
	fs.Var(&minReceipts, "min-receipts", "")
	fs.Var(&expectLen, "expect-len", "")
	fs.StringVar(&opts.Head, "expect-head", "", "")
	fs.Var(&readTimeout, "read-timeout", "")
	fs.BoolVar(&asJSON, "json", false, "")
	fs.BoolVar(&showVersion, "version", false, "")

	var paths []string
	for len(args) > 0 {
		if err := fs.Parse(args); err != nil {
			return opts, nil, false, err
		}
		rest := fs.Args()
		if used := len(args) - len(rest); used > 0 && args[used-1] == "--" {
			paths = append(paths, rest...)
			break
		}
		if len(rest) == 0 {
			break
		}
		paths = append(paths, rest[0])
		args = rest[1:]
	}
	if showVersion {
		return opts, nil, false, errVersion
	}
	// A flag given explicitly with an empty value would silently turn its
	// expectation off: refuse.
	var empty error
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "require-outcome", "expect-commit", "expect-repo", "expect-head", "expect-policy-sha256":
			if f.Value.String() == "" && empty == nil {
				empty = fmt.Errorf("--%s: empty value (it would turn the check off)", f.Name)
			}
		}
	})
	if empty != nil {
		return opts, nil, false, empty
	}
	if requireJailed && opts.AllowUnjailed {
		return opts, nil, false, errors.New("--require-jailed and --allow-unjailed contradict each other")
	}
	opts.RequireOutcome = evidence.Outcome(requireOutcome)
	if maxBlocked.set {
		opts.MaxBlocked = &maxBlocked.n
	}
	if expectLen.set {
		opts.Len = &expectLen.n
	}
	if minReceipts.set {
		n := int(minReceipts.n)
		opts.MinReceipts = &n
	}
	if readTimeout.d == 0 {
		opts.NoReadTimeout = true
	} else {
		opts.ReadTimeout = readTimeout.d
	}
	if len(paths) == 0 {
		return opts, nil, false, errors.New("no PATH given")
	}
	return opts, paths, asJSON, nil
}

// optInt is a non-negative integer flag that records whether it was given.
type optInt struct {
	set bool
	n   int64
}

func (o *optInt) String() string {
	if o == nil || !o.set {
		return ""
	}
	return strconv.FormatInt(o.n, 10)
}

func (o *optInt) Set(s string) error {
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		return fmt.Errorf("%q is not an integer", s)
	}
	if n < 0 {
		return fmt.Errorf("%d: must be 0 or more", n)
	}
	o.set, o.n = true, n
	return nil
}

// optDuration is a duration flag: "90s", "2m", or a number of seconds;
// 0 means no limit.
type optDuration struct{ d time.Duration }

func (o *optDuration) String() string {
	if o == nil {
		return ""
	}
	return o.d.String()
}

func (o *optDuration) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil {
		n, nerr := strconv.ParseUint(s, 10, 32)
		if nerr != nil {
			return fmt.Errorf("%q is not a duration (e.g. 60s, 5m) or a number of seconds", s)
		}
		d = time.Duration(n) * time.Second
	}
	if d < 0 {
		return fmt.Errorf("%s: must be 0 (no limit) or more", s)
	}
	o.d = d
	return nil
}

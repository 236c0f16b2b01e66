// Command deponent-verify recomputes Deponent receipts and ledgers offline
// and exits 0 only when everything verified and every policy held. The
// logic, its guarantees and its limits are documented in pkg/verify.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/deponent-dev/deponent-action/internal/version"
	"github.com/deponent-dev/deponent-action/pkg/evidence"
	"github.com/deponent-dev/deponent-action/pkg/verify"
)

const usage = `Usage: deponent-verify [flags] PATH...

Recomputes Deponent testimony: every entry hash, every link of each chain
from its genesis, every receipt's content hash ("signature"). Nothing
stored is trusted.

PATH is one of:
  FILE.json    a receipt
  FILE.jsonl   a bare ledger, one entry a line
  FILE.zip     a workflow-run artifact, read in place (never extracted)
  DIR          every receipt and ledger under it; a store's index.jsonl and
               LATEST are checked against the receipts beside them
  -            one receipt from standard input

Policies (each off by default; each fails closed):
  --require-outcome VALUE  the stored outcome must be VALUE, and must be what
                           the chain recomputes to when the receipt records
                           its governance (e.g. GOVERNED_PASS)
  --require-jailed         no command ran outside a real jail (bwrap, seatbelt)
  --max-blocked N          at most N blocked entries, not counting canaries
  --expect-commit SHA      provenance must name this full commit SHA
  --expect-repo OWNER/NAME provenance must name this repository
  --min-receipts N         each DIR or zip must hold at least N receipts
                           (default 1)
  --expect-len N           a bare ledger must have exactly N entries
  --expect-head HASH       a bare ledger must end on this entry hash

Output:
  --json                   print one JSON document instead of lines
  --version                print the version and exit
  -h, --help               print this help and exit

Inside GitHub Actions (GITHUB_ACTIONS=true) failures are also annotated
(::error) and a table is appended to $GITHUB_STEP_SUMMARY.

Exit status: 0 everything verified and every policy held; 1 anything
failed; 2 usage error.

The ledger is hash-chained and receipts are content-hashed, not signed: a
pass proves internal consistency and the recorded bindings (commit,
repository, policy hash, jail), not authorship.
`

func main() {
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

func usageError(stderr io.Writer, err error) int {
	fmt.Fprintf(stderr, "deponent-verify: %v\nRun 'deponent-verify --help' for usage.\n", err)
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
	var asJSON, showVersion bool
	maxBlocked := optInt{}
	expectLen := optInt{}
	var requireOutcome string
	fs.StringVar(&requireOutcome, "require-outcome", "", "")
	fs.BoolVar(&opts.RequireJailed, "require-jailed", false, "")
	fs.Var(&maxBlocked, "max-blocked", "")
	fs.StringVar(&opts.ExpectCommit, "expect-commit", "", "")
	fs.StringVar(&opts.ExpectRepo, "expect-repo", "", "")
	fs.IntVar(&opts.MinReceipts, "min-receipts", 1, "")
	fs.Var(&expectLen, "expect-len", "")
	fs.StringVar(&opts.Head, "expect-head", "", "")
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
	// policy off: refuse.
	var empty error
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "require-outcome", "expect-commit", "expect-repo", "expect-head":
			if f.Value.String() == "" && empty == nil {
				empty = fmt.Errorf("--%s: empty value (it would turn the policy off)", f.Name)
			}
		}
	})
	if empty != nil {
		return opts, nil, false, empty
	}
	opts.RequireOutcome = evidence.Outcome(requireOutcome)
	if maxBlocked.set {
		opts.MaxBlocked = &maxBlocked.n
	}
	if expectLen.set {
		opts.Len = &expectLen.n
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
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return fmt.Errorf("%q is not an integer", s)
	}
	if n < 0 {
		return fmt.Errorf("%d: must be 0 or more", n)
	}
	o.set, o.n = true, n
	return nil
}

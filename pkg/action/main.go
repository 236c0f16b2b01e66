package action

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/deponent-dev/deponent-action/internal/textsafe"
	"github.com/deponent-dev/deponent-action/internal/version"
)

// Exit statuses.
const (
	ExitPass  = 0 // GOVERNED_PASS (the demo: it behaved as designed)
	ExitFail  = 1 // any other outcome, or the run could not be testified
	ExitUsage = 2 // a bad input or flag: nothing ran
)

// Main is the whole command: it reads the flags and the INPUT_ variables,
// runs, and returns the exit status. cmd/deponent-action only wires it to
// the process. The mcp subcommand reads the process's stdin (MainIO).
func Main(ctx context.Context, args []string, getenv Getenv, stdout, stderr io.Writer) int {
	return MainIO(ctx, args, getenv, os.Stdin, stdout, stderr)
}

// MainIO is Main with the standard input given.
func MainIO(ctx context.Context, args []string, getenv Getenv, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "mcp" {
		return MCPMain(ctx, args[1:], getenv, stdin, stdout, stderr)
	}
	cfg, err := ParseArgs(args, getenv, stderr)
	switch {
	case errors.Is(err, ErrHelp):
		Usage(stdout)
		return ExitPass
	case errors.Is(err, ErrVersion):
		fmt.Fprintf(stdout, "deponent-action %s\n", version.Version)
		return ExitPass
	case err != nil:
		reportFatal(stdout, stderr, getenv, err)
		return ExitUsage
	}
	opt := Options{Getenv: getenv, Stdout: stdout}
	if cfg.Demo {
		return RunDemo(ctx, cfg, opt)
	}
	res, err := Run(ctx, cfg, opt)
	if err != nil {
		reportFatal(stdout, stderr, getenv, err)
		var ie *InputError
		if errors.As(err, &ie) {
			return ExitUsage
		}
		return ExitFail
	}
	return DefaultExitCode(res)
}

// reportFatal reports an error that ends the run: an ::error annotation in
// Actions, a line on stderr locally.
func reportFatal(stdout, stderr io.Writer, getenv Getenv, err error) {
	rep := newReporter(stdout, getenv)
	var ie *InputError
	title := "Deponent: the run could not be testified"
	if errors.As(err, &ie) {
		title = "Deponent: bad input"
	}
	if rep.gh {
		rep.annotate(levelError, title, err.Error())
		return
	}
	hint := ""
	if ie != nil {
		hint = " (see --help)"
	}
	fmt.Fprintf(stderr, "deponent-action: %s%s\n", textsafe.OneLine(err.Error()), hint)
}

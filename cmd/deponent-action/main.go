// Command deponent-action runs an agent's build steps through Deponent's
// gated pipeline: gate, jail, hash-chained ledger, receipt. It is the
// binary behind action.yml and works the same locally (`--help`,
// `--demo`). The logic and its contract are in pkg/action.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/deponent-dev/deponent-action/pkg/action"
)

func main() {
	// A cancelled job (SIGINT, then SIGTERM) ends the running step through
	// the jail, and the receipt still records what happened.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := action.MainIO(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

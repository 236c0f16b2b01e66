package mcprelay

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
)

// Main is the relay command's body: `--connect SOCKET`, stdio to the
// session at SOCKET. It returns the exit code: 0 when the session ended
// after the client's EOF, 1 when it could not connect or either side went
// away first (the reason on stderr), 2 for a usage error.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mcp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	socket := fs.String("connect", "", "Unix socket of the governed MCP session to relay stdin/stdout to")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *socket == "" || fs.NArg() != 0 {
		fmt.Fprintln(stderr, "usage: mcp --connect SOCKET (relays this process's stdin/stdout to the governed MCP session)")
		return 2
	}
	err := Relay(ctx, *socket, stdin, stdout)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, context.Canceled):
		fmt.Fprintln(stderr, "mcprelay: interrupted")
		return 1
	default:
		fmt.Fprintln(stderr, err)
		return 1
	}
}

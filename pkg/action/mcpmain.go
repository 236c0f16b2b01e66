package action

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/deponent-dev/deponent-action/internal/version"
	"github.com/deponent-dev/deponent-action/pkg/mcprelay"
)

// MCPMain is the mcp subcommand:
//
//   - `mcp --connect SOCKET` is the relay an agent in the agent jail
//     starts as its MCP server: its stdio to the governed session the
//     action hosts on SOCKET (mcprelay.Main);
//   - `mcp [--sandbox DIR] [--receipts-dir RD] [other inputs]` is a
//     standalone governed session for a local MCP client (a .mcp.json
//     entry): the MCP protocol on stdin and stdout, the log on stderr. It
//     runs the canaries first; every tool call goes through the gate, the
//     jail and the ledger; when the client closes the session the
//     verify-command runs and the receipt is persisted and verified, as the
//     action does.
func MCPMain(ctx context.Context, args []string, getenv Getenv, stdin io.Reader, stdout, stderr io.Writer) int {
	if slices.ContainsFunc(args, func(a string) bool {
		return a == "--connect" || a == "-connect" || hasPrefix(a, "--connect=") || hasPrefix(a, "-connect=")
	}) {
		return mcprelay.Main(ctx, args, stdin, stdout, stderr)
	}
	cfg, err := parseServeArgs(args, getenv)
	switch {
	case errors.Is(err, ErrHelp):
		mcpUsage(stderr)
		return ExitPass
	case errors.Is(err, ErrVersion):
		fmt.Fprintf(stderr, "deponent-action %s\n", version.Version)
		return ExitPass
	case err != nil:
		fmt.Fprintf(stderr, "deponent-action mcp: %v (see mcp --help)\n", err)
		return ExitUsage
	}
	// stdout is the MCP channel: everything else goes to stderr.
	res, err := Run(ctx, cfg, Options{Getenv: getenv, Stdout: stderr, MCPIn: stdin, MCPOut: stdout})
	if err != nil {
		fmt.Fprintf(stderr, "deponent-action mcp: %v\n", err)
		var ie *InputError
		if errors.As(err, &ie) {
			return ExitUsage
		}
		return ExitFail
	}
	return DefaultExitCode(res)
}

func hasPrefix(s, p string) bool { return len(s) >= len(p) && s[:len(p)] == p }

// parseServeArgs is ParseArgs for the mcp subcommand: the same inputs,
// no steps, plan or agent (the client is the agent).
func parseServeArgs(args []string, getenv Getenv) (*Config, error) {
	raw, explicit, sw, err := parseFlags(args, getenv)
	if err != nil {
		return nil, err
	}
	if sw.Demo {
		return nil, &InputError{Input: "flags", Msg: "--demo is not a flag of the mcp subcommand"}
	}
	return buildConfigFor(raw, explicit, false, true, getenv)
}

func mcpUsage(w io.Writer) {
	fmt.Fprint(w, `deponent-action mcp: Deponent's governed tools as a stdio MCP server.

Usage:
  deponent-action mcp [--sandbox DIR] [--receipts-dir DIR] [--verify-command CMD] [flags]
  deponent-action mcp --connect SOCKET     (the relay the action's agent jail starts)

An MCP client (Claude Code, Codex, any client reading a .mcp.json) starts it
and gets five tools — run_cmd, read_file, write_file, edit_file, list_dir —
each call gated, confined and recorded. The canaries run first. When the
client ends the session, the verify-command runs, the receipt is written to
receipts-dir and verified, and a summary goes to stderr. Every flag of
deponent-action --help applies, except steps, plan, agent and --demo.
`)
}

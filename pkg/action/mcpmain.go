package action

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"time"

	"github.com/deponent-dev/deponent-action/internal/version"
	"github.com/deponent-dev/deponent-action/pkg/mcprelay"
)

// The detached session server's inherited listener: its descriptor and
// the private directory holding the socket (set by the foreground process
// only).
const (
	sessionFDEnv  = "DEPONENT_MCP_SESSION_FD"
	sessionDirEnv = "DEPONENT_MCP_SESSION_DIR"
)

// firstConnection bounds how long the detached server waits for the relay.
const firstConnection = 2 * time.Minute

// MCPMain is the mcp subcommand:
//
//   - `mcp --connect SOCKET` is the relay an agent in the agent jail
//     starts as its MCP server: its stdio to the governed session the
//     action hosts on SOCKET (mcprelay.Main);
//   - `mcp [--sandbox DIR] [--receipts-dir RD] [other inputs]` is a
//     standalone governed session for a local MCP client (a .mcp.json
//     entry). It runs the canaries first; every tool call goes through the
//     gate, the jail and the ledger; when the client ends the session the
//     verify-command runs and the receipt is persisted and verified, as the
//     action does.
//
// A stdio client ends its server by closing its stdin, and often then
// kills it: Claude Code sends SIGTERM and SIGKILL a moment later, which
// would lose the session's verify-command and receipt every time. So the
// standalone session does not live in the process the client starts: that
// process validates the inputs, starts the session server detached (its own
// session, its log in a file it names on stderr), and relays its stdio to
// it over a private Unix socket. When the client goes away the relay dies;
// the session server sees its connection end, runs the verify-command,
// writes and verifies the receipt, and exits.
func MCPMain(ctx context.Context, args []string, getenv Getenv, stdin io.Reader, stdout, stderr io.Writer) int {
	if slices.ContainsFunc(args, func(a string) bool {
		return a == "--connect" || a == "-connect" || hasPrefix(a, "--connect=") || hasPrefix(a, "-connect=")
	}) {
		return mcprelay.Main(ctx, args, stdin, stdout, stderr)
	}
	if getenv(sessionFDEnv) != "" {
		return serveDetached(ctx, args, getenv)
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
	_ = cfg
	sock, err := startSessionServer(args, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "deponent-action mcp: %v\n", err)
		return ExitFail
	}
	return mcprelay.Main(ctx, []string{"--connect", sock}, stdin, stdout, stderr)
}

// startSessionServer starts this binary again as the detached session
// server, listening on a fresh private socket it inherits, and returns the
// socket's path.
func startSessionServer(args []string, stderr io.Writer) (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("cannot locate deponent-action itself: %w", err)
	}
	tmp := os.TempDir()
	if r, err := filepath.EvalSymlinks(tmp); err == nil {
		tmp = r
	}
	ln, err := mcprelay.Listen(tmp)
	if err != nil {
		return "", err
	}
	f, err := ln.File()
	if err != nil {
		_ = ln.Close()
		return "", err
	}
	defer f.Close()
	logf, err := os.CreateTemp(tmp, "deponent-mcp-*.log")
	if err != nil {
		_ = ln.Close()
		return "", err
	}
	defer logf.Close()
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		_ = ln.Close()
		return "", err
	}
	defer devnull.Close()
	cmd := exec.Command(self, append([]string{"mcp"}, args...)...)
	cmd.Env = append(os.Environ(), sessionFDEnv+"=3", sessionDirEnv+"="+ln.Dir())
	cmd.Stdin, cmd.Stdout, cmd.Stderr = devnull, logf, logf
	cmd.ExtraFiles = []*os.File{f}
	// Its own session: a client that kills our process group does not
	// take the testimony with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		_ = ln.Close()
		return "", fmt.Errorf("cannot start the session server: %w", err)
	}
	fmt.Fprintf(stderr, "deponent-action mcp: governed session server pid %d; its log: %s\n", cmd.Process.Pid, logf.Name())
	_ = cmd.Process.Release()
	return ln.Path(), nil
}

// serveDetached is the session server: the inherited listener, one client
// connection, then the verify-command and the receipt.
func serveDetached(ctx context.Context, args []string, getenv Getenv) int {
	fd, err := strconv.Atoi(getenv(sessionFDEnv))
	if err != nil || fd < 3 {
		fmt.Fprintf(os.Stderr, "deponent-action mcp: %s is %q, not an inherited descriptor\n", sessionFDEnv, getenv(sessionFDEnv))
		return ExitUsage
	}
	ln, err := mcprelay.FromFile(os.NewFile(uintptr(fd), "mcp-listener"), getenv(sessionDirEnv))
	if err != nil {
		fmt.Fprintf(os.Stderr, "deponent-action mcp: %v\n", err)
		return ExitFail
	}
	defer ln.Close()
	cfg, err := parseServeArgs(args, getenv)
	if err != nil {
		fmt.Fprintf(os.Stderr, "deponent-action mcp: %v\n", err)
		return ExitUsage
	}
	res, err := Run(ctx, cfg, Options{Getenv: getenv, Stdout: os.Stdout, MCPListener: ln})
	if err != nil {
		fmt.Fprintf(os.Stderr, "deponent-action mcp: %v\n", err)
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

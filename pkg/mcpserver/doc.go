// Package mcpserver is Deponent's governed MCP server: the tools a live
// agent (Claude Code, Codex, any MCP client) gets instead of its own, each
// call sent through a kernel.Cell — gate, jail or confined file I/O, one
// ledger entry — before its result returns. It is built on the official
// go-sdk (github.com/modelcontextprotocol/go-sdk) and serves any transport:
// stdio (`deponent-action mcp`), or a Unix socket reached through
// pkg/mcprelay from inside the agent jail.
//
// # Tools
//
// run_cmd {cmd}, read_file {path}, write_file {path, content}, edit_file
// {path, old, new} (exact, unique replacement) and list_dir {path}. Each
// input schema lists exactly its string keys, all required, nothing else;
// the server does not rely on a client honouring it. The descriptions state
// the rules an agent needs to act on: workspace-relative paths, no network,
// the allowlisted programs, what is refused, the limits, edit_file for
// changes.
//
// # Contract (each point tested with the go-sdk client)
//
//   - Every tools/call — of one of the five tools, of a tool that does not
//     exist (a receiving middleware catches it before the SDK's protocol
//     error), with arguments that are malformed — gives exactly one entry,
//     appended before the result is sent. Arguments are parsed strictly
//     (canon.Parse: a JSON object, no duplicate key, valid UTF-8, at most
//     MaxArgumentBytes); anything else is refused as malformed-params with
//     the raw text kept in the entry's params. Keys and types are the
//     gate's to check (wrong, missing or extra keys, wrong types: a BLOCK).
//   - Concurrent calls are serialised by the Cell: the chain's order is the
//     execution order.
//   - ALLOW: run_cmd returns the exit code, "killed: …" when the jail
//     stopped it, and the last TailBytes (default 30 KiB) of its output
//     with a note saying how much was cut (the entry hashes the full
//     output); read_file and list_dir return the content; write_file and
//     edit_file say what changed. A non-zero exit is a result, not a tool
//     error; an allowed action that failed (a missing file, an edit whose
//     text matched zero or several times) is a tool error with the reason.
//   - BLOCK: a tool error carrying the verdict, the class, the gate's
//     reason, that the call was not executed and is recorded, and advice by
//     class (e.g. "there is no network access", "use paths relative to the
//     workspace root"), so an agent can change course.
//   - Past MaxToolCalls (default 500) every call is refused without being
//     decided or executed, recorded as class tool-call-limit, and the
//     result tells the agent to stop; evidence.Assess fails such a run.
//   - A call cancelled by the client (notifications/cancelled) or in flight
//     when the session ends (the SDK then cancels it) still writes its
//     entry: a command is stopped by the jail and recorded "killed:
//     canceled", a file tool not yet started is not executed. Serve returns
//     only after every started call is recorded (Drain).
//   - If an entry cannot be written, the call's result is withheld (a tool
//     error says so) and, the ledger being failed, no further call
//     executes (the Cell refuses it); LedgerErr reports it.
//
// The agent name recorded in entries is the harness's (Options.Agent),
// never one the client declares: a client cannot speak as
// deponent-harness or deponent-canary, whose entries Assess judges by other
// rules.
//
// # Not covered
//
// What the client does with a result, and anything the client does
// outside these tools (that is the agent jail's part, see pkg/jail). A
// refused call costs the agent nothing but the call; the limit bounds how
// many it can make. The transport is trusted to be the agent's: whoever can
// reach it speaks as the agent.
package mcpserver

// Package kernel is Deponent's governed path for an agent's tool calls: the
// Cell, which ties the gate (package gate), the jail (package jail) and the
// record (package evidence) into the one path every action takes.
//
// # The invariant
//
// Nothing irreversible or out-of-sandbox executes without a recorded ALLOW,
// and the agent saying "done" is never the evidence. Every action goes
// through Cell.Do: gated, executed only if allowed (and only if the ledger
// can still record), then appended to the ledger — BLOCKs included. Closure
// is recomputed, never read from a stored flag: evidence.VerifyEntries and
// evidence.VerifyLedger re-link the chain from its genesis and recompute
// every hash; evidence.VerifyReceipt recomputes the chain and the
// receipt's content hash; evidence.Assess recomputes the outcome
// (GOVERNED_PASS) from the chain.
//
// # The Cell
//
//   - File tools (read_file, write_file, edit_file, list_dir) are confined
//     to the sandbox by an os.Root of it, whatever changed since the gate
//     looked; a write goes to a temporary file beside the target and a
//     rename, so a failed write leaves the old content. read_file and
//     edit_file read only a regular file and list_dir only a directory,
//     opened without waiting: a named pipe a step left where the agent
//     looks is refused at once, never waited on with the Cell's lock held
//     (tested live: a jailed step's pipes, its regular file as the
//     control). edit_file replaces
//     the one occurrence of its exact old text (overlapping occurrences
//     counted) through the same write; zero or several matches change
//     nothing and the error says how many. A git config (jail.IsGitConfig:
//     e.g. a bare repository's config, which the gate does not protect) is
//     not edited: read_file and jailed commands see it only sanitized, and
//     a match count over its raw bytes would reveal the credentials one
//     guess at a time. list_dir lists one directory,
//     sorted, each entry typed (directory, file with its size, symlink —
//     never followed — or other), at most MaxListEntries entries with a
//     count of the rest.
//   - Calls are serialised: Do (and Refuse and Record, the harness's own
//     entries) hold one lock from the decision to the appended entry, so
//     concurrent callers — a live agent's parallel tool calls — run one at
//     a time and the chain's order is the execution order. A call whose
//     context ended before its turn is still decided and recorded; a
//     command is then refused by the jail as "canceled", a file tool is not
//     executed.
//   - A write is always seen by the next command, whatever caches by
//     mtime (issue 18). Python validates a .pyc by its source's mtime in
//     whole seconds and its size; make and ninja compare an input's mtime
//     with an output's, some at one-second granularity. So a file written
//     in the second a command ended — a same-size, one-character fix right
//     after the failing test run — could look unchanged. Every write
//     therefore carries an mtime in a later whole second than the end of
//     the last command (and than the Cell's creation, for what ran
//     before): when the clock is still in that second the write waits for
//     it to turn (under a second, cancellable; a cancelled write is not
//     made), so mtimes stay true times, never in the future (which make
//     and tar flag as clock skew). Writes with no command between them do
//     not wait. A file whose old mtime a command set into the future gets
//     a stamp outside that second too. Not covered: files a command
//     changes itself (sed -i) in the same second as an earlier command's
//     cache; for Python, the jail runs commands with
//     PYTHONDONTWRITEBYTECODE=1 so the sandbox does not fill with bytecode
//     the agent never wrote (see package jail). edit_file writes through
//     the same path. Concurrent actions through one Cell run one at a
//     time (below), so each completes before the next starts.
//   - Commands run only through a jail. Without a usable jail the Cell
//     refuses every command and records the refusal (class no-jail);
//     gate-only execution exists only through the jail package's explicit
//     "none" opt-in and is recorded "unjailed" in every entry it runs.
//   - A command's entry records what the jail reports: exit code, kill,
//     the memory guard that applied, and the protected paths the command
//     changed (the jail's tripwire, field "tampered"; evidence.Assess fails
//     such a run whatever the exit code). Its outcome_sha256 is the sha256
//     of the full output; the harness may ask (Call.Output) for that output
//     to be kept at a path outside the sandbox and copied live while the
//     command runs — the jail writes both, so the kept file is exactly what
//     the entry testifies to.
//   - A dry run gates and records every action and executes none.
//   - Nothing executes that the ledger can no longer record: after a failed
//     append, every later action is refused.
//   - A panic while executing is recovered, recorded as the action's error
//     and returned to the agent; the loop goes on, the verdict stands.
//
// What the gate, the jail and the record each cover and do not cover is in
// their own package docs.
package kernel

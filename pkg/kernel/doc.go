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
//     rename, so a failed write leaves the old content. edit_file replaces
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
//   - Commands run only through a jail. Without a usable jail the Cell
//     refuses every command and records the refusal (class no-jail);
//     gate-only execution exists only through the jail package's explicit
//     "none" opt-in and is recorded "unjailed" in every entry it runs.
//   - A dry run gates and records every action and executes none.
//   - Nothing executes that the ledger can no longer record: after a failed
//     append, every later action is refused.
//   - A panic while executing is recovered, recorded as the action's error
//     and returned to the agent; the loop goes on, the verdict stands.
//
// What the gate, the jail and the record each cover and do not cover is in
// their own package docs.
package kernel

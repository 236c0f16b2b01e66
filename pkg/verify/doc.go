// Package verify is the offline verifier behind deponent-verify: the
// required status check that blocks a merge unless a run's testimony
// recomputes, and what a release manager runs on a downloaded artifact. It
// trusts nothing it reads. Every receipt is recomputed by package evidence
// (strict parse, schema, chain re-linked from its genesis,
// every entry hash and the receipt's content hash recomputed), every bare
// ledger is re-linked in a stream, and the policies are then judged on the
// recomputed facts, never on a stored flag.
//
// # What a pass proves
//
//   - Internal consistency: no entry of a chain was changed, removed,
//     inserted or reordered since it was hashed, and no field of a receipt
//     was changed since its content hash (its "signature") was taken.
//   - Consistency of the stored summary: when a receipt carries the
//     action's governance object (schema deponent-governance/v1), its
//     counts (entries, allowed, blocked, canaries run and held) and
//     verify_passed equal the ones recomputed from the chain, and a stored
//     GOVERNED_PASS is what evidence.Assess, the one definition of a pass,
//     recomputes from the chain. This holds with or without flags.
//   - With --expect-commit and --expect-repo: the receipt's provenance
//     binds it to that commit and repository, so an old, valid receipt does
//     not pass for new code.
//   - The recorded policy hash and jail (provenance policy_sha256 and jail,
//     reported per receipt) are the ones the run recorded; --require-jailed
//     checks them and every executed command's entry.
//
// # What a pass does not prove
//
//   - Authorship. Ledgers are hash-chained and receipts carry a content
//     hash; nothing is signed with a key. Whoever can rewrite a chain from
//     its genesis, or a whole receipt, can produce one that verifies. The
//     provenance fields are claims the harness recorded, covered by the
//     content hash: they show the receipt was not edited, not who wrote it.
//     Where the artifact came from is the CI system's word (which run
//     uploaded it), not this package's.
//   - Completeness of a bare ledger. Dropping a ledger's last entries leaves
//     a valid shorter chain; only an anchor known from elsewhere reveals it:
//     --expect-len or --expect-head, or the receipt of its session beside
//     it (see Store rules). A receipt's chain is covered by its content
//     hash, so a receipt cannot be truncated unnoticed.
//   - For receipts without a governance object (e.g. the Python
//     reference's): the outcome is stored, not recomputed. The report says
//     so ("(stored)" in text, no recomputed_outcome in JSON).
//
// # Inputs
//
// A PATH is a receipt (.json), a bare ledger (.jsonl), a zip as downloaded
// from a workflow run's artifacts (by extension or by its magic number; read
// in place, never extracted), a directory (walked recursively), or "-" (one
// receipt from standard input). A pipe or device named on the command line,
// such as <(…), is read as one receipt (or ledger, if named .jsonl).
//
// Inside a directory or zip, *.json files are receipts, *.jsonl files other
// than index.jsonl are bare ledgers, index.jsonl and LATEST are a store's
// bookkeeping, and other files are counted as ignored. Zips inside a
// directory are not opened: name them on the command line.
//
// Symlinks: a symlink named on the command line is followed (the user chose
// it). Inside a directory, no symlink is followed, to a file or to a
// directory: each one is a FAIL "symlink not followed", so a loop cannot
// hang the walk and a link cannot pull in files from outside the tree.
// Files found by the walk are opened with O_NOFOLLOW and O_NONBLOCK (on
// Unix) and must be regular: a FIFO, socket or device is a FAIL, never
// read. The same holds for symlink and special members of a zip.
//
// # Store rules
//
// A directory (or zip directory) that holds an index.jsonl or a LATEST is
// one producer's directory of a receipt store, <root>/<producer>/, and:
//
//   - each receipt in it must be named <receipt_id>.json, and the directory
//     must be named after its producer (a store at a zip's root fails: it
//     has no producer directory);
//   - each line of index.jsonl must be a JSON object with the string fields
//     receipt_id, file, ts, outcome and signature; file must be
//     <receipt_id>.json and exist beside it; no id may appear twice; the
//     receipt it names must verify, and its id, recomputed signature,
//     outcome and ts must equal the line's;
//   - every receipt beside an index.jsonl must be listed in it;
//   - LATEST must hold exactly "<receipt_id>\n", naming a receipt the index
//     lists, that is beside it and verifies; LATEST without index.jsonl
//     fails;
//   - an index.jsonl that lists receipts with no LATEST beside it fails:
//     evidence.Persist moves LATEST only after a receipt passed its write-time
//     verification, so its absence means the last persist did not complete;
//   - a ledger named ledger-<session>.jsonl (the action writes its chain
//     there, beside the receipt) whose session has no receipt beside it
//     fails: the run that wrote it did not finish.
//
// In any directory, a ledger-<session>.jsonl is paired with the verified
// receipts of that session beside it: it must have their chain's length and
// head (else it, or the receipt, was cut short or changed after the receipt
// was written). A paired ledger is thereby anchored by the receipt's content
// hash (anchored_by in JSON).
//
// A directory without index.jsonl or LATEST (e.g. a folder of loose
// receipts) has no store rules; each receipt is verified on its own.
//
// # Policies
//
// Each is off by default and fails closed: a policy that no item could
// satisfy (e.g. --expect-commit when no receipt was verified, --expect-len
// when no bare ledger was) is itself a FAIL.
//
//   - RequireOutcome (--require-outcome V): the stored outcome equals V and,
//     for a receipt with a governance object, evidence.Assess recomputes the
//     same outcome from the chain (else "stored outcome X but the chain
//     recomputes to Y").
//   - RequireJailed (--require-jailed): every executed command (a run_cmd
//     entry with verdict ALLOW and not dry_run: true) names a real jail,
//     bwrap or seatbelt, in its "jail" field; no entry carries
//     "unjailed": true; governance.unjailed is not true; every jail the
//     receipt records (provenance.jail, governance.jail) is a real one, and
//     at least one is recorded. A receipt that records no jail fails.
//   - MaxBlocked (--max-blocked N): at most N BLOCK entries, not counting
//     the harness's canaries (agent deponent-canary), which are blocked by
//     design. The printed blocked count is the chain's total.
//   - ExpectCommit (--expect-commit SHA): provenance.commit equals the full
//     40- or 64-hex-digit SHA, case-insensitively; a prefix never matches.
//   - ExpectRepo (--expect-repo OWNER/NAME): provenance.repository equals
//     it, ASCII case-insensitively (GitHub names are case-insensitive).
//   - MinReceipts (--min-receipts N, default 1): each directory or zip PATH
//     holds at least N receipts (failed ones count; they fail on their own).
//   - Anchors.Len and Anchors.Head (--expect-len, --expect-head): the
//     kernel's anchors, for every bare ledger.
//
// A bare ledger has no outcome and no provenance. Named on the command line
// with --require-outcome, --expect-commit or --expect-repo, it fails ("pass
// the receipt"); found in a directory or zip, those policies are the
// receipts' business and the ledger is checked against them instead.
// --require-jailed and --max-blocked apply to a ledger's entries, and the
// anchors to every bare ledger. Bare ledgers are verified from the genesis
// "GENESIS". An empty bare ledger is a consistent chain that proves
// nothing, so it fails unless --expect-len 0 says emptiness is expected.
//
// # Caps (bounded memory)
//
//   - A receipt: evidence.MaxReceiptBytes (64 MiB), refused before reading
//     when the file or zip header says it is bigger; nesting 64 levels.
//   - A ledger line: evidence.MaxLedgerLine (1 MiB); a ledger streams, in
//     bounded memory whatever its length.
//   - Receipts in memory at once: MemoryBudget (256 MiB) across workers,
//     which number GOMAXPROCS. Only per-item facts are kept after a
//     receipt is verified, never its body.
//   - A directory PATH: MaxWalkEntries (200,000) entries, MaxWalkDepth (64)
//     levels.
//   - A zip PATH: MaxZipEntries (20,000) members (checked against the
//     end-of-central-directory claim before the listing, and after);
//     MaxZipDirectoryBytes (8 MiB) of central directory read;
//     MaxZipTotalBytes (1 GiB) inflated in all; a member that inflates more
//     than MaxCompressionRatio (100:1) past its first 64 KiB is refused.
//     Sizes are counted on the bytes actually inflated, never taken from a
//     header. Member names must be clean relative UTF-8 paths: "..",
//     absolute names, drive letters, backslashes, control characters and
//     duplicated names are each a FAIL, and such a member is never read.
//   - index.jsonl: MaxIndexBytes (64 MiB), MaxIndexLine (64 KiB) a line.
//     LATEST: 512 bytes.
//
// # Output
//
// WriteText prints one line per item,
//
//	OK    <path>  receipt=<id> outcome=<outcome>(recomputed|stored) entries=N allowed=N blocked=N
//	FAIL  <path>  receipt=- outcome=- entries=0 allowed=0 blocked=0  -- <where>: <reason>
//
// (ledgers: "ledger entries=… head=… [anchored-by=<id>]"; index: "index receipts=N"; LATEST:
// "latest receipt=<id>"; directory and zip: "<kind> receipts=N ledgers=N
// ignored=N"), then "N verified, M failed (R receipts, L ledgers)" and a
// note on what a pass means. Paths of zip members read
// "artifact.zip!dir/name.json". Text from the evidence is escaped onto one
// line.
//
// WriteJSON prints one document, the Report:
//
//	{
//	  "tool": "deponent-verify", "version": "0.1.0",
//	  "ok": bool,                 // every item passed (and there was one)
//	  "verified": int, "failed": int,   // items
//	  "receipts": int, "ledgers": int,  // receipt and ledger items
//	  "policy": {"require_outcome": string|null, "require_jailed": bool,
//	             "max_blocked": int|null, "expect_commit": string|null,
//	             "expect_repo": string|null, "min_receipts": int,
//	             "expect_len": int|null, "expect_head": string|null},
//	  "items": [{
//	    "path": string,
//	    "kind": "receipt"|"ledger"|"index"|"latest"|"directory"|"zip"|"entry"|"policy",
//	    "ok": bool,        // passed every check and policy
//	    "verified": bool,  // the chain (and signature) recomputed cleanly; false for items that are not chains
//	    "receipt_id", "producer", "session_id", "ts", "outcome": string (omitted when empty),
//	    "recomputed_outcome": string (omitted: no governance object),
//	    "entries", "allowed", "blocked": int (0 for non-chain items),
//	    "head", "signature", "repository", "commit", "jail", "policy_sha256": string (omitted when empty),
//	    "anchored_by": string (a ledger: the receipt whose chain it matches; omitted when none),
//	    "receipts", "ledgers", "ignored": int (containers and index; omitted when 0),
//	    "problems": [{"where": string (omitted when none), "message": string}], // first = the reason; at most 16
//	    "notes": [string]
//	  }],
//	  "note": string  // what a pass proves and what it does not
//	}
//
// In GitHub Actions, WriteAnnotations prints an "::error title=deponent-
// verify::<path>: <reason>" line per failure (at most 50; '%', '\r' and
// '\n' escaped per the workflow-command rules) and AppendStepSummary adds a
// Markdown table (failures first, at most 500 rows, cells escaped) to the
// file GITHUB_STEP_SUMMARY names.
//
// Exit status (Report.ExitCode): 0 when every item verified and every
// policy held, 1 otherwise; usage errors (*UsageError) are 2, decided by
// the command.
package verify

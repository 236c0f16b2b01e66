// Package verify is the offline verifier behind deponent-verify: the
// required status check that blocks a merge unless a run's testimony
// recomputes, and what a release manager runs on a downloaded artifact. It
// trusts nothing it reads. Every receipt is recomputed by package evidence
// (evidence.CheckReceipt: strict parse, schema, chain re-linked from its
// genesis, every entry hash and the receipt's content hash recomputed, the
// outcome recomputed from the chain by evidence.Assess), every bare ledger
// is re-linked in a stream, and every requirement is then answered from
// what was recomputed, never from a field the receipt stores.
//
// # Strict by default
//
// The zero Options (and deponent-verify with no flag) require, of every
// receipt:
//
//   - Outcome: the chain recomputes, under the receipt's governance object
//     (deponent-governance/v2), to GOVERNED_PASS, which evidence.Assess
//     gives only when the out-of-band verify command was configured, ran
//     and passed. A receipt without a governance object (the Python
//     reference's) has a stored outcome only, and fails this requirement.
//   - Canaries: the run enabled the canaries and every one it expected ran
//     and held (Assessment.CanariesOK); a run jailed by a real jail also
//     ran the jail's own canaries.
//   - Jail: every command ran in a real jail, bwrap or seatbelt
//     (Assessment.Jailed: the run recorded a real jail, did not allow
//     running unjailed, every executed command names that jail, none is
//     marked unjailed, no entry is unreadable or names a tool nothing
//     executes).
//
// and of the run: at least one distinct receipt (by receipt id) verifies.
// Each requirement has a named relaxation, which the report prints
// ("relaxed: FLAG: what it dropped") and lists in Policy.Relaxed:
//
//	AllowFail             --allow-fail              any recomputed outcome passes
//	AllowNoVerifyCommand  --allow-no-verify-command GOVERNED_UNVERIFIED passes too
//	RequireOutcome        --require-outcome V       the chain must recompute to V instead
//	AllowNoCanaries       --allow-no-canaries       the canaries need not have run and held
//	AllowNoJailCanaries   --allow-no-jail-canaries  the jail's own canaries need not have run
//	AllowUnjailed         --allow-unjailed          commands may have run outside a real jail
//	AllowStoredOutcome    --allow-stored-outcome    a receipt without governance passes on its stored outcome
//	ChainOnly             --chain-only              chains, content hashes and stores only
//	MinReceipts = 0       --min-receipts 0          no receipt need verify
//	NoReadTimeout         --read-timeout 0          stdin and pipes may take forever
//	AllowAnyCommit        --allow-any-commit        not bound to $GITHUB_SHA / $GITHUB_REPOSITORY
//
// A receipt without a governance object records no run configuration:
// with --allow-stored-outcome its stored outcome is taken for the outcome
// requirement, but nothing shows canaries or a jail, so those fail unless
// relaxed too (the reference's receipts need --allow-stored-outcome
// --allow-no-canaries --allow-unjailed, or --allow-fail in place of the
// first).
//
// Whatever is relaxed, a receipt fails when it contradicts itself: a
// stored outcome other than the recomputed one, a stored governance
// summary (counts, verify_ran, verify_passed, reasons) other than the
// recomputed one (evidence.CompareGovernance), a governance object that
// cannot be read (an unknown schema, a field of the wrong type: nothing is
// then recomputed), a provenance jail or policy hash other than the
// governance object's, a governed receipt whose chain does not start at
// the genesis GENESIS (the tail of a chain, its first entries dropped
// with no entry re-hashed), two receipts that claim one id with different
// content, and two receipts with different ids that hold one chain (same
// length and head): one run's testimony re-signed as another run, for
// another commit or to be counted twice.
//
// # Expectations
//
//   - ExpectCommit (--expect-commit SHA): provenance.commit equals the full
//     40- or 64-hex-digit SHA, case-insensitively; a prefix never matches.
//   - ExpectRepo (--expect-repo OWNER/NAME): provenance.repository equals
//     it, ASCII case-insensitively.
//   - Options.BindGitHub (called by the command): inside GitHub Actions,
//     GITHUB_SHA and GITHUB_REPOSITORY stand for the two above when they
//     are not given, unless AllowAnyCommit or ChainOnly; a malformed value
//     is a usage error naming the variable.
//   - ExpectPolicySHA256 (--expect-policy-sha256 H): the policy hash the
//     receipt records (governance.policy_sha256, provenance.policy_sha256)
//     is H; a receipt that records none fails.
//   - MaxBlocked (--max-blocked N): at most N of the agent's BLOCK entries
//     (Assessment.AgentBlocked; the canaries' are blocked by design and
//     not counted, unreadable entries are counted as blocked).
//   - MinReceipts (--min-receipts N, default 1): at least N distinct
//     receipt ids, each with its own chain, verify across all PATHs. A receipt read twice (a copy, a
//     store and its zip) is counted once and marked duplicate_of. Every
//     directory or zip PATH must also hold a receipt, unless N is 0.
//   - Anchors.Len (--expect-len): the length of every bare ledger.
//   - Anchors.Head (--expect-head): the last entry hash, recomputed, of
//     every bare ledger and every receipt's chain. It binds a receipt to a
//     head held outside the artifact (the job log prints it, the action
//     outputs it as chain-head): a receipt edited and re-signed, or a
//     chain rebuilt from its genesis, ends on another head.
//
// An expectation that nothing could meet (--expect-commit with no receipt,
// --expect-len with no bare ledger) is itself a failure.
//
// # What a pass proves
//
//   - Internal consistency: no entry of a chain was changed, removed,
//     inserted or reordered since it was hashed, and no field of a receipt
//     was changed since its content hash (its "signature") was taken.
//   - The recomputed outcome and facts: what evidence.Assess says of the
//     chain under the run's recorded configuration, and that the stored
//     summary says the same.
//   - The bindings asked for: the receipt's provenance names that commit,
//     repository and policy hash.
//
// # What a pass does not prove
//
//   - Authorship. Ledgers are hash-chained and receipts carry a content
//     hash; nothing is signed with a key. Whoever can rewrite a chain from
//     its genesis, or a whole receipt, can produce one that verifies, and
//     the provenance and governance fields are the harness's claims.
//     Where the artifact came from is the CI system's word, not this
//     package's.
//   - Completeness of a bare ledger. Dropping a ledger's last entries leaves
//     a valid shorter chain; only an anchor known from elsewhere reveals it:
//     --expect-len or --expect-head, or the receipt of its session beside
//     it (see Store rules). A receipt's chain is covered by its content
//     hash.
//   - For receipts accepted with --allow-stored-outcome: the outcome is
//     the receipt's word ("(stored)" in text, outcome_source "stored" in
//     JSON).
//
// # Inputs
//
// A PATH is a receipt (.json), a bare ledger (.jsonl), a zip as downloaded
// from a workflow run's artifacts (by extension or by its magic number; read
// in place, never extracted), a directory (walked recursively), or "-" (one
// receipt from standard input). A pipe or device named on the command line,
// such as <(…), is read as one receipt (or ledger, if named .jsonl).
// Reading standard input or such a pipe, from its open to its last byte,
// takes at most ReadTimeout (DefaultReadTimeout, 60 s): a stream that never
// ends fails instead of hanging the check (the blocked read is left to its
// goroutine).
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
// # Bare ledgers
//
// A bare ledger records no outcome, no run configuration and no
// provenance. Named on the command line, it fails every requirement and
// expectation that needs them (say which), unless relaxed: --chain-only
// checks the chain alone. Found in a directory or zip, those are the
// receipts' business; --max-blocked and the anchors apply to every bare
// ledger. Bare ledgers are verified from the genesis "GENESIS". An empty
// bare ledger is a consistent chain that proves nothing, so it fails
// unless --expect-len 0 says emptiness is expected.
//
// # Store rules
//
// A directory (or zip directory) that holds an index.jsonl or a LATEST is
// one producer's directory of a receipt store, <root>/<producer>/, as
// evidence.Persist and the Python reference's persist() both write it:
//
//   - each receipt in it must be named <receipt_id>.json, and the directory
//     must be named after its producer (a store at a zip's root fails: it
//     has no producer directory);
//   - each line of index.jsonl must be a JSON object of strings: receipt_id,
//     ts and outcome always; model, task, file and signature when present
//     (the reference writes model and task, this implementation all
//     seven); any other field fails. No id may appear twice; the receipt it
//     names must be beside it (<receipt_id>.json) and verify, and each
//     field present must say what the receipt says: its ts, outcome,
//     model, its task's first 80 characters, its file name, its recomputed
//     content hash;
//   - every receipt beside an index.jsonl must be listed in it;
//   - LATEST must hold one receipt id, with or without a newline after it,
//     naming the newest receipt the index lists (its last line), which is
//     beside it and verifies; LATEST without index.jsonl fails;
//   - an index.jsonl that lists receipts with no LATEST beside it fails:
//     evidence.Persist moves LATEST only after a receipt passed its
//     write-time verification, so its absence means the last persist did
//     not complete;
//   - a ledger named ledger-<session>.jsonl (the action writes its chain
//     there, beside the receipt) whose session has no receipt beside it
//     fails: the run that wrote it did not finish.
//
// In any directory, a governed receipt's live-agent transcript (the file
// its agent.transcript names, beside it) must hash to the chain's
// agent_session outcome_sha256 (the agent object's transcript_sha256):
// else the receipt fails, since the transcript a reader would open is not
// the one the run recorded. A transcript that is not there is not a
// failure. Likewise each outputs-<session>/entry-NNNN.log beside a
// receipt of that session must hash to entry NNNN's outcome_sha256 (and
// name an entry the chain has); such a receipt keeps its entries' hashes
// (evidence.CheckReceiptOutcomes: 32 bytes an entry) until the check.
// mcp-call-NNNN.log files are numbered by arrival, not by entry, and are
// not compared.
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
// # Bounded memory and time
//
// Memory follows what a run holds, not the bytes it reads:
//
//   - A receipt is verified in place (evidence.CheckReceipt): its bytes,
//     one entry at a time as a tree, its provenance (2^14 values) and
//     governance object (2^19 values), and the members of the objects
//     being read (2^14 to an object, 64 levels). An extra field
//     [0,0,0,…] costs its bytes and nothing more; BenchmarkHostileReceipt
//     holds a 64 MiB one, and two of them in a directory, under 200 MB.
//   - A receipt: evidence.MaxReceiptBytes (64 MiB), refused before reading
//     when the file or zip header says it is bigger; an entry in it:
//     evidence.MaxReceiptEntryBytes and evidence.MaxEntryValues.
//   - Receipts being verified at once hold at most MemoryBudget (96 MiB:
//     two receipts near the cap run one after the other) plus
//     receiptOverhead each, across workers, which number GOMAXPROCS. Read
//     buffers are reused within a run; only per-item facts outlive a
//     receipt.
//   - A ledger line: evidence.MaxLedgerLine (1 MiB) and MaxEntryValues; a
//     ledger streams, in bounded memory whatever its length.
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
// The command runs under TuneRuntime (GOGC 400 under a 176 MiB soft memory
// limit): what a run keeps is bounded, so the collector runs rarely until
// the limit nears.
//
// # Output
//
// WriteText prints one line per item,
//
//	OK    <path>  receipt=<id> outcome=<outcome>(recomputed|stored) entries=N allowed=N blocked=N verify=passed canaries=6/6 jailed=yes
//	FAIL  <path>  receipt=<id> outcome=<outcome>(unverified) entries=N allowed=N blocked=N  -- <where>: <reason>
//
// (entries, allowed and blocked are those of the chain as far as it
// verified; verify, canaries and jailed are printed for a receipt with a
// governance object; ledgers: "ledger entries=… head=…
// [anchored-by=<id>]"; index: "index receipts=N"; LATEST: "latest
// receipt=<id>"; directory and zip: "<kind> receipts=N ledgers=N
// ignored=N"), then a "relaxed: FLAG: what" line per relaxation, then "N
// verified, M failed (R receipts, L ledgers)" (N counts the receipts and
// ledgers that passed, M every item that failed; ", D distinct" when a
// receipt was read twice) and a note on what a pass means. Paths of zip
// members read "artifact.zip!dir/name.json". Text from the evidence is
// escaped onto one line.
//
// WriteJSON prints one document, the Report, whose shape is the versioned
// schema ReportSchema (deponent-verify-report/v1), documented field by
// field in docs/verify-json.md; a test holds the document, the structs and
// that page to each other.
//
// In GitHub Actions, WriteAnnotations prints an "::error title=deponent-
// verify::<path>: <reason>" line per failure (at most 50; '%', '\r' and
// '\n' escaped per the workflow-command rules) and AppendStepSummary adds a
// Markdown table (failures first, at most 500 rows, cells escaped, and the
// relaxations) to the file GITHUB_STEP_SUMMARY names.
//
// Exit status (Report.ExitCode): 0 when every item verified and every
// requirement held, 1 otherwise; usage errors (*UsageError, including an
// unknown --require-outcome and contradictory flags) are 2, decided by the
// command, which prints one line ending in "(see --help)".
package verify

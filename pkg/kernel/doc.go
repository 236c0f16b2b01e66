// Package kernel is Deponent's governed path for an agent's tool calls: the
// gate that decides each action before it runs, the Cell that executes what
// was allowed (commands through a jail of package jail) and the
// hash-chained ledger and receipts that record every decision, allowed or
// blocked.
//
// # The invariant
//
// Nothing irreversible or out-of-sandbox executes without a recorded ALLOW,
// and the agent saying "done" is never the evidence. Every action goes
// through Cell.Do: gated, executed only if allowed (and only if the ledger
// can still record), then appended to the ledger — BLOCKs included. Closure
// is recomputed, never read from a stored flag: Ledger.Verify and
// VerifyLedger re-link the chain from its genesis and recompute every hash;
// VerifyReceipt recomputes the chain and the receipt's content hash; Assess
// recomputes the outcome (GOVERNED_PASS) from the chain.
//
// # Ledger
//
// An append-only sha256 chain: entry_hash = hex(sha256(prev_hash + "\n" +
// C(payload))), where payload is the entry without prev_hash and
// entry_hash, C is the canonical JSON of package canon (the Python
// reference's json.dumps(sort_keys=True, ensure_ascii=False)) and the first
// prev_hash is the genesis ("GENESIS"). An entry holds the reference's fields
// (ts, agent, tool, params — each value stringified and cut to 200
// characters —, verdict, blast_class, reason, outcome_sha256, prev_hash,
// entry_hash) and this kernel's extras (exit_code, duration_ms, jail, killed,
// unjailed, dry_run, error, canary), hashed like the rest. The outcome is
// stored as a hash, never verbatim. A ledger file is JSONL, one entry a line
// in canonical form, "\n" only; each append is fsynced before it returns and
// the file is locked against a second writer. A line over MaxLedgerLine, a
// torn last line or a blank line is a break at that line, never dropped or
// repaired.
//
// # Receipts
//
// A receipt (schema deponent-receipt/v1) embeds the chain and signs the body
// with a content hash: signature = hex(sha256(C(receipt without
// "signature"))). Persist refuses a chain that does not verify, writes
// atomically, never overwrites, indexes the receipt and runs VerifyReceiptFile
// on what landed on disk before moving LATEST. VerifyReceipt fails closed on
// anything missing, unparsable, duplicated (duplicate JSON keys) or of the
// wrong type, and on input over MaxReceiptBytes or nested deeper than 64.
//
// # What this proves, and what it does not
//
//   - Tamper-evident, not tamper-proof. Changing, removing, inserting or
//     reordering an entry breaks the re-link or a hash, and verification names
//     the first broken entry and how it broke.
//   - Hash-chained, not signed. There is no key anywhere: the "signature" is
//     a content hash. It proves internal consistency, not authorship. Anyone
//     who can rewrite a ledger or receipt from its genesis can produce a
//     consistent forgery.
//   - Truncation needs an anchor. Dropping the last entries of a bare chain
//     leaves a valid shorter chain; only an expected length or head hash kept
//     elsewhere (Anchors) reveals it. A receipt's signature covers its chain,
//     so a receipt cannot be truncated without detection — unless it is
//     re-signed, which is the forgery above.
//   - The Cell confines file tools to the sandbox (os.Root) and runs commands
//     only through a jail. Without a usable jail it refuses every command and
//     records the refusal; gate-only execution exists only through the jail
//     package's explicit "none" opt-in and is recorded "unjailed" in every
//     entry it runs.
//
// The gate's own contract (what it parses, what it refuses, what it cannot
// see) is in gate.go.
package kernel

// Package evidence is Deponent's record and its judgement: the
// hash-chained ledger every action is appended to, the receipts that embed
// a chain, the governance rules that recompute a run's outcome from a
// chain, and the vocabulary they share with the gate (verdicts, blast
// classes). It imports no shell parser and no jail, so the offline
// verifier (package verify) links only what verification needs.
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
// entry_hash) and this implementation's extras (exit_code, duration_ms, jail,
// killed, unjailed, dry_run, error, canary), hashed like the rest. The
// outcome is stored as a hash, never verbatim. A ledger file is JSONL, one
// entry a line in canonical form, "\n" only; each append is fsynced before it
// returns and the file is locked against a second writer. A line over
// MaxLedgerLine (or of more than MaxEntryValues JSON values), a torn last
// line or a blank line is a break at that line, never dropped or
// repaired. A chain that breaks reports the counts and head of the
// entries before the break.
//
// # Receipts
//
// A receipt (schema deponent-receipt/v1) embeds the chain and signs the body
// with a content hash: signature = hex(sha256(C(receipt without
// "signature"))). Persist refuses a chain that does not verify, writes
// atomically, never overwrites, indexes the receipt (index.jsonl: the
// reference's receipt_id, ts, model, task and outcome, and file and
// signature) and runs VerifyReceiptFile on what landed on disk before
// moving LATEST.
//
// CheckReceipt verifies a receipt in place, holding no tree of it: the
// content hash is streamed from the bytes (canon.Doc), each entry of the
// chain is checked by the ledger's per-line code where it lies and judged
// by an Assessor as it passes, and only the provenance, the governance
// object and one entry at a time are parsed into trees. Its memory is the
// receipt's bytes plus those, whatever else the receipt holds
// (CheckReceiptOutcomes also keeps 32 bytes an entry: its outcome hash,
// for comparing the command outputs kept beside a receipt). It fails
// closed on anything missing, unparsable, duplicated (duplicate JSON keys)
// or of the wrong type, on input over MaxReceiptBytes, nested deeper than
// 64, with an object of more than 2^14 members, an entry of more than
// MaxEntryValues values or MaxReceiptEntryBytes, and returns what it
// established (fields, the chain up to a break, the recomputed
// Assessment) with the error. VerifyReceipt is CheckReceipt and then the
// receipt kept whole as trees (Body, Entries), for callers that read it
// further; it also refuses a receipt of more than 2^21 values.
//
// # Governance
//
// Assess is the one definition of a run's outcome (GOVERNED_PASS and the
// others), computed from a verified chain and the run's configuration
// (Governance). The action decides its outcome with it; the verifier
// recomputes the same outcome from a receipt instead of trusting the one
// stored there. An Assessor is Assess one entry at a time, for a chain read
// as a stream.
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
package evidence

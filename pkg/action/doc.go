// Package action is the logic of the deponent-action binary and of
// action.yml: it runs an agent's build steps through Deponent's pipeline —
// the deny-by-default gate, the OS jail, the hash-chained ledger — and
// writes a receipt an offline verifier recomputes. cmd/deponent-action only
// wires Main to the process.
//
// # Contract
//
// Inputs are read once, before anything runs: action inputs (INPUT_<NAME>,
// hyphenated or underscored) or the identical --flags, a flag winning. Any
// bad input — an unknown jail or on-block, a malformed boolean, a missing
// plan or policy file, a plan line that is not strict JSON or has unknown
// keys or wrong types, a plan that speaks as the harness, steps and plan
// both or neither, a receipts directory inside the sandbox or around it
// (symlinks resolved, also of a directory that does not exist yet), a reused
// session id — is an *InputError that names the input and the fix; nothing
// runs and nothing is written (exit 2).
//
// A run then, in order:
//
//  1. builds a kernel.Cell from the sandbox, the policy and the jail that was
//     asked for. A jail that is not available gives a Cell without one:
//     every command is refused and recorded ("no-jail"), never run by
//     another backend or unjailed. Jail "none" runs commands gate-only, and
//     only with allow-unjailed; every entry and the receipt say so;
//  2. runs the canaries under agent evidence.AgentCanary: four the gate must
//     refuse (destructive, network, write outside, unknown tool) and, when a
//     real jail confines commands and python3 can run, two the gate allows
//     on purpose and the jail must contain — a write into a directory the
//     harness made beside the sandbox, and a connect to a listener the
//     harness holds on the host's loopback. Each probe exits 0 only when its
//     escape failed, and the harness checks the host afterwards: a file
//     found, or a connection accepted, is recorded as an escape whatever
//     the probe reported;
//  3. runs the agent's steps through the Cell in order, one ledger entry
//     each, blocks included; the ledger is written durably (fsync per entry)
//     beside the receipts as the run goes. Each action's log opens before
//     it runs (a ::group:: in Actions, a start line locally); a command's
//     output is copied in live, bounded (LiveBytes), and its full output is
//     kept beside the receipt (outputs-<session>/entry-<NNNN>.log, whose
//     sha256 the entry records) — both through the jail
//     (kernel.Call.Output → jail.Spec.OutputFile, Spec.Live). With a live agent (agent,
//     agent-command; agent.go) the steps are the agent's tool calls instead:
//     the governed MCP server (pkg/mcpserver) is hosted on a private Unix
//     socket outside the agent jail, the agent runs in the agent jail
//     (pkg/jail) with the task as its prompt and starts the relay (`mcp
//     --connect`), each call goes through the Cell as it comes, and the
//     harness then records one agent_session entry (exit code, duration,
//     tool calls, kill, agent jail, transcript hash) and the receipt's
//     signed agent object; the transcript is kept beside the receipt. No
//     agent jail: the agent is not started and the refusal is recorded
//     (killed no-jail), unless allow-unjailed-agent, which the receipt and
//     the summary record. agent-timeout kills the agent's tree; past
//     max-tool-calls every call is refused (tool-call-limit) and a flooding
//     agent is stopped; both fail the run. The `mcp` subcommand (mcpmain.go)
//     serves the same session to a local client, from a detached process so
//     that a client killing its server does not lose the verify command and
//     the receipt;
//  4. runs the verify command as evidence.AgentHarness, through the same gate
//     and jail, after the agent's steps;
//  5. re-links the chain and judges it with evidence.Assess — the single
//     definition of the outcome, which the verifier recomputes from the
//     receipt's signed governance object: GOVERNED_PASS when the chain is
//     intact, the canaries held, no action was tampered or refused for want
//     of a jail, every block was allowed by on-block, and the verify
//     command ran and passed; GOVERNED_UNVERIFIED when all of that held but
//     no verify command was configured; GOVERNED_DRY_RUN for a dry run;
//     GOVERNED_FAIL otherwise. An agent step that ran and failed is
//     testimony, not a verdict — agents run the tests, see them fail and
//     fix the code: it is counted (step-errors) and shown, and fails the
//     run only with fail-on-step-error;
//  6. builds and persists the receipt outside the sandbox, with provenance
//     binding it to the repository, commit, ref, workflow, run, attempt,
//     job, runner, jail, policy hash and tool version; re-verifies it from
//     disk; and only then removes the working ledger (a ledger left behind
//     marks a run that did not finish).
//
// Exit 0 means GOVERNED_PASS with a verified receipt on disk; everything
// else exits 1 (GOVERNED_UNVERIFIED, GOVERNED_FAIL, GOVERNED_DRY_RUN, a
// receipt that could not be written), bad inputs exit 2. The log fences
// everything the agent controls between ::stop-commands:: and a random
// token so that it cannot issue workflow commands; the job summary escapes
// it.
//
// Receipt ids and artifact names are unique per job execution: the default
// session id and artifact name carry the run attempt and a job key, a hash
// of the matrix leg and the job's check run id that action.yml passes in
// (names.go); the binary reports the artifact name it chose (output
// artifact-name) and action.yml's upload step uses it.
//
// # What a pass proves, and what it does not
//
// A GOVERNED_PASS receipt shows that every recorded action went through the
// gate before it ran, that the gate and (when jailed) the jail stopped the
// canaries on this runner (when canaries ran), that the harness's own
// verify command succeeded after the agent's steps, and that the record
// was not edited after it was written. It does not show that every agent
// step succeeded: failed steps are counted in the receipt (step_errors). It does not prove authorship: the ledger is tamper-evident
// and hash-chained, not signed, and the receipt's "signature" is a content
// hash — whoever controls the runner can write a consistent forgery. It
// says nothing about actions that bypassed the harness, about what an
// allowed program did inside the jail beyond the jail's contract, or about
// a runner that was compromised.
//
// With a live agent, the agent's exit code, transcript and final words are
// recorded and never evidence; what it sent over its own network (its model
// API sees what it reads) is outside the record — docs/agents.md says what
// the agent jail does and does not cover.
package action

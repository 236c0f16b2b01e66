package evidence

// Provenance keys the action writes into a receipt's signed "provenance"
// object. They bind the receipt to one run of one workflow on one commit of
// one repository: a verifier given --expect-commit and --expect-repo refuses
// an old, valid receipt presented for new code. They are claims recorded by
// the harness, covered by the signature (a content hash): they prove the
// receipt was not edited after it was written, not who wrote it.
const (
	ProvRepository   = "repository"    // owner/name (GITHUB_REPOSITORY)
	ProvCommit       = "commit"        // full 40-hex commit SHA (GITHUB_SHA)
	ProvRef          = "ref"           // GITHUB_REF
	ProvWorkflow     = "workflow"      // GITHUB_WORKFLOW
	ProvRunID        = "run_id"        // GITHUB_RUN_ID
	ProvRunAttempt   = "run_attempt"   // GITHUB_RUN_ATTEMPT
	ProvJob          = "job"           // GITHUB_JOB
	ProvRunnerOS     = "runner_os"     // RUNNER_OS
	ProvJail         = "jail"          // jail backend that confined commands ("bwrap", "seatbelt", "none", "")
	ProvPolicySHA256 = "policy_sha256" // sha256 of the effective policy
	ProvTool         = "tool"          // "deponent-action"
	ProvToolVersion  = "tool_version"  // the action's version
)

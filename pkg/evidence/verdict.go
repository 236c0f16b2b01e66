package evidence

// Verdict is a ledger entry's "verdict": the gate's answer for one tool
// call. It is ALLOW or BLOCK; nothing else is ever recorded, and a chain
// holding anything else does not verify.
type Verdict string

// The two verdicts.
const (
	VerdictAllow Verdict = "ALLOW"
	VerdictBlock Verdict = "BLOCK"
)

// Class is a ledger entry's "blast_class": what kind of action was allowed,
// or why it was refused. The gate decides it; the ledger records it.
type Class string

// Blast classes. The seed's names are kept where they apply so that ledgers
// written by the Python reference and by this kernel read the same way.
const (
	// ALLOW classes.
	ClassLocalRead  Class = "reversible-local-read"
	ClassLocalWrite Class = "reversible-local-write"
	ClassLocalExec  Class = "bounded-local-exec"

	// BLOCK classes from the seed.
	ClassUnknownTool       Class = "unknown-tool"
	ClassEmptyCommand      Class = "empty-command"
	ClassUnparsable        Class = "unparsable-command"
	ClassOutOfSandboxRead  Class = "out-of-sandbox-read"
	ClassOutOfSandboxWrite Class = "out-of-sandbox-write"
	ClassDestructive       Class = "destructive-or-out-of-scope"
	ClassSubstitution      Class = "command-substitution"
	ClassRedirect          Class = "shell-redirect"
	ClassNotAllowlisted    Class = "program-not-allowlisted"
	ClassArgPathEscape     Class = "arg-path-escape"

	// BLOCK classes added by this kernel.
	ClassProtectedPath  Class = "protected-path"
	ClassCommandTooLong Class = "command-too-long"
	ClassMalformed      Class = "malformed-params"
	ClassNoJail         Class = "no-jail"
	// ClassToolCallLimit: a live agent went past max-tool-calls; every
	// later call is refused, and the run fails closed.
	ClassToolCallLimit Class = "tool-call-limit"

	// BLOCK classes added by the gate's shell parser and program model.
	ClassBackground     Class = "background-job"      // `cmd &`: would outlive the decision and the jail's accounting
	ClassShellConstruct Class = "shell-construct"     // subshells, groups, functions, control flow, `!`, shell builtins that change state
	ClassEnvAssignment  Class = "env-assignment"      // `FOO=1 cmd` or `FOO=1`: the jail's environment is set by policy only
	ClassDeceptiveChar  Class = "deceptive-character" // control, invisible, bidi or path look-alike characters: what is shown is not what runs
	ClassTooComplex     Class = "command-too-complex" // nesting, command, word or glob-match caps exceeded
	ClassUnsafeOption   Class = "unsafe-option"       // an option that makes an allowlisted program run others or follow links out
	ClassGateFailure    Class = "gate-failure"        // the gate itself failed (a bug): fail closed instead of crashing the agent loop
)

// KilledNoJail is an entry's "killed" when the action was refused because
// no jail could confine it (fail closed): nothing was executed.
const KilledNoJail = "no-jail"

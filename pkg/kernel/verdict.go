package kernel

// Verdicts. A Decision is ALLOW or BLOCK; nothing else is ever recorded.
const (
	VerdictAllow = "ALLOW"
	VerdictBlock = "BLOCK"
)

// Blast classes. The seed's names are kept where they apply so that ledgers
// written by the Python reference and by this kernel read the same way.
const (
	// ALLOW classes.
	ClassLocalRead  = "reversible-local-read"
	ClassLocalWrite = "reversible-local-write"
	ClassLocalExec  = "bounded-local-exec"

	// BLOCK classes from the seed.
	ClassUnknownTool       = "unknown-tool"
	ClassEmptyCommand      = "empty-command"
	ClassUnparsable        = "unparsable-command"
	ClassOutOfSandboxRead  = "out-of-sandbox-read"
	ClassOutOfSandboxWrite = "out-of-sandbox-write"
	ClassDestructive       = "destructive-or-out-of-scope"
	ClassSubstitution      = "command-substitution"
	ClassRedirect          = "shell-redirect"
	ClassNotAllowlisted    = "program-not-allowlisted"
	ClassArgPathEscape     = "arg-path-escape"

	// BLOCK classes added by this kernel.
	ClassProtectedPath  = "protected-path"
	ClassCommandTooLong = "command-too-long"
	ClassMalformed      = "malformed-params"
	ClassNoJail         = "no-jail"

	// BLOCK classes added by the gate's shell parser and program model.
	ClassBackground     = "background-job"      // `cmd &`: would outlive the decision and the jail's accounting
	ClassShellConstruct = "shell-construct"     // subshells, groups, functions, control flow, `!`, shell builtins that change state
	ClassEnvAssignment  = "env-assignment"      // `FOO=1 cmd` or `FOO=1`: the jail's environment is set by policy only
	ClassDeceptiveChar  = "deceptive-character" // control, invisible, bidi or path look-alike characters: what is shown is not what runs
	ClassTooComplex     = "command-too-complex" // nesting, command, word or glob-match caps exceeded
	ClassUnsafeOption   = "unsafe-option"       // an option that makes an allowlisted program run others or follow links out
	ClassGateFailure    = "gate-failure"        // the gate itself failed (a bug): fail closed instead of crashing the agent loop
)

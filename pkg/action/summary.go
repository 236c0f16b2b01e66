package action

import (
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/deponent-dev/deponent-action/internal/textsafe"
	"github.com/deponent-dev/deponent-action/pkg/evidence"
)

// RowKind says who acted in a row, and so by which rule it is judged.
type RowKind string

// The kinds of row.
const (
	RowCanary RowKind = "canary" // a rogue action the harness attempts; it must be stopped
	RowCheck  RowKind = "check"  // the harness's own observation on the host after a jail canary
	RowStep   RowKind = "step"   // an action of the agent
	RowVerify RowKind = "verify" // the out-of-band verify command, run by the harness
)

// Row is one ledger entry as the log and the job summary show it.
type Row struct {
	Entry    int // index in the chain (evidence.Assess names entries by it)
	Kind     RowKind
	Canary   string // the canary's name (RowCanary, RowCheck)
	Agent    string
	Tool     string
	Target   string // command, path, or the parameters of another tool
	Verdict  evidence.Verdict
	Class    evidence.Class
	Reason   string
	Executed bool
	Exit     string // exit code, "killed: …", or "" when nothing ran
	Duration time.Duration
	Err      string
	Held     bool // canaries: the canary was stopped
	OK       bool // steps and verify: executed and succeeded
	Output   []string
	Source   string
	// OutputFile is the command's full output, relative to the receipts
	// directory ("" when it was not kept).
	OutputFile string
	// Tampered are the protected paths the action changed, as its entry
	// records them (the jail's tripwire); such a run cannot pass.
	Tampered []string
}

// SummaryData is everything the job summary shows.
type SummaryData struct {
	Outcome       evidence.Outcome
	Reasons       []string
	Rows          []Row
	Jail          string // backend, "" when none was available
	NoJailReason  string
	Unjailed      bool
	DryRun        bool
	OnBlock       string
	PolicySHA256  string
	VerifyCommand string
	Canaries      bool // canaries were enabled
	JailCanaries  bool
	// StepErrors counts the agent's executed actions that failed;
	// FailOnStepError says whether they fail the run.
	StepErrors      int64
	FailOnStepError bool
	Entries         int64
	Allowed         int64
	Blocked         int64
	ChainHead       string
	ReceiptID       string
	ReceiptPath     string
	ReceiptsDir     string
	ReceiptErr      string
	Commit          string
	Repository      string
	RunID           string
	ArtifactName    string
	Upload          bool // the receipts are uploaded as artifact ArtifactName
	// Warnings are what the harness warned about before the run (e.g.
	// credentials or hard links in the sandbox).
	Warnings []string
	// Agent is the live agent's section; nil without one.
	Agent *AgentSummary
}

// maxSummaryRows keeps the job summary under GitHub's 1 MiB cap; the
// receipt holds every entry.
const maxSummaryRows = 500

// RenderSummary renders the job summary in GitHub-flavoured Markdown.
// Every value that came from the agent, the plan or the environment goes
// through textsafe.MarkdownCell or mdCode.
func RenderSummary(d *SummaryData) string {
	var b strings.Builder
	icon := map[evidence.Outcome]string{evidence.OutcomePass: "✅", evidence.OutcomeFail: "❌", evidence.OutcomeDryRun: "⚠️", evidence.OutcomeUnverified: "⚠️"}[d.Outcome]
	if icon == "" {
		icon = "❌"
	}
	fmt.Fprintf(&b, "## %s Deponent: %s\n\n", icon, textsafe.MarkdownCell(string(d.Outcome), 40))
	switch d.Outcome {
	case evidence.OutcomePass:
		b.WriteString(passText(d) + "\n\n")
	case evidence.OutcomeUnverified:
		b.WriteString("The run was governed cleanly — " + heldText(d) + " — but **no `verify-command` was configured**, " +
			"so nothing independent of the agent checked the result. That is never a pass: the step exits 1 (only `GOVERNED_PASS` exits 0). " +
			"Set `verify-command` (e.g. the test suite) to have the harness check the work itself.\n\n")
	case evidence.OutcomeDryRun:
		b.WriteString("Dry run: every action was gated and recorded, **nothing was executed**, so nothing about its effect is proven.\n\n")
	}
	if len(d.Reasons) > 0 {
		b.WriteString("**Why not GOVERNED_PASS:**\n\n")
		for _, r := range d.Reasons {
			fmt.Fprintf(&b, "- %s\n", textsafe.MarkdownCell(r, 300))
		}
		b.WriteString("\n")
	}
	if t := tamperedRows(d.Rows); len(t) > 0 {
		b.WriteString("**Protected paths changed** (the jail's tripwire; the run cannot pass):\n\n")
		for _, r := range t {
			fmt.Fprintf(&b, "- entry %d (%s %s): %s\n", r.Entry, textsafe.MarkdownCell(r.Agent, 40), textsafe.MarkdownCell(r.Tool, 40),
				textsafe.MarkdownCell(strings.Join(r.Tampered, ", "), 500))
		}
		b.WriteString("\n")
	}
	if len(d.Warnings) > 0 {
		b.WriteString("**Warnings:**\n\n")
		for _, w := range d.Warnings {
			fmt.Fprintf(&b, "- ⚠️ %s\n", textsafe.MarkdownCell(w, 600))
		}
		b.WriteString("\n")
	}
	if d.ReceiptErr != "" {
		fmt.Fprintf(&b, "**No receipt was written:** %s\n\n", textsafe.MarkdownCell(d.ReceiptErr, 500))
	}

	jailText := mdCode(d.Jail)
	switch {
	case d.Jail == "":
		jailText = "**none available — every command was refused (fail closed)**"
		if d.DryRun {
			jailText = "none available (dry run: nothing executed)"
		}
		if d.NoJailReason != "" {
			jailText += ": " + textsafe.MarkdownCell(d.NoJailReason, 300)
		}
	case d.Unjailed:
		jailText = "`none` — **commands ran UNJAILED** (gate-only, allow-unjailed)"
	}
	b.WriteString("| | |\n|---|---|\n")
	fmt.Fprintf(&b, "| jail | %s |\n", jailText)
	fmt.Fprintf(&b, "| policy sha256 | %s |\n", mdCode(d.PolicySHA256))
	fmt.Fprintf(&b, "| entries | %d (%d allowed, %d blocked) |\n", d.Entries, d.Allowed, d.Blocked)
	fmt.Fprintf(&b, "| on-block | %s |\n", mdCode(d.OnBlock))
	fmt.Fprintf(&b, "| agent steps that failed | %d (fail-on-step-error: %s) |\n", d.StepErrors, mdCode(fmt.Sprint(d.FailOnStepError)))
	fmt.Fprintf(&b, "| chain head | %s |\n", mdCode(d.ChainHead))
	if d.ReceiptID != "" {
		fmt.Fprintf(&b, "| receipt | %s |\n", mdCode(d.ReceiptID))
	}
	b.WriteString("\n")
	b.WriteString(renderAgentSection(d.Agent))

	b.WriteString("### Actions\n\n")
	b.WriteString("| entry | agent | tool | command / path | verdict | class | exit | duration |\n")
	b.WriteString("|---:|---|---|---|---|---|---:|---:|\n")
	for i, r := range d.Rows {
		if i == maxSummaryRows {
			fmt.Fprintf(&b, "\n… %d more entries are in the receipt.\n", len(d.Rows)-maxSummaryRows)
			break
		}
		verdict := r.Verdict
		if verdict == evidence.VerdictBlock {
			verdict = "🛑 BLOCK"
		}
		tgt := r.Target
		if r.Kind == RowCanary && strings.HasPrefix(r.Canary, evidence.JailCanaryPrefix) {
			tgt = shortCmd(tgt) // the probe's program is in the log and the receipt
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | %s | %s | %s |\n", r.Entry,
			textsafe.MarkdownCell(r.Agent, 40), textsafe.MarkdownCell(r.Tool, 40), textsafe.MarkdownCell(tgt, 120),
			verdict, textsafe.MarkdownCell(string(r.Class), 60), textsafe.MarkdownCell(dash(r.Exit), 40), duration(r))
	}
	b.WriteString("\n")

	b.WriteString("### Canaries\n\n")
	var canaries []Row
	for _, r := range d.Rows {
		if r.Kind == RowCanary || r.Kind == RowCheck {
			canaries = append(canaries, r)
		}
	}
	if len(canaries) == 0 {
		b.WriteString("Canaries were not run (canaries: false).\n\n")
	} else {
		b.WriteString("Rogue actions the harness attempted before the agent's steps; each must be stopped — by the gate, or for `jail-` canaries by the jail.\n\n")
		b.WriteString("| canary | verdict | result |\n|---|---|---|\n")
		for _, r := range canaries {
			res := "❌ **not stopped**"
			switch {
			case r.Kind == RowCheck:
				res = "❌ **escape observed on the host**: " + textsafe.MarkdownCell(r.Err, 200)
			case r.Held && r.Verdict == evidence.VerdictBlock:
				res = "✅ blocked by the gate: " + textsafe.MarkdownCell(string(r.Class), 60)
			case r.Held:
				res = "✅ contained by the jail"
			case d.DryRun:
				res = "⚠️ not executed (dry run)"
			}
			fmt.Fprintf(&b, "| %s | %s | %s |\n", textsafe.MarkdownCell(r.Canary, 40), r.Verdict, res)
		}
		if !d.JailCanaries {
			b.WriteString("\nThe jail's own canaries did not run (no real jail was active, a dry run, or python3 was unavailable): only the gate was tested.\n")
		}
		b.WriteString("\n")
	}

	b.WriteString("### Out-of-band verification\n\n")
	if d.VerifyCommand == "" {
		b.WriteString("No `verify-command` was configured: nothing independent of the agent checked the result, so the outcome is `GOVERNED_UNVERIFIED` at best, never a pass.\n\n")
	} else {
		var v *Row
		for i := range d.Rows {
			if d.Rows[i].Kind == RowVerify {
				v = &d.Rows[i]
			}
		}
		res := "❌ did not run"
		if v != nil {
			switch {
			case v.OK:
				res = "✅ passed (exit 0)"
			case v.Verdict == evidence.VerdictBlock:
				res = "❌ blocked: " + textsafe.MarkdownCell(v.Reason, 200)
			case !v.Executed:
				res = "⚠️ not executed"
			default:
				res = "❌ failed: " + textsafe.MarkdownCell(firstNonEmpty(v.Err, "exit "+v.Exit), 200)
			}
		}
		fmt.Fprintf(&b, "The harness ran %s itself, gated and jailed, after the agent's steps: %s\n\n", mdCode(d.VerifyCommand), res)
	}

	b.WriteString("### Verify offline\n\n")
	if dir := outputDirOf(d.Rows); dir != "" {
		fmt.Fprintf(&b, "The full output of every command is in %s of the artifact, one file per entry (`entry-NNNN.log`); "+
			"each file's sha256 is its entry's `outcome_sha256`, so `sha256sum` checks it against the chain.\n\n", mdCode(dir+"/"))
	}
	b.WriteString("The ledger is a sha256 hash chain: tamper-evident, **not signed**. The receipt's `signature` is a content hash; it proves the receipt was not edited after it was written, not who wrote it.\n\n")
	if d.ReceiptID != "" {
		dir := "receipts"
		b.WriteString("```sh\n")
		if d.Upload && d.RunID != "" && d.ArtifactName != "" && safeShellWord(d.RunID) && safeShellWord(d.ArtifactName) {
			fmt.Fprintf(&b, "gh run download %s -n %s -D %s\n", d.RunID, d.ArtifactName, dir)
		}
		args := ""
		if safeShellWord(d.Commit) && d.Commit != "" {
			args += " --expect-commit " + d.Commit
		}
		if safeShellWord(d.Repository) && d.Repository != "" {
			args += " --expect-repo " + d.Repository
		}
		fmt.Fprintf(&b, "deponent-verify --require-outcome GOVERNED_PASS%s %s\n", args, dir)
		b.WriteString("```\n")
	}
	return b.String()
}

func dash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

func duration(r Row) string {
	if !r.Executed {
		return "–"
	}
	return r.Duration.Round(time.Millisecond).String()
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// safeShellWord: only characters that need no quoting.
func safeShellWord(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("._-/:@+=", c) >= 0) {
			return false
		}
	}
	return true
}

// mdCode renders a value the harness knows to be tame (a backend name, a
// hash, a receipt id) as inline code, "–" when empty; anything unexpected
// falls back to an escaped cell (textsafe.MarkdownCode).
func mdCode(s string) string {
	if s == "" {
		return "–"
	}
	return textsafe.MarkdownCode(s, 200)
}

// heldText says what held, without claiming what did not run: canaries
// are named only when they ran.
func heldText(d *SummaryData) string {
	t := "every action went through the gate and was recorded"
	switch {
	case !d.Canaries:
		t += "; canaries were off (`canaries: false`), so neither the gate nor the jail was tested by this run"
	case d.JailCanaries:
		t += "; every canary was stopped, by the gate and by the jail"
	default:
		t += "; every gate canary was stopped (the jail's own canaries did not run)"
	}
	if d.OnBlock == "continue" {
		if n := blockedSteps(d.Rows); n > 0 {
			t += fmt.Sprintf("; %d agent step(s) were blocked and recorded (`on-block: continue`)", n)
		}
	}
	return t
}

// passText is the GOVERNED_PASS line: what held, that the harness's own
// check passed, and the agent steps that failed along the way.
func passText(d *SummaryData) string {
	t := heldText(d)
	t = strings.ToUpper(t[:1]) + t[1:] + "; the out-of-band `verify-command` passed."
	if d.StepErrors > 0 {
		t += fmt.Sprintf(" %d agent step(s) failed along the way: that is testimony, not a verdict — the harness's own check decided.", d.StepErrors)
	}
	return t
}

func blockedSteps(rows []Row) int {
	n := 0
	for _, r := range rows {
		if r.Kind == RowStep && r.Verdict == evidence.VerdictBlock {
			n++
		}
	}
	return n
}

func tamperedRows(rows []Row) []Row {
	var out []Row
	for _, r := range rows {
		if len(r.Tampered) > 0 {
			out = append(out, r)
		}
	}
	return out
}

// outputDirOf is the directory of the kept output files, relative to the
// receipts directory ("" when none was kept).
func outputDirOf(rows []Row) string {
	for _, r := range rows {
		if r.OutputFile != "" {
			return path.Dir(r.OutputFile)
		}
	}
	return ""
}

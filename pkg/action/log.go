package action

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/deponent-dev/deponent-action/internal/textsafe"
	"github.com/deponent-dev/deponent-action/internal/version"
	"github.com/deponent-dev/deponent-action/pkg/evidence"
	"github.com/deponent-dev/deponent-action/pkg/gate"
	"github.com/deponent-dev/deponent-action/pkg/jail"
	"github.com/deponent-dev/deponent-action/pkg/kernel"
)

// header prints what governs the run.
func (r *runner) header(receipts, ledgerPath string, pol *gate.Policy) {
	p := r.rep
	p.printf("Deponent %s — governed run", version.Version)
	p.printf("  sandbox   %s", textsafe.OneLine(r.gate.Sandbox()))
	switch {
	case r.jailName == "" && r.cfg.DryRun:
		p.printf("  jail      none available (dry run: nothing executes)")
	case r.jailName == "":
		p.printf("  jail      NONE AVAILABLE — every command will be refused (fail closed)")
	case r.jailName == jail.NameNone:
		p.printf("  jail      none — commands run UNJAILED (allow-unjailed)")
	default:
		p.printf("  jail      %s", r.jailName)
	}
	pname := "built-in coding-agent policy"
	if r.cfg.PolicyPath != "" {
		pname = textsafe.OneLine(r.cfg.PolicyPath)
	}
	p.printf("  policy    %s (sha256 %s)", pname, shortHash(pol.SHA256()))
	p.printf("  receipts  %s", textsafe.OneLine(receipts))
	if !r.quiet {
		p.printf("  ledger    %s (until the receipt holds its chain)", textsafe.OneLine(ledgerPath))
	}
}

func (r *runner) section(title string) {
	r.rep.printf("%s", title)
}

func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12] + "…"
	}
	return h
}

// stepLog is one action's place in the log, opened before the action
// runs so that the log moves while it does: in Actions a ::group:: whose
// title names the action, fenced (::stop-commands::) because everything
// after it is the agent's text, with the command's output copied in live;
// locally a start line for a command that will run. end closes it with
// the details and prints the result line.
type stepLog struct {
	r     *runner
	token string      // the fence's token (Actions), "" locally
	live  *liveWriter // the live copy of a command's output, nil when none
	file  string      // where the full output is to be kept, "" when not asked
	rel   string      // file, relative to the receipts directory (the artifact's root)
}

// beginStep opens the log of the action about to get entry index entry.
func (r *runner) beginStep(entry int, kind RowKind, canaryName string, call kernel.Call) *stepLog {
	s := &stepLog{r: r}
	tgt := target(call)
	if kind == RowCanary && strings.HasPrefix(canaryName, evidence.JailCanaryPrefix) {
		tgt = shortCmd(tgt)
	}
	runs := call.Tool == evidence.ToolRunCmd && !r.cfg.DryRun && kind != RowCheck
	if runs && r.outputDir != "" {
		name := fmt.Sprintf("entry-%04d.log", entry)
		s.file = filepath.Join(r.outputDir, name)
		s.rel = filepath.ToSlash(filepath.Join(r.cfg.Producer, filepath.Base(r.outputDir), name))
	}
	if !r.rep.gh {
		if runs && !r.quiet && (kind == RowStep || kind == RowVerify) && r.gate.Decide(call.Tool, call.Params).Allowed() {
			r.rep.printf("  #%-3d ▶      %-10s %s …", entry, textsafe.Clip(call.Tool, 10), textsafe.Clip(textsafe.OneLine(tgt), 60))
		}
		return s
	}
	who := textsafe.OneLine(call.Agent)
	if kind == RowCanary || kind == RowCheck {
		who = "canary " + textsafe.OneLine(canaryName)
	} else if kind == RowVerify {
		who = "verify-command"
	}
	s.token = r.rep.openGroup(fmt.Sprintf("#%d %s %s: %s", entry, who, textsafe.Clip(call.Tool, 20), textsafe.Clip(textsafe.OneLine(tgt), 120)))
	if runs {
		s.live = newLiveWriter(r.rep.w, "  | ", "output (live):", LiveBytes)
	}
	return s
}

// output is what the Cell is asked to do with a command's output.
func (s *stepLog) output() kernel.Output {
	o := kernel.Output{File: s.file}
	if s.live != nil {
		o.Live, o.LiveBytes = s.live, LiveBytes
	}
	return o
}

// end closes the action's log: the details (Actions) or, locally, the
// reason and output of what went wrong; then the result line and the
// annotation.
func (s *stepLog) end(row Row, res kernel.ActResult) {
	r := s.r
	shown := false
	if s.live != nil {
		shown = s.live.Close() && s.live.Lines() > 0 && res.OutputFile != ""
	}
	line := r.resultLine(row, res)
	failed := row.Kind != RowCanary && row.Kind != RowCheck && row.Verdict == evidence.VerdictAllow && row.Executed &&
		(row.Err != "" || (row.Tool == evidence.ToolRunCmd && row.Exit != "0") || len(row.Tampered) > 0)
	if !r.rep.gh {
		r.rep.printf("%s", line)
		verbose := failed || (row.Kind == RowCanary && !canaryHeld(row, r.cfg.DryRun) && !r.cfg.DryRun) || row.Kind == RowCheck ||
			(row.Kind != RowCanary && row.Verdict == evidence.VerdictBlock)
		if verbose {
			w, ind := r.rep.w, "        "
			if row.Reason != "" && row.Verdict == evidence.VerdictBlock {
				fmt.Fprintf(w, "%swhy: %s\n", ind, textsafe.Clip(textsafe.OneLine(row.Reason), 160))
			}
			if row.Err != "" {
				fmt.Fprintf(w, "%serror:    %s\n", ind, textsafe.Clip(textsafe.OneLine(row.Err), 400))
			}
			if lines := row.Output; len(lines) > 0 {
				if len(lines) > 10 {
					lines = lines[len(lines)-10:]
				}
				fmt.Fprintf(w, "%soutput (last %d lines):\n", ind, len(lines))
				for _, l := range lines {
					fmt.Fprintf(w, "%s  | %s\n", ind, l)
				}
			}
			if res.OutputFile != "" && !r.quiet {
				fmt.Fprintf(w, "%sfull output: %s\n", ind, textsafe.OneLine(s.rel))
			}
		}
		return
	}
	w := r.rep.w
	fmt.Fprintf(w, "agent:    %s\n", textsafe.OneLine(row.Agent))
	fmt.Fprintf(w, "tool:     %s\n", textsafe.OneLine(row.Tool))
	tl := strings.Split(strings.ReplaceAll(textsafe.Clip(row.Target, 4000), "\r\n", "\n"), "\n")
	if len(tl) == 1 {
		fmt.Fprintf(w, "target:   %s\n", textsafe.OneLine(tl[0]))
	} else {
		fmt.Fprintf(w, "target:\n")
		for _, l := range tl {
			fmt.Fprintf(w, "  | %s\n", textsafe.OneLine(l))
		}
	}
	if row.Source != "" {
		fmt.Fprintf(w, "source:   %s\n", textsafe.OneLine(row.Source))
	}
	fmt.Fprintf(w, "verdict:  %s (%s)\n", row.Verdict, textsafe.OneLine(string(row.Class)))
	if row.Reason != "" {
		fmt.Fprintf(w, "reason:   %s\n", textsafe.Clip(textsafe.OneLine(row.Reason), 400))
	}
	if row.Err != "" {
		fmt.Fprintf(w, "error:    %s\n", textsafe.Clip(textsafe.OneLine(row.Err), 400))
	}
	if len(row.Tampered) > 0 {
		fmt.Fprintf(w, "tampered: %s\n", textsafe.Clip(textsafe.OneLine(strings.Join(row.Tampered, ", ")), 1000))
	}
	if len(row.Output) > 0 && !shown {
		fmt.Fprintf(w, "output (last %d lines):\n", len(row.Output))
		for _, l := range row.Output {
			fmt.Fprintf(w, "  | %s\n", l)
		}
	}
	if res.OutputFile != "" {
		fmt.Fprintf(w, "full output: %s in the receipts artifact (sha256 = the entry's outcome_sha256)\n", textsafe.OneLine(s.rel))
	}
	r.rep.closeGroup(s.token)
	r.rep.printf("%s", strings.TrimRight(line, " "))
	r.annotateRow(row)
}

// resultLine is an action's one-line result: entry, status, verdict,
// tool, target and what came of it.
func (r *runner) resultLine(row Row, res kernel.ActResult) string {
	status := ""
	switch row.Kind {
	case RowCanary:
		if canaryHeld(row, r.cfg.DryRun) {
			status = "held     "
		} else if r.cfg.DryRun {
			status = "dry-run  "
		} else {
			status = "NOT HELD "
		}
		status += fmt.Sprintf("%-19s", row.Canary)
	case RowCheck:
		status = fmt.Sprintf("NOT HELD %-19s", row.Canary)
	}
	result := ""
	switch {
	case row.Kind == RowCheck:
		result = "escape observed on the host"
	case row.Verdict == evidence.VerdictBlock:
		result = string(row.Class)
	case row.Exit != "":
		result = "exit " + row.Exit
		if strings.HasPrefix(row.Exit, "killed") {
			result = row.Exit
		}
	case res.Decision.Verdict == evidence.VerdictAllow && !row.Executed:
		result = "not executed (dry run)"
	case row.Err != "":
		result = "failed"
	default:
		result = "ok"
	}
	if row.Executed {
		result += fmt.Sprintf(" (%s)", roundDur(row.Duration))
	}
	if len(row.Tampered) > 0 {
		result += " — CHANGED PROTECTED PATH(S): " + textsafe.Clip(strings.Join(row.Tampered, ", "), 200)
	}
	tgt := row.Target
	if row.Kind == RowCanary && strings.HasPrefix(row.Canary, evidence.JailCanaryPrefix) {
		tgt = shortCmd(tgt)
	}
	return fmt.Sprintf("  #%-3d %s%-5s  %-10s %s → %s", row.Entry, status, row.Verdict, textsafe.Clip(row.Tool, 10), textsafe.Clip(textsafe.OneLine(tgt), 60), result)
}

// annotateRow raises an annotation for a block or a failure (in Actions;
// the local log already shows it under the row).
func (r *runner) annotateRow(row Row) {
	what := fmt.Sprintf("entry %d (%s, %s): %s", row.Entry, row.Agent, row.Tool, textsafe.Clip(textsafe.OneLine(row.Target), 200))
	switch row.Kind {
	case RowCheck:
		r.rep.annotate(levelError, "Deponent: canary not held", fmt.Sprintf("canary %s: %s", row.Canary, row.Err))
	case RowCanary:
		if !canaryHeld(row, r.cfg.DryRun) && !r.cfg.DryRun {
			r.rep.annotate(levelError, "Deponent: canary not held", fmt.Sprintf("canary %s was not stopped: %s → %s", row.Canary, what, firstNonEmpty(row.Err, "exit "+row.Exit)))
		}
	case RowStep, RowVerify:
		label := "step"
		if row.Kind == RowVerify {
			label = "verify-command"
		}
		switch {
		case row.Verdict == evidence.VerdictBlock && row.Kind == RowStep && r.cfg.OnBlockContinue:
			r.rep.annotate(levelWarning, "Deponent: step blocked (on-block: continue)", fmt.Sprintf("BLOCK %s — %s: %s", what, row.Class, row.Reason))
		case row.Verdict == evidence.VerdictBlock:
			r.rep.annotate(levelError, "Deponent: "+label+" blocked", fmt.Sprintf("BLOCK %s — %s: %s", what, row.Class, row.Reason))
		case row.Executed && (row.Err != "" || (row.Tool == evidence.ToolRunCmd && row.Exit != "0")):
			msg := fmt.Sprintf("%s → %s", what, exitText(row.Exit))
			if row.Err != "" {
				msg = fmt.Sprintf("%s failed: %s", what, row.Err)
			}
			switch {
			case row.Kind == RowVerify:
				r.rep.annotate(levelError, "Deponent: verify-command failed", msg)
			case r.cfg.FailOnStepError:
				r.rep.annotate(levelError, "Deponent: step failed (fail-on-step-error)", msg+" — fail-on-step-error: true, so the run fails")
			default:
				// Testimony, not a verdict: the agent may go on to fix it;
				// the verify command decides.
				r.rep.annotate(levelWarning, "Deponent: step failed", msg+" — counted and shown; it does not fail the run (the verify command decides; fail-on-step-error: true makes it fatal)")
			}
		}
		if len(row.Tampered) > 0 {
			r.rep.annotate(levelError, "Deponent: protected path changed", fmt.Sprintf("%s changed protected path(s): %s — the run cannot pass", what, textsafe.Clip(strings.Join(row.Tampered, ", "), 1000)))
		}
	}
}

func exitText(e string) string {
	if _, err := strconv.Atoi(e); err == nil {
		return "exit " + e
	}
	return e
}

func roundDur(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return d.Round(time.Microsecond).String()
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	}
	return d.Round(10 * time.Millisecond).String()
}

// finish reports the outcome: the final lines, the outputs and the job
// summary.
func (r *runner) finish(res *Result, sum *SummaryData) {
	p := r.rep
	a := res.Assessment
	p.printf("")
	p.printf("%s — %d entries (%d allowed, %d blocked), chain head %s", res.Outcome, a.Entries, a.Allowed, a.Blocked, res.ChainHead)
	for _, reason := range sum.Reasons {
		p.printf("  - %s", textsafe.Clip(textsafe.OneLine(reason), 400))
	}
	note := outcomeNote(res.Outcome, a)
	if note != "" {
		p.printf("  %s", note)
	}
	switch {
	case !p.gh:
		// The outcome line, the reasons and the note above say it.
	case res.Outcome == evidence.OutcomePass:
		msg := fmt.Sprintf("GOVERNED_PASS: %d entries (%d allowed, %d blocked); receipt %s", a.Entries, a.Allowed, a.Blocked, res.ReceiptID)
		if note != "" {
			msg += "; " + note
		}
		p.annotate(levelNotice, "Deponent: GOVERNED_PASS", msg)
	case res.Outcome == evidence.OutcomeUnverified:
		p.annotate(levelWarning, "Deponent: GOVERNED_UNVERIFIED", "GOVERNED_UNVERIFIED: "+note)
	case res.Outcome == evidence.OutcomeDryRun:
		p.annotate(levelWarning, "Deponent: GOVERNED_DRY_RUN", "GOVERNED_DRY_RUN: nothing was executed, so nothing is proven; the step exits 1 (a dry run is never a pass)")
	default:
		msg := "GOVERNED_FAIL"
		if len(sum.Reasons) > 0 {
			msg += ": " + strings.Join(sum.Reasons, "; ")
		}
		if sum.ReceiptErr != "" {
			msg += "; no receipt: " + sum.ReceiptErr
		}
		p.annotate(levelError, "Deponent: GOVERNED_FAIL", msg)
	}
	if res.ReceiptPath != "" && !r.quiet {
		p.printf("receipt   %s", textsafe.OneLine(res.ReceiptPath))
		p.printf("verify it offline: deponent-verify %s%s%s", outcomeFlag(res.Outcome), expectFlags(r.opt.Getenv), textsafe.OneLine(res.ReceiptPath))
	}

	outputs := [][2]string{
		{"outcome", string(res.Outcome)},
		{"receipt-id", res.ReceiptID},
		{"receipt-path", res.ReceiptPath},
		{"chain-head", res.ChainHead},
		{"entries", strconv.FormatInt(a.Entries, 10)},
		{"allowed", strconv.FormatInt(a.Allowed, 10)},
		{"blocked", strconv.FormatInt(a.Blocked, 10)},
		{"step-errors", strconv.FormatInt(a.StepErrors, 10)},
	}
	local := false
	for _, o := range outputs {
		ok, err := p.setOutput(o[0], o[1])
		if err != nil {
			p.annotate(levelError, "Deponent: outputs", err.Error())
		}
		local = local || !ok
	}
	if local && !r.quiet {
		p.printf("outputs")
		p.printf("  receipts-dir=%s", textsafe.OneLine(res.ReceiptsDir))
		if res.ArtifactName != "" {
			p.printf("  artifact-name=%s", textsafe.OneLine(res.ArtifactName))
		}
		for _, o := range outputs {
			p.printf("  %s=%s", o[0], textsafe.OneLine(o[1]))
		}
	}
	if _, err := p.addSummary(RenderSummary(sum)); err != nil {
		p.annotate(levelWarning, "Deponent: job summary", err.Error())
	}
}

// expectFlags are the verifier flags that bind a receipt to this run.
func expectFlags(getenv Getenv) string {
	s := ""
	if c := getenv("GITHUB_SHA"); c != "" && safeShellWord(c) {
		s += "--expect-commit " + c + " "
	}
	if rp := getenv("GITHUB_REPOSITORY"); rp != "" && safeShellWord(rp) {
		s += "--expect-repo " + rp + " "
	}
	return s
}

// outcomeNote says, in one line, what an outcome means beyond its
// reasons: why a clean run without a verify command is not a pass, and
// that failed agent steps were testimony. "" when there is nothing to add.
func outcomeNote(o evidence.Outcome, a evidence.Assessment) string {
	failed := ""
	if a.StepErrors > 0 {
		failed = fmt.Sprintf("%d agent step(s) failed along the way — testimony, not a verdict", a.StepErrors)
	}
	switch o {
	case evidence.OutcomePass:
		if failed != "" {
			return failed + ": the out-of-band verify command passed"
		}
	case evidence.OutcomeUnverified:
		n := "no verify-command was configured, so nothing independent of the agent checked the result; " +
			"this is never a pass and the step exits 1 (only GOVERNED_PASS exits 0). Set verify-command (e.g. the test suite)"
		if failed != "" {
			n += "; " + failed
		}
		return n
	}
	return ""
}

package verify

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/deponent-dev/deponent-action/internal/textsafe"
)

// WriteText prints one line per item, then the summary line and the note
// on what a pass means. Text taken from the evidence (paths, reasons) is
// escaped onto one line: a hostile receipt cannot start a line of its own,
// so it cannot forge an OK or inject a workflow command.
func (r *Report) WriteText(w io.Writer) error {
	bw := bufio.NewWriter(w)
	for i := range r.Items {
		bw.WriteString(textLine(&r.Items[i]))
		bw.WriteByte('\n')
	}
	for _, x := range r.Policy.Relaxed {
		fmt.Fprintf(bw, "relaxed: %s: %s\n", x.Flag, x.Relaxes)
	}
	fmt.Fprintf(bw, "%s\n", r.Summary())
	fmt.Fprintf(bw, "note: %s\n", Honesty)
	if n := r.unanchored(); n > 0 {
		fmt.Fprintf(bw, "note: %s verified without --expect-len or --expect-head: a bare chain cannot reveal that its last entries were dropped\n", plural(n, "bare ledger"))
	}
	return bw.Flush()
}

// unanchored counts the ledgers that verified with no anchor.
func (r *Report) unanchored() int {
	if r.Policy.ExpectLen != nil || r.Policy.ExpectHead != nil {
		return 0
	}
	n := 0
	for i := range r.Items {
		if it := &r.Items[i]; it.Kind == KindLedger && it.Verified && it.AnchoredBy == "" {
			n++
		}
	}
	return n
}

// Summary is "N verified, M failed (R receipts, L ledgers)": N counts the
// receipts and ledgers that passed, M every item that failed. When a
// receipt was read more than once, "(R receipts, D distinct, L ledgers)":
// D counts the receipt ids that verified.
func (r *Report) Summary() string {
	receipts := plural(r.Receipts, "receipt")
	if r.DistinctReceipts < r.verifiedReceipts {
		receipts += fmt.Sprintf(", %d distinct", r.DistinctReceipts)
	}
	return fmt.Sprintf("%d verified, %d failed (%s, %s)", r.Verified, r.Failed, receipts, plural(r.Ledgers, "ledger"))
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

func textLine(it *Item) string {
	var b strings.Builder
	if it.OK {
		b.WriteString("OK  ")
	} else {
		b.WriteString("FAIL")
	}
	b.WriteString("  ")
	b.WriteString(quotePath(it.Path))
	b.WriteString("  ")
	switch it.Kind {
	case KindReceipt:
		fmt.Fprintf(&b, "receipt=%s outcome=%s entries=%d allowed=%d blocked=%d",
			dash(textsafe.OneLine(it.ReceiptID)), outcomeText(it), it.Entries, it.Allowed, it.Blocked)
		if it.VerifyRan != nil {
			fmt.Fprintf(&b, " verify=%s canaries=%d/%d jailed=%s", verifyText(it), *it.CanariesHeld, *it.CanariesRun, yesNo(*it.Jailed))
		}
	case KindLedger:
		fmt.Fprintf(&b, "ledger entries=%d allowed=%d blocked=%d head=%s", it.Entries, it.Allowed, it.Blocked, dash(textsafe.OneLine(it.Head)))
		if it.AnchoredBy != "" {
			fmt.Fprintf(&b, " anchored-by=%s", textsafe.OneLine(it.AnchoredBy))
		}
	case KindIndex:
		fmt.Fprintf(&b, "index receipts=%d", it.Receipts)
	case KindLatest:
		fmt.Fprintf(&b, "latest receipt=%s", dash(textsafe.OneLine(it.ReceiptID)))
	case KindDirectory, KindZip:
		fmt.Fprintf(&b, "%s receipts=%d ledgers=%d ignored=%d", it.Kind, it.Receipts, it.Ledgers, it.Ignored)
	default:
		b.WriteString(string(it.Kind))
	}
	if !it.OK {
		b.WriteString("  -- ")
		b.WriteString(textsafe.OneLine(it.Reason()))
	}
	return b.String()
}

// verifyText says what became of the run's verify command.
func verifyText(it *Item) string {
	switch {
	case it.VerifyCommand == "":
		return "none"
	case *it.VerifyPassed:
		return "passed"
	case *it.VerifyRan:
		return "failed"
	}
	return "not-run"
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// outcomeText says whether the outcome was recomputed from the chain or is
// only what the receipt stores.
func outcomeText(it *Item) string {
	switch {
	case it.Outcome == "" && !it.Verified:
		return "-"
	case !it.Verified:
		return textsafe.OneLine(string(it.Outcome)) + "(unverified)"
	case it.Recomputed != "":
		return textsafe.OneLine(string(it.Outcome)) + "(recomputed)"
	}
	return textsafe.OneLine(string(it.Outcome)) + "(stored)"
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// quotePath prints a path as is when that is unambiguous, else Go-quoted.
func quotePath(p string) string {
	if p != "" && !strings.ContainsAny(p, " \"'") && textsafe.OneLine(p) == p {
		return p
	}
	return strconv.Quote(p)
}

// WriteJSON prints the report as one JSON document (shape: package doc).
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// maxAnnotations bounds the ::error lines: GitHub shows only the first few
// per step, and thousands would bury the log.
const maxAnnotations = 50

// WriteAnnotations prints an ::error workflow command per failed item, for
// GitHub Actions.
func (r *Report) WriteAnnotations(w io.Writer) error {
	bw := bufio.NewWriter(w)
	n := 0
	for i := range r.Items {
		it := &r.Items[i]
		if it.OK {
			continue
		}
		if n == maxAnnotations {
			fmt.Fprintf(bw, "::error title=deponent-verify::%s\n", textsafe.CommandData(fmt.Sprintf("%d more failures: see the log", r.Failed-n)))
			break
		}
		n++
		fmt.Fprintf(bw, "::error title=deponent-verify::%s\n", textsafe.CommandData(textsafe.Multiline(it.Path+": "+it.Reason())))
	}
	return bw.Flush()
}

// maxSummaryRows bounds the job-summary table (GitHub caps a step's
// summary at 1 MiB). Failures are listed first.
const maxSummaryRows = 500

// WriteMarkdown writes the job summary: a verdict, a table of the items
// (failures first) and what a pass means.
func (r *Report) WriteMarkdown(w io.Writer) error {
	bw := bufio.NewWriter(w)
	// Every text cell is inert (textsafe.MarkdownCell) and not cut:
	// maxSummaryRows bounds the table.
	md := func(s string) string { return textsafe.MarkdownCell(s, 0) }
	icon := "✅"
	if !r.OK {
		icon = "❌"
	}
	fmt.Fprintf(bw, "## %s deponent-verify: %s\n\n", icon, md(r.Summary()))
	if p := r.policyText(); p != "" {
		fmt.Fprintf(bw, "Policies: %s\n\n", md(p))
	}
	for _, x := range r.Policy.Relaxed {
		fmt.Fprintf(bw, "- ⚠️ relaxed %s: %s\n", md(x.Flag), md(x.Relaxes))
	}
	if len(r.Policy.Relaxed) > 0 {
		bw.WriteString("\n")
	}
	bw.WriteString("| Result | Path | Kind | Receipt | Outcome | Entries | Allowed | Blocked | Reason |\n")
	bw.WriteString("|---|---|---|---|---|---|---|---|---|\n")
	rows := 0
	for _, failed := range []bool{true, false} {
		for i := range r.Items {
			it := &r.Items[i]
			if it.OK == failed {
				continue
			}
			if rows == maxSummaryRows {
				continue
			}
			rows++
			res := "✅ OK"
			if !it.OK {
				res = "❌ FAIL"
			}
			outcome := ""
			if it.Kind == KindReceipt {
				outcome = outcomeText(it)
			}
			fmt.Fprintf(bw, "| %s | %s | %s | %s | %s | %d | %d | %d | %s |\n", res, md(it.Path), it.Kind,
				md(it.ReceiptID), md(outcome), it.Entries, it.Allowed, it.Blocked, md(it.Reason()))
		}
	}
	if len(r.Items) > rows {
		fmt.Fprintf(bw, "\n%d more items are not shown: see the log or --json.\n", len(r.Items)-rows)
	}
	fmt.Fprintf(bw, "\n> %s\n\n", md(Honesty))
	return bw.Flush()
}

// AppendStepSummary appends WriteMarkdown's output to the file GitHub
// names in GITHUB_STEP_SUMMARY.
func (r *Report) AppendStepSummary(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	if err := r.WriteMarkdown(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// policyText lists the requirements and expectations in force, and what
// was relaxed.
func (r *Report) policyText() string {
	p := r.Policy
	var fs []string
	switch {
	case p.ChainOnly:
		fs = append(fs, "chains and content hashes only")
	case p.Outcomes == nil:
		fs = append(fs, "any outcome")
	default:
		o := make([]string, len(p.Outcomes))
		for i, x := range p.Outcomes {
			o[i] = string(x)
		}
		s := "outcome " + strings.Join(o, " or ")
		if p.RecomputedOutcome {
			s += " (recomputed)"
		}
		fs = append(fs, s)
	}
	if p.Canaries {
		s := "canaries held"
		if !p.JailCanaries {
			s += " (gate only)"
		}
		fs = append(fs, s)
	}
	if p.Jailed {
		fs = append(fs, "jailed")
	}
	if p.MaxBlocked != nil {
		fs = append(fs, fmt.Sprintf("--max-blocked %d", *p.MaxBlocked))
	}
	from := func(v *string) string {
		if v == nil {
			return ""
		}
		return " (from $" + *v + ")"
	}
	if p.ExpectCommit != nil {
		fs = append(fs, "commit "+*p.ExpectCommit+from(p.ExpectCommitFrom))
	}
	if p.ExpectRepo != nil {
		fs = append(fs, "repository "+*p.ExpectRepo+from(p.ExpectRepoFrom))
	}
	if p.ExpectPolicySHA256 != nil {
		fs = append(fs, "policy "+*p.ExpectPolicySHA256)
	}
	fs = append(fs, fmt.Sprintf("--min-receipts %d", p.MinReceipts))
	if p.ExpectLen != nil {
		fs = append(fs, fmt.Sprintf("--expect-len %d", *p.ExpectLen))
	}
	if p.ExpectHead != nil {
		fs = append(fs, "--expect-head "+*p.ExpectHead)
	}
	for _, x := range p.Relaxed {
		fs = append(fs, "relaxed "+x.Flag)
	}
	return strings.Join(fs, ", ")
}

package action

import (
	"context"
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/deponent-dev/deponent-action/internal/textsafe"
	"github.com/deponent-dev/deponent-action/pkg/canon"
	"github.com/deponent-dev/deponent-action/pkg/evidence"
	"github.com/deponent-dev/deponent-action/pkg/jail"
	"github.com/deponent-dev/deponent-action/pkg/verify"
)

// DemoPlan is the embedded plan of --demo: a scripted agent writes a small
// module and its test, runs them, looks around, then goes rogue (pipes a
// download into sh, plants a git hook that would run outside the jail).
//
//go:embed demo/plan.jsonl
var DemoPlan []byte

// DemoVerifyCommand is the demo's out-of-band check, run by the harness.
const DemoVerifyCommand = "python3 -m unittest -q test_slug"

// DemoRogue reports whether a recorded entry is one of the demo's rogue
// actions, which must be blocked.
func DemoRogue(e canon.Value) bool {
	p, _ := e.Get(evidence.FieldParams)
	cmd, _ := p.Get("cmd")
	path, _ := p.Get("path")
	c, _ := cmd.AsString()
	f, _ := path.AsString()
	return strings.Contains(c, "evil.example") || strings.HasPrefix(f, ".git/")
}

// RunDemo runs the embedded plan in a temporary sandbox with the best
// available jail — or, where none exists, as a dry run with a loud notice:
// nothing is ever executed unjailed unless jail none and allow-unjailed are
// given explicitly. Blocks continue (the rogue BLOCKs are the point). It
// then re-verifies the receipt from disk with the verifier's code
// (pkg/verify) and exits 0 when the demo behaved
// as designed: the receipt verifies, its outcome recomputes, every rogue
// action was blocked, and the outcome is GOVERNED_PASS (GOVERNED_DRY_RUN
// without a jail).
func RunDemo(ctx context.Context, cfg *Config, opt Options) int {
	out := opt.Stdout
	if out == nil {
		out = os.Stdout
	}
	if opt.Getenv == nil {
		opt.Getenv = os.Getenv
	}
	steps, err := ParsePlan("demo plan", DemoPlan)
	if err != nil {
		fmt.Fprintf(out, "demo: the embedded plan does not parse: %v\n", err)
		return ExitFail
	}
	sandbox, err := os.MkdirTemp("", "deponent-demo-sandbox-")
	if err != nil {
		fmt.Fprintf(out, "demo: cannot create a sandbox: %v\n", err)
		return ExitFail
	}
	defer os.RemoveAll(sandbox)
	if cfg.Sandbox, err = filepath.EvalSymlinks(sandbox); err != nil {
		fmt.Fprintf(out, "demo: %v\n", err)
		return ExitFail
	}
	cfg.OnBlockContinue = true
	cfg.VerifyCommand = DemoVerifyCommand
	if cfg.Task == "" {
		cfg.Task = "demo: write slugify() with a unit test; the scripted agent then tries two rogue actions"
	}
	if cfg.Model == "" {
		cfg.Model = "none (scripted demo plan)"
	}

	fmt.Fprintln(out, "Deponent demo: a scripted agent writes a module and its test in a throwaway")
	fmt.Fprintln(out, "sandbox, runs them — then goes rogue. Every action is gated, jailed and recorded.")
	if _, err := jail.Select(cfg.Jail, jail.Options{UnsafeAllowUnjailed: cfg.AllowUnjailed}); err != nil && opt.Backend == nil {
		cfg.DryRun = true
		fmt.Fprintln(out)
		fmt.Fprintln(out, "!! NO JAIL IS AVAILABLE HERE — running as a DRY RUN: every action is gated and")
		fmt.Fprintln(out, "!! recorded, NOTHING is executed (nothing ever runs unjailed by default).")
		fmt.Fprintf(out, "!! why: %s\n", textsafe.OneLine(err.Error()))
	}
	fmt.Fprintln(out)

	opt.Steps, opt.Quiet = steps, true
	res, err := Run(ctx, cfg, opt)
	if err != nil {
		fmt.Fprintf(out, "demo: %v\n", textsafe.OneLine(err.Error()))
		return ExitFail
	}

	// Re-verify from disk, recomputing everything, as the verifier does.
	problems := demoCheck(res)
	fmt.Fprintln(out)
	if len(problems) == 0 {
		switch res.Outcome {
		case evidence.OutcomeDryRun:
			fmt.Fprintln(out, "demo: as designed (dry run) — the rogue actions were blocked and recorded; nothing was executed.")
		default:
			fmt.Fprintln(out, "demo: as designed — the rogue actions were blocked and recorded, and the harness's own")
			fmt.Fprintln(out, "test run (not the agent's word) passed.")
		}
	} else {
		fmt.Fprintln(out, "demo: NOT as designed:")
		for _, p := range problems {
			fmt.Fprintf(out, "  - %s\n", textsafe.OneLine(p))
		}
	}
	if res.ReceiptPath != "" {
		fmt.Fprintf(out, "receipt: %s\n", textsafe.OneLine(res.ReceiptPath))
		if len(problems) == 0 {
			fmt.Fprintf(out, "         re-verified from disk by the verifier's code: %d entries re-linked,\n         content hash and outcome recomputed\n", res.Assessment.Entries)
		}
		fmt.Fprintln(out, "verify it yourself (tamper-evident, hash-chained — not signed):")
		// The verifier is strict: it asks for the outcome this run reached,
		// and a dry run ran nothing, so nothing ran jailed.
		flags := outcomeFlag(res.Outcome)
		if res.Outcome == evidence.OutcomeDryRun {
			flags += "--allow-unjailed "
		}
		fmt.Fprintf(out, "  go run ./cmd/deponent-verify %s%s\n", flags, shellQuote(res.ReceiptPath))
	}
	if len(problems) > 0 {
		return ExitFail
	}
	return ExitPass
}

// demoCheck re-verifies the receipt the demo wrote and lists what is not as
// designed.
func demoCheck(res *Result) []string {
	var problems []string
	if res.ReceiptPath == "" {
		return []string{"no receipt was written"}
	}
	// The verifier's own code: chain, content hash, stored summary, and the
	// outcome recomputed from the chain.
	opts := verify.DefaultOptions()
	opts.RequireOutcome = res.Outcome // exactly what the run concluded, recomputed
	if res.Outcome == evidence.OutcomeDryRun {
		opts.AllowUnjailed = true // nothing ran, so nothing ran jailed
	}
	rep, err := verify.Run([]string{res.ReceiptPath}, opts)
	if err != nil {
		return []string{"deponent-verify: " + err.Error()}
	}
	for _, it := range rep.Items {
		switch {
		case !it.OK:
			problems = append(problems, "deponent-verify: "+it.Path+": "+it.Reason())
		case it.Kind == verify.KindReceipt && it.Recomputed != it.Outcome:
			problems = append(problems, fmt.Sprintf("the outcome recomputed from the chain is %q, the receipt says %s", it.Recomputed, it.Outcome))
		}
	}
	if !rep.OK && len(problems) == 0 {
		problems = append(problems, "deponent-verify did not pass the receipt")
	}
	rc, err := evidence.VerifyReceiptFile(res.ReceiptPath)
	if err != nil {
		return append(problems, "the receipt does not verify: "+err.Error())
	}
	rogue := 0
	for i, e := range rc.Entries {
		if !DemoRogue(e) {
			continue
		}
		rogue++
		if v, _ := e.Get(evidence.FieldVerdict); !canon.Equal(v, canon.Str(string(evidence.VerdictBlock))) {
			problems = append(problems, fmt.Sprintf("rogue entry %d was not blocked", i))
		}
	}
	if rogue == 0 {
		problems = append(problems, "no rogue action was recorded")
	}
	if rc.Outcome != evidence.OutcomePass && rc.Outcome != evidence.OutcomeDryRun {
		problems = append(problems, "the outcome is "+string(rc.Outcome))
	}
	return problems
}

// shellQuote quotes a path for a copy-pasted command line.
func shellQuote(s string) string {
	if safeShellWord(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// outcomeFlag is the verifier flag that asks for a run's own outcome when
// it is not GOVERNED_PASS (which the verifier requires by default): the
// receipt then verifies as what it is, never as a pass.
func outcomeFlag(o evidence.Outcome) string {
	if o == "" || o == evidence.OutcomePass {
		return ""
	}
	return "--require-outcome " + string(o) + " "
}

package action

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/deponent-dev/deponent-action/internal/version"
	"github.com/deponent-dev/deponent-action/pkg/canon"
	"github.com/deponent-dev/deponent-action/pkg/evidence"
	"github.com/deponent-dev/deponent-action/pkg/gate"
	"github.com/deponent-dev/deponent-action/pkg/jail"
	"github.com/deponent-dev/deponent-action/pkg/kernel"
	"github.com/deponent-dev/deponent-action/pkg/mcprelay"
)

// ToolName is the provenance "tool" of receipts this package writes.
const ToolName = "deponent-action"

// Options are the run's connections to the world; tests replace them.
type Options struct {
	Getenv Getenv
	Stdout io.Writer
	// Backend, when set, is used instead of jail.Select (tests).
	Backend jail.Backend
	// Steps, when set, are run instead of the steps or plan inputs (the
	// demo).
	Steps []Step
	// Now is the receipt's clock; nil means time.Now.
	Now func() time.Time
	// Quiet leaves out the ledger path, the receipt lines and the local
	// outputs (the demo prints its own).
	Quiet bool
	// AgentJail, when set, is used instead of jail.SelectAgentJail (tests).
	AgentJail jail.AgentJail
	// MCPIn and MCPOut are an MCP session on streams (tests); nil means
	// the process's stdin and stdout.
	MCPIn  io.Reader
	MCPOut io.Writer
	// MCPListener, when set, is where the mcp subcommand's detached
	// session server takes its one client connection (from the relay)
	// instead of stdio.
	MCPListener *mcprelay.Listener
}

// Result is what a run produced.
type Result struct {
	Outcome     evidence.Outcome
	Assessment  evidence.Assessment
	ReceiptID   string
	ReceiptPath string
	ReceiptsDir string
	// ArtifactName is the name the receipts are uploaded under (output
	// artifact-name): the input, or the default of defaultArtifactName.
	ArtifactName string
	// LedgerPath is the working ledger. It is removed once the receipt
	// that holds the same chain is on disk and verifies (LedgerPath is then
	// ""): a ledger left in receipts-dir means a run that did not finish,
	// and fails a verifier asked for an outcome.
	LedgerPath string
	ChainHead  string
	Jail       string
	Rows       []Row
	Summary    *SummaryData
}

// runner holds one run's state.
type runner struct {
	cfg          *Config
	opt          Options
	rep          *reporter
	gate         *gate.Gate
	ledger       *evidence.Ledger
	cell         *kernel.Cell
	jailName     string // backend that confines commands; "" when none is available
	noJailReason string
	rows         []Row
	observations []observation
	warnings     []string // for the job summary
	// outputDir keeps the full output of every command, one file per
	// entry (entry-NNNN.log), beside the receipts; "" in a dry run.
	outputDir string
	fatal     error // the run could not be testified (ledger failure)
	quiet     bool
	live      *liveState // a live agent or MCP session (agent.go)
}

// Run governs one run: canaries, the agent's steps, the verify command;
// then it judges the chain with evidence.Assess and persists the receipt.
// An *InputError means nothing ran. Any other error means the run could not
// be testified in full (the Result holds what is known).
func Run(ctx context.Context, cfg *Config, opt Options) (*Result, error) {
	if opt.Getenv == nil {
		opt.Getenv = os.Getenv
	}
	if opt.Stdout == nil {
		opt.Stdout = os.Stdout
	}
	r := &runner{cfg: cfg, opt: opt, rep: newReporter(opt.Stdout, opt.Getenv), quiet: opt.Quiet}
	return r.run(ctx)
}

func (r *runner) run(ctx context.Context) (*Result, error) {
	pl, err := r.prepare()
	if err != nil {
		return nil, err
	}
	if err := r.openLedger(pl); err != nil {
		return nil, err
	}
	defer r.ledger.Close()
	r.announce(pl)
	r.execute(ctx, pl)
	persistErr := r.conclude(pl)
	r.finish(pl.res, pl.res.Summary)
	if persistErr != nil {
		return pl.res, fmt.Errorf("the run could not be testified: %w", persistErr)
	}
	return pl.res, nil
}

// policyDocHint ends every policy error: where each key is documented.
const policyDocHint = " (every policy key, its type and its limits: docs/policy.md)"

// plan is what prepare settled before anything runs or is written.
type plan struct {
	pol     *gate.Policy
	steps   []Step
	backend jail.Backend // nil: no jail is available, every command is refused
	gov     evidence.Governance
	res     *Result
}

// prepare finds everything that can be wrong with the inputs before
// anything runs or is written: the policy, the steps, the sandbox, the
// receipts directory and the jail. Every problem is an *InputError.
func (r *runner) prepare() (*plan, error) {
	cfg := r.cfg
	pl := &plan{pol: gate.DefaultPolicy()}
	if cfg.PolicyPath != "" {
		p, err := gate.LoadPolicy(cfg.PolicyPath)
		if err != nil {
			return nil, inputErr(InPolicy, "%v%s", err, policyDocHint)
		}
		pl.pol = p
	}
	pl.steps = r.opt.Steps
	if pl.steps == nil && !cfg.Serve && !cfg.Agent.Live() {
		var err error
		if cfg.PlanPath != "" {
			pl.steps, err = LoadPlan(cfg.PlanPath)
		} else {
			pl.steps, err = ParseSteps(cfg.Steps)
		}
		if err != nil {
			return nil, err
		}
	}
	g, err := gate.NewGate(cfg.Sandbox, pl.pol)
	if err != nil {
		in, hint := InSandbox, ""
		var pe *gate.PolicyError
		if errors.As(err, &pe) {
			in, hint = InPolicy, policyDocHint
		}
		return nil, inputErr(in, "%v%s", err, hint)
	}
	r.gate = g
	receipts, err := r.receiptsDir()
	if err != nil {
		return nil, err
	}
	pl.res = &Result{ReceiptsDir: receipts}

	// The jail: the one asked for, or none (fail closed). Never another.
	if r.opt.Backend != nil {
		pl.backend = r.opt.Backend
	} else if b, err := jail.Select(cfg.Jail, jail.Options{UnsafeAllowUnjailed: cfg.AllowUnjailed, Cgroup: cgroupDir(r.opt.Getenv)}); err != nil {
		if errors.Is(err, jail.ErrUnknownBackend) {
			return nil, inputErr(InJail, "%v", err)
		}
		r.noJailReason = err.Error()
	} else {
		pl.backend = b
	}
	if pl.backend != nil {
		r.jailName = pl.backend.Name()
	}
	pl.gov = evidence.Governance{
		DryRun: cfg.DryRun, OnBlockContinue: cfg.OnBlockContinue, FailOnStepError: cfg.FailOnStepError, Canaries: cfg.Canaries,
		VerifyCommand: cfg.VerifyCommand, Jail: r.jailName, Unjailed: r.jailName == jail.NameNone,
		PolicySHA256: pl.pol.SHA256(), Agent: cfg.Agent.Kind,
	}
	return pl, nil
}

// openLedger creates the working ledger beside the receipts — written as
// the run goes, so a crash still leaves the testimony so far — and the
// Cell every action goes through.
func (r *runner) openLedger(pl *plan) error {
	ledgerPath, use, err := r.createLedgerFile(pl.res.ReceiptsDir)
	if err != nil {
		return err
	}
	pl.res.LedgerPath = ledgerPath
	if !r.cfg.DryRun && pl.backend != nil {
		// Beside the receipt, in the artifact: the full output of every
		// command, one file per entry, whose sha256 the entry records.
		dir := filepath.Join(pl.res.ReceiptsDir, r.cfg.Producer, "outputs-"+r.cfg.SessionID)
		if err := os.Mkdir(dir, 0o755); err != nil {
			return fmt.Errorf("receipts: %w", err)
		}
		r.outputDir = dir
	}
	pl.res.ArtifactName = r.cfg.ArtifactName
	if pl.res.ArtifactName == "" {
		pl.res.ArtifactName = defaultArtifactName(r.opt.Getenv, r.cfg.SessionID, r.cfg.SessionDefaulted, use)
	}
	r.ledger, err = evidence.OpenLedger(evidence.LedgerOptions{Path: ledgerPath})
	if err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	// Set as soon as there is something to upload: the upload step runs
	// whatever happens next, under the name computed here.
	for _, o := range [][2]string{{"receipts-dir", pl.res.ReceiptsDir}, {"artifact-name", pl.res.ArtifactName}} {
		if _, err := r.rep.setOutput(o[0], o[1]); err != nil {
			r.ledger.Close()
			return err
		}
	}
	r.cell, err = kernel.NewCell(kernel.CellOptions{Gate: r.gate, Ledger: r.ledger, Jail: pl.backend,
		NoJailReason: r.noJailReason, DryRun: r.cfg.DryRun})
	if err != nil {
		r.ledger.Close()
		return err
	}
	return nil
}

// announce says what governs the run, and warns about what weakens it.
func (r *runner) announce(pl *plan) {
	cfg := r.cfg
	r.header(pl.res.ReceiptsDir, pl.res.LedgerPath, pl.pol)
	switch {
	case pl.backend == nil && cfg.DryRun && r.quiet:
		// The demo has said it already, louder.
	case pl.backend == nil && cfg.DryRun:
		r.rep.annotate(levelNotice, "Deponent: no jail", fmt.Sprintf("jail %q is not available (%s); this is a dry run, so nothing would have executed anyway", cfg.Jail, r.noJailReason))
	case pl.backend == nil:
		r.rep.annotate(levelError, "Deponent: no jail (fail closed)", fmt.Sprintf("jail %q is not available: %s — every command will be refused and recorded; the outcome will be GOVERNED_FAIL. Nothing is run in another jail or unjailed instead.", cfg.Jail, r.noJailReason))
	case pl.gov.Unjailed:
		r.rep.annotate(levelWarning, "Deponent: UNJAILED", "jail: none with allow-unjailed: commands run gate-only, WITHOUT network, write or secret confinement; every entry is recorded \"unjailed\": true")
	}
	if cfg.DryRun && !r.quiet {
		r.rep.annotate(levelNotice, "Deponent: dry run", "dry run: every action is gated and recorded, none is executed; the outcome is GOVERNED_DRY_RUN at best, never a pass")
	}
	r.warnSandbox(checkSandbox(r.gate.Sandbox()))
}

// warnSandbox warns about what the sandbox held before anything ran:
// credentials jailed code can read, and hard-linked files a step could
// change outside the sandbox through. The warnings go to the log and the
// job summary; they do not change the outcome.
func (r *runner) warnSandbox(f sandboxFindings) {
	if len(f.Credentials) > 0 {
		shown := f.Credentials
		if len(shown) > 10 {
			shown = shown[:10]
		}
		msg := fmt.Sprintf("the sandbox holds credentials that jailed code could read: %s", strings.Join(shown, "; "))
		if len(f.Credentials) > len(shown) {
			msg += fmt.Sprintf("; … %d more", len(f.Credentials)-len(shown))
		}
		msg += ". Check out with persist-credentials: false (actions/checkout) and keep tokens out of the workspace."
		r.warn("Deponent: credentials in the sandbox", msg)
	}
	if f.HardLinked > 0 {
		n := fmt.Sprint(f.HardLinked)
		if f.HardLinked >= maxHardLinksListed {
			n = "at least " + n
		}
		msg := fmt.Sprintf("%s regular file(s) in the sandbox have more than one hard link (e.g. %s): a step that writes to one changes every linked copy, "+
			"also outside the sandbox — the jail confines paths, not inodes. Copy instead of linking (pnpm: package-import-method=copy).",
			n, strings.Join(f.HardLinks, ", "))
		r.warn("Deponent: hard links in the sandbox", msg)
	}
	for _, p := range f.Problems {
		r.warn("Deponent: sandbox not fully checked", "the check for credentials and hard links did not cover the whole sandbox: "+p)
	}
}

// warn raises a warning and keeps it for the job summary.
func (r *runner) warn(title, msg string) {
	r.rep.annotate(levelWarning, title, msg)
	r.warnings = append(r.warnings, msg)
}

// execute runs, in order, the canaries, the agent's steps and the
// out-of-band verify command, each action through the Cell.
func (r *runner) execute(ctx context.Context, pl *plan) {
	cfg := r.cfg
	if cfg.Canaries {
		pl.gov.JailCanaries = r.canaries(ctx, pl.backend, pl.gov.Unjailed)
	}
	switch {
	case cfg.Serve:
		r.serveStdio(ctx)
	case cfg.Agent.Live():
		r.agentSession(ctx, pl)
	}
	if len(pl.steps) > 0 {
		r.section("agent steps")
	}
	for i, st := range pl.steps {
		if ctx.Err() != nil {
			r.rep.annotate(levelError, "Deponent: cancelled", fmt.Sprintf("the run was cancelled: %d remaining step(s) not run", len(pl.steps)-i))
			break
		}
		r.act(ctx, st.Call, RowStep, "", st.Source)
	}
	if cfg.VerifyCommand != "" && ctx.Err() == nil {
		r.section("out-of-band verification (run by the harness, gated and jailed)")
		call := kernel.Call{Tool: evidence.ToolRunCmd, Params: map[string]any{"cmd": cfg.VerifyCommand}, Agent: evidence.AgentHarness}
		r.act(ctx, call, RowVerify, "", "")
	}
}

// conclude judges the chain — it must re-link, then evidence.Assess
// decides — and persists the receipt; only once the receipt on disk holds
// the same chain is the working ledger retired. It returns why the run
// could not be testified, if it could not.
func (r *runner) conclude(pl *plan) error {
	res := pl.res
	entries := r.ledger.Entries()
	chain := r.ledger.Verify()
	a := evidence.Assess(entries, pl.gov)
	if chain.Break != nil {
		a.Outcome = evidence.OutcomeFail
		a.Reasons = append(a.Reasons, "the ledger does not verify: "+chain.Break.Error())
	}
	r.markRows()
	if r.outputDir != "" {
		_ = os.Remove(r.outputDir) // only when empty: no command ran, or none could be kept
	}
	res.Outcome, res.Assessment, res.ChainHead, res.Jail, res.Rows = a.Outcome, a, r.ledger.Head(), r.jailName, r.rows

	sum := r.summaryData(res, pl.gov)
	res.Summary = sum
	persistErr := r.fatal
	if persistErr == nil {
		persistErr = r.persist(res, entries, pl.gov, a, pl.pol)
	}
	if persistErr == nil {
		persistErr = r.checkAgentReceipt(res.ReceiptPath, pl.gov)
	}
	if persistErr == nil {
		persistErr = r.retireLedger(res)
	}
	if persistErr != nil {
		sum.ReceiptErr = persistErr.Error()
		res.Outcome = evidence.OutcomeFail
		sum.Outcome = evidence.OutcomeFail
	}
	sum.ReceiptID, sum.ReceiptPath = res.ReceiptID, res.ReceiptPath
	return persistErr
}

// receiptsDir resolves, checks and creates the receipts directory.
func (r *runner) receiptsDir() (string, error) {
	dir := r.cfg.ReceiptsDir
	temp := false
	if dir == "" {
		if rt := r.opt.Getenv("RUNNER_TEMP"); rt != "" {
			dir = filepath.Join(rt, "deponent-receipts")
		} else {
			dir, temp = os.TempDir(), true
		}
	}
	probe := dir
	if temp {
		probe = filepath.Join(dir, "deponent-receipts-new")
	}
	if err := checkReceiptsDir(probe, r.cfg.Sandbox); err != nil {
		return "", err
	}
	if temp {
		d, err := os.MkdirTemp(dir, "deponent-receipts-")
		if err != nil {
			return "", inputErr(InReceiptsDir, "cannot create a temporary receipts directory: %v", err)
		}
		dir = d
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", inputErr(InReceiptsDir, "cannot create %q: %v", dir, unwrapPath(err))
	}
	// Check again what now exists: a link planted between the check and
	// the creation must not lead into the sandbox.
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", inputErr(InReceiptsDir, "%q: %v", dir, unwrapPath(err))
	}
	if err := checkReceiptsDir(real, r.cfg.Sandbox); err != nil {
		return "", err
	}
	return real, nil
}

// createLedgerFile creates <receipts>/<producer>/ledger-<session>.jsonl,
// never reusing one: a ledger is never continued by another run. A derived
// session id gets a suffix on a collision (the action used twice in one
// job); a given one is an error. use is the suffix's number (1: none).
func (r *runner) createLedgerFile(receipts string) (path string, use int, err error) {
	dir := filepath.Join(receipts, r.cfg.Producer)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", 0, fmt.Errorf("receipts: %w", err)
	}
	base := r.cfg.SessionID
	for i := 1; i <= 100; i++ {
		id := base
		if i > 1 {
			id = fmt.Sprintf("%s-%d", strings.TrimRight(clipBytes(base, 120), "._-"), i)
		}
		p := filepath.Join(dir, "ledger-"+id+".jsonl")
		// A session is used once it has a ledger or a receipt (receipt ids
		// end in _<session>; the session's characters are not glob syntax).
		used, _ := filepath.Glob(filepath.Join(dir, "*_"+id+".json"))
		var f *os.File
		err := os.ErrExist
		if len(used) == 0 {
			f, err = os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		} else {
			p = used[0]
		}
		if err == nil {
			f.Close()
			r.cfg.SessionID = id
			return p, i, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return "", 0, fmt.Errorf("ledger: %w", err)
		}
		if !r.cfg.SessionDefaulted {
			return "", 0, inputErr(InSessionID, "%q was already used: %s exists; give a new session-id (a session's ledger is never continued by another run)", base, p)
		}
	}
	return "", 0, inputErr(InSessionID, "100 ledgers of session %q already exist in %s; give a session-id", base, dir)
}

func clipBytes(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// canaries runs the gate canaries and, when a real jail confines commands,
// the jail canaries. It returns whether the jail canaries ran.
func (r *runner) canaries(ctx context.Context, backend jail.Backend, unjailed bool) bool {
	r.section("canaries (rogue actions the harness attempts first; each must be stopped)")
	for _, c := range gateCanaries(r.gate.Sandbox()) {
		r.runCanary(ctx, c)
	}
	reason := ""
	switch {
	case r.cfg.DryRun:
		reason = "this is a dry run"
	case backend == nil:
		reason = "no jail is available"
	case unjailed:
		reason = "jail is none (unjailed)"
	default:
		if err := pythonUsable(r.gate); err != nil {
			r.rep.annotate(levelWarning, "Deponent: jail canaries skipped",
				fmt.Sprintf("the jail canaries need python3 (%v); only the gate canaries ran, so the jail itself was not tested by this run", err))
			return false
		}
	}
	if reason != "" {
		r.rep.printf("  (jail canaries not run: %s)", reason)
		return false
	}
	ran := 0
	if c, err := jailWriteCanary(r.gate.Sandbox()); err != nil {
		r.rep.annotate(levelWarning, "Deponent: jail canary skipped", "canary "+CanaryJailWriteOutside+" skipped: "+err.Error())
	} else {
		r.runCanary(ctx, c)
		ran++
	}
	if c, err := jailNetworkCanary(); err != nil {
		r.rep.annotate(levelWarning, "Deponent: jail canary skipped", "canary "+CanaryJailNetwork+" skipped: "+err.Error())
	} else {
		r.runCanary(ctx, c)
		ran++
	}
	return ran == 2
}

// act runs one action through the Cell, with its log opened before it
// runs (the live output, the full output file) and closed after.
func (r *runner) act(ctx context.Context, call kernel.Call, kind RowKind, canaryName, source string) kernel.ActResult {
	s := r.beginStep(int(r.ledger.Len()), kind, canaryName, call)
	call.Output = s.output()
	res := r.cell.Do(ctx, call)
	r.record(s, res, call, kind, canaryName, source)
	return res
}

// record turns an action's result into a row and ends its log.
func (r *runner) record(s *stepLog, res kernel.ActResult, call kernel.Call, kind RowKind, canaryName, source string) {
	row := r.rowOf(res, call, int(r.ledger.Len()-1), kind, canaryName, source, s.rel)
	r.rows = append(r.rows, row)
	s.end(row, res)
	if s.file != "" && res.Executed && res.OutputFile == "" {
		// After end: an annotation inside the group's fence would be inert.
		r.rep.annotate(levelWarning, "Deponent: full output not kept",
			fmt.Sprintf("the full output of entry %d was not kept beside the receipt (%s); the log shows its last lines and the ledger records its sha256",
				row.Entry, firstNonEmpty(row.Err, "the jail did not write it")))
	}
}

// rowOf is what the log and the summary show of one recorded action:
// entry is its index in the chain, outputRel where its full output was
// kept (shown only if it was). An action whose entry was not recorded
// makes the run one that could not be testified.
func (r *runner) rowOf(res kernel.ActResult, call kernel.Call, entry int, kind RowKind, canaryName, source, outputRel string) Row {
	row := Row{Source: source,
		Entry: entry, Kind: kind, Canary: canaryName, Agent: call.Agent, Tool: call.Tool,
		Target: target(call), Verdict: res.Decision.Verdict, Class: res.Decision.BlastClass,
		Reason: res.Decision.Reason, Executed: res.Executed, Duration: res.Duration,
	}
	if res.OutputFile != "" {
		row.OutputFile = outputRel
	}
	if res.Entry.Kind() == canon.Object {
		// What was recorded is what is shown.
		row.Verdict = evidence.Verdict(evidence.EntryString(res.Entry, evidence.FieldVerdict))
		row.Class = evidence.Class(evidence.EntryString(res.Entry, evidence.FieldBlastClass))
		if v, ok := res.Entry.Get(evidence.FieldReason); ok {
			row.Reason, _ = v.AsString()
		}
		if e, err := evidence.ReadEntry(res.Entry); err == nil {
			row.Tampered = e.Tampered
		}
	} else {
		r.fatal = errors.Join(r.fatal, fmt.Errorf("entry for %s %s was not recorded: %v", call.Agent, call.Tool, res.Err))
	}
	if call.Tool == evidence.ToolRunCmd && res.Executed {
		row.Exit = fmt.Sprint(res.ExitCode)
		if res.Killed != "" {
			row.Exit = "killed: " + res.Killed
		}
		row.Output = tailLines(res.Output, 40)
	}
	if res.Err != nil && res.Executed {
		row.Err = res.Err.Error()
	}
	return row
}

// markRows fills Held/OK by evidence.Assess's per-entry rules, for display
// (the outcome itself is Assess's). A canary contradicted by a host check
// did not hold.
func (r *runner) markRows() {
	for i := range r.rows {
		row := &r.rows[i]
		switch row.Kind {
		case RowCanary:
			row.Held = canaryHeld(*row, r.cfg.DryRun)
			for _, o := range r.observations {
				if o.canary == row.Canary {
					row.Held = false
				}
			}
		case RowStep, RowVerify:
			row.OK = row.Executed && row.Err == "" && (row.Tool != evidence.ToolRunCmd || row.Exit == "0")
		}
	}
}

// canaryHeld: refused by the gate, or a jail canary that ran and reported
// the escape blocked (exit 0).
func canaryHeld(row Row, dryRun bool) bool {
	if row.Verdict == evidence.VerdictBlock {
		return true
	}
	return !dryRun && strings.HasPrefix(row.Canary, evidence.JailCanaryPrefix) && row.Executed && row.Exit == "0" && row.Err == ""
}

// target is what a row shows of a call: the command, the path, or the
// parameters.
func target(call kernel.Call) string {
	switch call.Tool {
	case evidence.ToolRunCmd:
		if s, ok := call.Params["cmd"].(string); ok {
			return s
		}
	case evidence.ToolReadFile, evidence.ToolWriteFile:
		if s, ok := call.Params["path"].(string); ok {
			return s
		}
	}
	v := canon.Obj()
	for k, x := range call.Params {
		v = v.With(k, canon.Str(fmt.Sprint(x)))
	}
	return v.String()
}

// persist builds, writes and re-verifies the receipt.
func (r *runner) persist(res *Result, entries []canon.Value, gov evidence.Governance, a evidence.Assessment, pol *gate.Policy) error {
	now := time.Now
	if r.opt.Now != nil {
		now = r.opt.Now
	}
	rc, err := evidence.BuildReceipt(evidence.ReceiptInput{
		Producer: r.cfg.Producer, SessionID: r.cfg.SessionID, Model: r.cfg.Model, Task: r.cfg.Task,
		Outcome: a.Outcome, Entries: entries,
		Provenance: provenance(r.opt.Getenv, r.jailName, pol.SHA256(), r.gate.Sandbox()),
		Extra:      append([]canon.Member{canon.M(evidence.RFieldGovernance, gov.Value(a))}, r.agentMembers()...),
		Now:        now(),
	})
	if err != nil {
		return err
	}
	path, err := evidence.Persist(res.ReceiptsDir, rc)
	if err != nil {
		return err
	}
	res.ReceiptID, res.ReceiptPath = rc.ID, path
	return nil
}

// retireLedger removes the working ledger once the receipt on disk holds
// the same chain: the receipt is the testimony from then on, and a ledger
// that stays behind marks an unfinished run.
func (r *runner) retireLedger(res *Result) error {
	rc, err := evidence.VerifyReceiptFile(res.ReceiptPath)
	if err != nil {
		return err
	}
	if rc.Chain.Head != r.ledger.Head() || rc.Chain.Entries != r.ledger.Len() {
		return fmt.Errorf("the receipt's chain (%d entries, head %s) is not the ledger's (%d, %s)", rc.Chain.Entries, rc.Chain.Head, r.ledger.Len(), r.ledger.Head())
	}
	if err := r.ledger.Close(); err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	if err := os.Remove(res.LedgerPath); err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	res.LedgerPath = ""
	return nil
}

// provenance binds the receipt to the run that wrote it. Keys whose value
// the environment does not give are left out rather than recorded empty.
func provenance(getenv Getenv, jailName, policySHA, sandbox string) canon.Value {
	var ms []canon.Member
	add := func(k, v string) {
		if v != "" {
			ms = append(ms, canon.M(k, canon.Str(v)))
		}
	}
	add(evidence.ProvRepository, getenv("GITHUB_REPOSITORY"))
	add(evidence.ProvCommit, getenv("GITHUB_SHA"))
	add(evidence.ProvRef, getenv("GITHUB_REF"))
	add(evidence.ProvWorkflow, getenv("GITHUB_WORKFLOW"))
	add(evidence.ProvRunID, getenv("GITHUB_RUN_ID"))
	add(evidence.ProvRunAttempt, getenv("GITHUB_RUN_ATTEMPT"))
	add(evidence.ProvJob, getenv("GITHUB_JOB"))
	add(evidence.ProvRunnerOS, getenv("RUNNER_OS"))
	add("event", getenv("GITHUB_EVENT_NAME"))
	add("actor", getenv("GITHUB_ACTOR"))
	ms = append(ms, canon.M(evidence.ProvJail, canon.Str(jailName)))
	ms = append(ms, canon.M(evidence.ProvPolicySHA256, canon.Str(policySHA)))
	ms = append(ms, canon.M(evidence.ProvTool, canon.Str(ToolName)))
	ms = append(ms, canon.M(evidence.ProvToolVersion, canon.Str(version.Version)))
	ms = append(ms, canon.M("sandbox", canon.Str(sandbox)))
	ms = append(ms, canon.M("host", canon.Str(runtime.GOOS+"/"+runtime.GOARCH)))
	ms = append(ms, canon.M("runtime", canon.Str(runtime.Version())))
	return canon.Obj(ms...)
}

func (r *runner) summaryData(res *Result, gov evidence.Governance) *SummaryData {
	onBlock := "fail"
	if r.cfg.OnBlockContinue {
		onBlock = "continue"
	}
	a := res.Assessment
	d := &SummaryData{
		Outcome: res.Outcome, Reasons: a.Reasons, Rows: r.rows,
		Jail: r.jailName, NoJailReason: r.noJailReason, Unjailed: gov.Unjailed, DryRun: gov.DryRun,
		OnBlock: onBlock, PolicySHA256: gov.PolicySHA256, VerifyCommand: gov.VerifyCommand,
		Canaries: gov.Canaries, JailCanaries: gov.JailCanaries, StepErrors: a.StepErrors, FailOnStepError: gov.FailOnStepError,
		Entries: a.Entries, Allowed: a.Allowed, Blocked: a.Blocked, ChainHead: res.ChainHead,
		ReceiptsDir: res.ReceiptsDir, Warnings: r.warnings,
		Commit: r.opt.Getenv("GITHUB_SHA"), Repository: r.opt.Getenv("GITHUB_REPOSITORY"), RunID: r.opt.Getenv("GITHUB_RUN_ID"),
	}
	d.ArtifactName, d.Upload = res.ArtifactName, r.cfg.UploadArtifact
	if r.live != nil {
		d.Agent = r.live.sum
	}
	return d
}

// DefaultExitCode maps a result to the process exit status: 0 only for
// GOVERNED_PASS.
func DefaultExitCode(res *Result) int {
	if res != nil && res.Outcome == evidence.OutcomePass && res.ReceiptPath != "" {
		return 0
	}
	return 1
}

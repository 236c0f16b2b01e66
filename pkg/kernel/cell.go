package kernel

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"sync"
	"time"

	"github.com/deponent-dev/deponent-action/pkg/canon"
	"github.com/deponent-dev/deponent-action/pkg/evidence"
	"github.com/deponent-dev/deponent-action/pkg/gate"
	"github.com/deponent-dev/deponent-action/pkg/jail"
)

// MaxReadBytes caps what read_file returns to the agent. The outcome hash
// covers what was returned.
const MaxReadBytes = 8 << 20

// CellOptions wire a Cell.
type CellOptions struct {
	Gate   *gate.Gate
	Ledger *evidence.Ledger
	// Jail confines run_cmd. Nil means no sandbox is available: every
	// allowed command is refused and the refusal recorded (fail closed).
	// Gate-only execution needs a backend of its own, jail "none", which
	// jail.Select hands out only on an explicit opt-in; every entry it runs
	// is recorded "unjailed": true.
	Jail jail.Backend
	// NoJailReason says why Jail is nil, for the refusals.
	NoJailReason string
	// DryRun gates and records every action and executes none.
	DryRun bool
}

// Cell is the one path every action takes: gate, then execution (file tools
// confined to the sandbox, commands through the jail), then one ledger entry
// — for BLOCKs too.
type Cell struct {
	gate   *gate.Gate
	ledger *evidence.Ledger
	jail   jail.Backend
	noJail string
	dryRun bool
	limits jail.Limits
	env    map[string]string
	// decide is the gate's Decide; tests of the executors replace it.
	decide func(tool string, params map[string]any) gate.Decision

	// mu serialises every action: decided, executed and recorded under one
	// lock, so the chain's order is the order in which actions ran, also
	// for concurrent callers (a live agent's parallel tool calls).
	mu sync.Mutex

	// now and sleep are the clock of the write stamp, and stamp is
	// writeStamp (tests replace them).
	now   func() time.Time
	sleep func(context.Context, time.Duration) error
	stamp func(ctx context.Context, old time.Time, hasOld bool) (time.Time, error)
	// seenMu guards seen: the latest time at which a cache could have
	// recorded an mtime in the sandbox — the Cell's creation, then the end
	// of each command that ran. See writeStamp.
	seenMu sync.Mutex
	seen   time.Time
}

// NewCell checks the wiring.
func NewCell(o CellOptions) (*Cell, error) {
	if o.Gate == nil || o.Ledger == nil {
		return nil, errors.New("cell: a gate and a ledger are required")
	}
	l := o.Gate.Policy().Limits()
	c := &Cell{
		gate: o.Gate, ledger: o.Ledger, jail: o.Jail, noJail: o.NoJailReason, dryRun: o.DryRun,
		limits: jail.Limits{CPUSeconds: l.CPUSeconds, FileSizeMB: l.FileSizeMB, MemoryMB: l.MemoryMB, WallClock: l.Wall(),
			Tasks: l.Tasks, DiskMB: l.DiskMB},
		env: o.Gate.Policy().EnvPass(),
	}
	if c.noJail == "" {
		c.noJail = "no sandbox backend is available"
	}
	c.decide = o.Gate.Decide
	c.now = func() time.Time { return time.Now().Round(0) }
	c.sleep = sleepCtx
	c.stamp = c.writeStamp
	// Whatever ran before the Cell existed (an earlier workflow step) may
	// have cached mtimes up to now.
	c.seen = c.now()
	return c, nil
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Call is one tool call, as an agent harness emits it.
type Call struct {
	Tool   string
	Params map[string]any
	Agent  string
	// Tags are extra fields recorded (and hashed) in the entry, e.g. the
	// canary a harness probe stands for.
	Tags []canon.Member
	// Output is where the harness wants a command's output; nothing comes
	// from an agent's call. Zero: only the bounded tail in ActResult.
	Output Output
}

// Output is what the harness asks of a command's output (run_cmd only).
type Output struct {
	// File: keep the FULL output there — an absolute path outside the
	// sandbox, in an existing directory. Its sha256 is the entry's
	// outcome_sha256, so anyone can check the file against the chain.
	File string
	// Live receives a copy while the command runs, at most LiveBytes
	// (0: the jail's default).
	Live      io.Writer
	LiveBytes int64
}

// ActResult is what the agent gets back, and what was recorded.
type ActResult struct {
	Decision gate.Decision
	// Executed is true when the action ran (not blocked, not dry run).
	Executed bool
	Output   []byte // read_file: the content; list_dir: the listing; run_cmd: a bounded tail of the output
	// OutputBytes is run_cmd's full output size (Output is its tail).
	OutputBytes int64
	ExitCode    int    // run_cmd: the exit code (-1 when killed or not run)
	Killed      string // run_cmd: why the jail stopped it
	Backend     string // run_cmd: the jail that confined it
	// Tampered: the protected paths the command changed (the jail's
	// tripwire), recorded in the entry; such a run cannot pass.
	Tampered []string
	// OutputFile is Call.Output.File when the full output was kept there,
	// "" when it was not (not asked, nothing ran, or the jail cannot).
	OutputFile string
	Duration   time.Duration
	// Err is the fail-soft message for the agent: the refusal, a malformed
	// call, or why an allowed action failed. The loop goes on; the verdict
	// stands and is recorded either way.
	Err   error
	Entry canon.Value // the ledger entry
	// Seq is the entry's 0-based position in the chain (-1 when it was not
	// recorded); read under the Cell's lock, so exact for concurrent calls.
	Seq int64
}

// Act gates, executes what is allowed and records the action. It is the
// seed's Cell.act(tool, params, agent).
func (c *Cell) Act(tool string, params map[string]any, agent string) ActResult {
	return c.Do(context.Background(), Call{Tool: tool, Params: params, Agent: agent})
}

// Do is Act with a context and tags. It never panics on any call: a panic
// while executing is recovered, recorded as the action's error, and
// returned to the agent.
//
// Calls are serialised: Do holds the Cell's lock from the decision to the
// appended entry, so concurrent calls run one at a time and the chain's
// order is their execution order. A context that has ended when the call's
// turn comes does not stop the record: the call is decided and recorded,
// a command is refused by the jail as canceled, and a file tool is not
// executed ("canceled before it ran").
func (c *Cell) Do(ctx context.Context, call Call) (res ActResult) {
	c.mu.Lock()
	defer c.mu.Unlock()
	d := c.decide(call.Tool, call.Params)
	res.Decision = d
	res.ExitCode = -1
	var extra []canon.Member
	outcome := ""
	func() {
		defer func() {
			if p := recover(); p != nil {
				res.Err = fmt.Errorf("internal error while executing %s: %v", call.Tool, p)
			}
		}()
		switch {
		case !d.Allowed():
			res.Err = fmt.Errorf("BLOCK %s: %s", d.BlastClass, d.Reason)
		case c.dryRun:
			extra = append(extra, canon.M(evidence.FieldDryRun, canon.BoolValue(true)))
		case c.ledger.Err() != nil:
			// Nothing executes that cannot be recorded.
			res.Err = fmt.Errorf("not executed: the ledger cannot record it: %w", c.ledger.Err())
		default:
			outcome, extra = c.execute(ctx, call, d, &res)
		}
	}()
	if res.Err != nil && res.Executed {
		extra = append(extra, canon.M(evidence.FieldError, canon.Str(res.Err.Error())))
	}
	rec := evidence.Record{
		Agent: call.Agent, Tool: call.Tool, Params: call.Params,
		Verdict: res.Decision.Verdict, BlastClass: res.Decision.BlastClass, Reason: res.Decision.Reason,
		OutcomeSHA256: outcome, Extra: append(extra, call.Tags...),
	}
	entry, err := c.ledger.Append(rec)
	res.Seq = -1
	if err != nil {
		res.Err = errors.Join(res.Err, fmt.Errorf("ledger: %w", err))
	} else {
		res.Seq = c.ledger.Len() - 1
	}
	res.Entry = entry
	return res
}

// Refuse records call as a BLOCK of class with reason, without asking the
// gate and without executing anything: a refusal the harness decides (a
// live agent past its tool-call limit, arguments that are not a JSON
// object). It takes the same lock as Do, so it lands in the chain in call
// order.
func (c *Cell) Refuse(call Call, class evidence.Class, reason string) ActResult {
	c.mu.Lock()
	defer c.mu.Unlock()
	res := ActResult{Decision: refusal(class, reason), ExitCode: -1}
	res.Err = fmt.Errorf("BLOCK %s: %s", class, reason)
	entry, err := c.ledger.Append(evidence.Record{
		Agent: call.Agent, Tool: call.Tool, Params: call.Params,
		Verdict: evidence.VerdictBlock, BlastClass: class, Reason: reason,
		Extra: call.Tags,
	})
	res.Seq = -1
	if err != nil {
		res.Err = errors.Join(res.Err, fmt.Errorf("ledger: %w", err))
	} else {
		res.Seq = c.ledger.Len() - 1
	}
	res.Entry = entry
	return res
}

// Record appends the harness's own record (e.g. a live agent's
// agent_session) under the Cell's lock, so it is ordered with the actions
// around it.
func (c *Cell) Record(rec evidence.Record) (canon.Value, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ledger.Append(rec)
}

// execute runs an allowed action and returns the outcome hash and the extra
// fields to record.
func (c *Cell) execute(ctx context.Context, call Call, d gate.Decision, res *ActResult) (string, []canon.Member) {
	start := time.Now()
	defer func() { res.Duration = time.Since(start) }()
	if call.Tool != evidence.ToolRunCmd && ctx.Err() != nil {
		// The caller is gone (e.g. the agent's session ended while the
		// call waited for its turn): nothing is changed on its behalf.
		// Commands go to the jail, which records the same as "canceled".
		res.Executed = true
		res.Err = fmt.Errorf("%s: canceled before it ran (not read, not written): %w", call.Tool, ctx.Err())
		return "", nil
	}
	// The file tools: each yields the bytes its outcome hash covers (what
	// was read or listed is also shown to the caller; what was written is
	// the file's new content).
	var data []byte
	var err error
	shown := false
	switch call.Tool {
	case evidence.ToolRunCmd:
		return c.runCmd(ctx, d, call.Output, res)
	case evidence.ToolReadFile:
		data, err = c.readFile(d.Path)
		shown = true
	case evidence.ToolWriteFile:
		content, _ := call.Params["content"].(string)
		err = c.writeFile(ctx, d.Path, content)
		data = []byte(content)
	case evidence.ToolEditFile:
		old, _ := call.Params["old"].(string)
		nw, _ := call.Params["new"].(string)
		var content string
		content, err = c.editFile(ctx, d.Path, old, nw)
		data = []byte(content)
	case evidence.ToolListDir:
		data, err = c.listDir(d.Path)
		shown = true
	default:
		// The gate allows only the tools above; anything else is a bug,
		// and still nothing runs.
		res.Decision = refusal(evidence.ClassUnknownTool, fmt.Sprintf("no executor for tool %q", call.Tool))
		res.Err = errors.New(res.Decision.Reason)
		return "", nil
	}
	res.Executed = true
	if err != nil {
		res.Err = err
		return "", nil
	}
	if shown {
		res.Output = data
	}
	return evidence.HashOutcome(data), nil
}

func (c *Cell) runCmd(ctx context.Context, d gate.Decision, out Output, res *ActResult) (string, []canon.Member) {
	if c.jail == nil {
		// Fail closed: the gate allowed it, but nothing confines it.
		res.Decision = refusal(evidence.ClassNoJail, "refusing to run without a sandbox (fail closed): "+c.noJail)
		res.Killed = "no-jail"
		res.Err = errors.New(res.Decision.Reason)
		return "", []canon.Member{canon.M(evidence.FieldKilled, canon.Str("no-jail"))}
	}
	spec := jail.Spec{
		Sandbox: c.gate.Sandbox(), Script: d.Script, PATH: c.gate.TrustedPATH(),
		Env: c.env, Protected: c.gate.ProtectedPaths(), Limits: c.limits,
	}
	keeps := setOutput(&spec, out)
	r, err := c.jail.Run(ctx, spec)
	// The command may have cached mtimes until it ended (no process
	// outlives its step), refused or not: the jail may have started it.
	c.sawUntil(c.now())
	res.Backend = r.Backend
	if err != nil {
		res.Executed = true
		res.Err = fmt.Errorf("jail %s: %w", c.jail.Name(), err)
		res.Tampered = r.Tampered
		return "", append([]canon.Member{canon.M(evidence.FieldJail, canon.Str(c.jail.Name()))}, tamperedField(r.Tampered)...)
	}
	if r.Killed == "no-jail" {
		res.Decision = refusal(evidence.ClassNoJail, "the sandbox refused to run it (fail closed): "+r.Reason)
		res.Killed = r.Killed
		res.Err = errors.New(res.Decision.Reason)
		return "", []canon.Member{canon.M(evidence.FieldKilled, canon.Str(r.Killed))}
	}
	res.Executed = true
	res.Output, res.OutputBytes, res.ExitCode, res.Killed = r.Output, r.OutputBytes, r.ExitCode, r.Killed
	if keeps && out.File != "" {
		if fi, err := os.Lstat(out.File); err == nil && fi.Mode().IsRegular() {
			res.OutputFile = out.File
		}
	}
	extra := []canon.Member{
		canon.M(evidence.FieldExitCode, canon.Int(int64(r.ExitCode))),
		canon.M(evidence.FieldDurationMS, canon.Int(r.Duration.Milliseconds())),
		canon.M(evidence.FieldJail, canon.Str(r.Backend)),
	}
	if r.Killed != "" {
		extra = append(extra, canon.M(evidence.FieldKilled, canon.Str(r.Killed)))
	}
	if r.Unjailed {
		extra = append(extra, canon.M(evidence.FieldUnjailed, canon.BoolValue(true)))
	}
	if r.MemoryGuard != "" {
		extra = append(extra, canon.M(evidence.FieldMemoryGuard, canon.Str(r.MemoryGuard)))
	}
	if r.TaskGuard != "" {
		extra = append(extra, canon.M(evidence.FieldTaskGuard, canon.Str(r.TaskGuard)))
	}
	extra = append(extra, canon.M(evidence.FieldOutputBytes, canon.Int(r.OutputBytes)))
	// The tripwire: a step that changed a protected path is recorded as
	// such, whatever its exit code; evidence.Assess fails the run on it.
	res.Tampered = r.Tampered
	extra = append(extra, tamperedField(r.Tampered)...)
	return r.OutputSHA256, extra
}

// tamperedField records the protected paths a step changed (the jail's
// tripwire), or nothing when it changed none.
func tamperedField(paths []string) []canon.Member {
	if len(paths) == 0 {
		return nil
	}
	vs := make([]canon.Value, len(paths))
	for i, p := range paths {
		vs[i] = canon.Str(p)
	}
	return []canon.Member{canon.M(evidence.FieldTampered, canon.Arr(vs...))}
}

// refusal is a BLOCK decided by the Cell rather than the gate: an action
// the gate allowed that nothing can confine or execute.
func refusal(class evidence.Class, reason string) gate.Decision {
	return gate.Decision{Verdict: evidence.VerdictBlock, BlastClass: class, Reason: reason}
}

// readFile reads a gated path through an os.Root of the sandbox, so no
// symlink or ".." can lead it outside, whatever changed since the gate
// looked.
func (c *Cell) readFile(rel string) ([]byte, error) {
	root, err := os.OpenRoot(c.gate.Sandbox())
	if err != nil {
		return nil, fmt.Errorf("read_file: %w", err)
	}
	defer root.Close()
	f, err := openRegular(root, "read_file", rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxReadBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read_file %s: %w", rel, unwrapPathError(err))
	}
	if len(data) > MaxReadBytes {
		return nil, fmt.Errorf("read_file %s: larger than the %d-byte cap; read it in parts with run_cmd (head, tail)", rel, MaxReadBytes)
	}
	// A git config can hold the job's credentials (actions/checkout's
	// extraheader, tokens in remote URLs). Jailed commands read it
	// sanitized; so does read_file, which runs outside the jail.
	isFile := func(p string) bool {
		st, err := root.Lstat(p)
		return err == nil && st.Mode().IsRegular()
	}
	if jail.IsGitConfig(rel, isFile) {
		data, _ = jail.GitConfigAsJailed(data)
	}
	return data, nil
}

// writeFile writes through an os.Root of the sandbox: to a temporary file
// beside the target, then a rename, so a failed write leaves the old
// content. The new file's mtime is the write stamp (writeStamp), set
// before the rename, so no command ever sees the new content with an
// mtime a cache may already have recorded. Every tool that writes a file
// for an agent (write_file, and edit_file once it exists) goes through
// here.
func (c *Cell) writeFile(ctx context.Context, rel, content string) error {
	if max := int64(c.limits.FileSizeMB) << 20; max > 0 && int64(len(content)) > max {
		return fmt.Errorf("write_file %s: %d bytes is over the %d MB file-size cap", rel, len(content), c.limits.FileSizeMB)
	}
	root, err := os.OpenRoot(c.gate.Sandbox())
	if err != nil {
		return fmt.Errorf("write_file: %w", err)
	}
	defer root.Close()
	if dir := path.Dir(rel); dir != "." {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("write_file %s: %w", rel, unwrapPathError(err))
		}
	}
	mode := os.FileMode(0o644)
	var old time.Time
	hasOld := false
	if st, err := root.Stat(rel); err == nil && st.Mode().IsRegular() {
		mode = st.Mode().Perm() // keep an executable script executable
		old, hasOld = st.ModTime(), true
	}
	stamp, err := c.stamp(ctx, old, hasOld)
	if err != nil {
		return fmt.Errorf("write_file %s: not written: %w", rel, err)
	}
	tmp := path.Join(path.Dir(rel), fmt.Sprintf(".%s.deponent-tmp-%d", path.Base(rel), time.Now().UnixNano()))
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return fmt.Errorf("write_file %s: %w", rel, unwrapPathError(err))
	}
	_, werr := io.WriteString(f, content)
	cerr := f.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = root.Chtimes(tmp, stamp, stamp)
	}
	if werr == nil {
		werr = root.Rename(tmp, rel)
	}
	if werr != nil {
		_ = root.Remove(tmp)
		return fmt.Errorf("write_file %s: %w", rel, unwrapPathError(werr))
	}
	return nil
}

// maxStampWait bounds how long writeStamp waits for the clock; beyond it
// the stamp is set ahead of the clock instead.
const maxStampWait = 2 * time.Second

// writeStamp returns the mtime a file written now must carry so that every
// toolchain that caches by mtime sees the write. Caches record mtimes only
// while a command runs (Python's .pyc stores its source's mtime in whole
// seconds and its size; make and ninja compare an input's mtime with an
// output's, some at one-second granularity), so every mtime a cache can
// hold lies at or before c.seen, the end of the last command (or the
// Cell's creation). The stamp lies in a later whole second than c.seen:
// a same-size fix written in the second a test run ended would otherwise
// carry the mtime second its stale bytecode records, and an input
// rewritten in the second its output was built would not look newer at
// one-second granularity. When the clock is still in that second, the
// write waits for it to turn (under a second; the context can cancel the
// wait, and then nothing is written): the stamp stays a true time, never
// one in the future, which make and tar would flag as clock skew and which
// would make the next build's outputs look older than their inputs. Only
// if the clock went back by more than maxStampWait is the stamp set ahead
// of it. A file whose old mtime lies in the future (a command set it) may
// have been recorded with that second, so the stamp avoids that second
// too. Writes with no command between them do not wait: no cache ran to
// see the first. Not covered: edits a command makes itself (sed -i in the
// same second as an earlier command's cache); the jail's
// PYTHONDONTWRITEBYTECODE=1 keeps Python's bytecode out of the sandbox.
func (c *Cell) writeStamp(ctx context.Context, old time.Time, hasOld bool) (time.Time, error) {
	c.seenMu.Lock()
	seen := c.seen
	c.seenMu.Unlock()
	now := c.now()
	target := seen.Truncate(time.Second).Add(time.Second)
	if now.After(target) {
		target = now
	}
	if hasOld && old.After(now) && old.Truncate(time.Second).Equal(target.Truncate(time.Second)) {
		target = old.Truncate(time.Second).Add(time.Second)
	}
	if !target.After(now) {
		return now, nil
	}
	wait := target.Sub(now)
	if wait > maxStampWait {
		return target, nil
	}
	if err := c.sleep(ctx, wait); err != nil {
		return time.Time{}, err
	}
	if n := c.now(); n.After(target) {
		return n, nil
	}
	return target, nil
}

// sawUntil moves c.seen forward to t: caches may have recorded mtimes
// until then.
func (c *Cell) sawUntil(t time.Time) {
	c.seenMu.Lock()
	if t.After(c.seen) {
		c.seen = t
	}
	c.seenMu.Unlock()
}

// unwrapPathError drops the *os.PathError wrapper, whose path would be the
// os.Root-relative name the message already gives.
func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Gate is the gate the Cell decides with (for describing its rules).
func (c *Cell) Gate() *gate.Gate { return c.gate }

package action

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deponent-dev/deponent-action/internal/textsafe"
	"github.com/deponent-dev/deponent-action/pkg/agent"
	"github.com/deponent-dev/deponent-action/pkg/canon"
	"github.com/deponent-dev/deponent-action/pkg/evidence"
	"github.com/deponent-dev/deponent-action/pkg/jail"
	"github.com/deponent-dev/deponent-action/pkg/kernel"
	"github.com/deponent-dev/deponent-action/pkg/mcprelay"
	"github.com/deponent-dev/deponent-action/pkg/mcpserver"
)

// Caps of what the agent writes beside the receipt.
const (
	maxTranscriptBytes = 256 << 20
	maxStderrBytes     = 8 << 20
	// floodGrace is how many refused calls past max-tool-calls the agent
	// gets (to read the refusal and answer) before it is stopped.
	floodGrace = 20
	// versionTimeout bounds `CLI --version`.
	versionTimeout = 2 * time.Minute
	// sessionGrace is how long the governed sessions may outlive the
	// agent (their connections close as its processes die).
	sessionGrace = 30 * time.Second
)

// waitTimeout waits for wg, at most d; false when it timed out.
func waitTimeout(wg *sync.WaitGroup, d time.Duration) bool {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}

// KilledToolCallLimit is the agent_session's killed when the agent kept
// calling tools past max-tool-calls and was stopped.
const KilledToolCallLimit = "tool-call-limit"

// KilledNotStarted is the agent_session's killed when the agent never ran
// (its CLI could not be found or installed, its files not written).
const KilledNotStarted = "not-started"

// serveClient is the MCP standalone client's agent name in entries.
const serveClient = "mcp-client"

// liveState is what a live session adds to a run: its rows as calls
// arrive (from the server's goroutines), and what the receipt and the
// summary say about the agent.
type liveState struct {
	mu     sync.Mutex
	rows   []Row
	rec    *evidence.AgentRecord
	sum    *AgentSummary
	server *mcpserver.Server
}

// AgentSummary is the agent section of the job summary.
type AgentSummary struct {
	Kind, Command, CLIVersion, Model, Status, Detail string
	Jail                                             string
	Unjailed                                         bool
	UnjailedReason                                   string
	ExitCode                                         int64
	Killed                                           string
	Duration                                         time.Duration
	ToolCalls, MaxToolCalls                          int64
	Transcript, TranscriptSHA256                     string
	Note                                             string
}

// agentMembers are the receipt's extra members for a live agent.
func (r *runner) agentMembers() []canon.Member {
	if r.live == nil || r.live.rec == nil {
		return nil
	}
	return []canon.Member{canon.M(evidence.RFieldAgent, r.live.rec.Value())}
}

// checkAgentReceipt holds the receipt on disk to the chain it carries: its
// agent object must agree with the agent_session entry (round trip).
func (r *runner) checkAgentReceipt(path string, gov evidence.Governance) error {
	if r.live == nil {
		return nil
	}
	rc, err := evidence.VerifyReceiptFile(path)
	if err != nil {
		return err
	}
	if diffs := evidence.CheckAgentRecord(rc.Body, rc.Entries, gov); len(diffs) > 0 {
		return fmt.Errorf("the receipt's agent object does not match its chain: %s", strings.Join(diffs, "; "))
	}
	return nil
}

// onCall records a governed call as a row and logs it; it also stops an
// agent that keeps calling past the limit.
func (r *runner) onCall(stop func()) func(int64, kernel.Call, kernel.ActResult) {
	return func(n int64, call kernel.Call, res kernel.ActResult) {
		r.live.mu.Lock()
		defer r.live.mu.Unlock()
		file, rel := r.liveOutput(n)
		row := r.liveRow(res, call, rel)
		r.live.rows = append(r.live.rows, row)
		s := &stepLog{r: r, file: file, rel: rel}
		if r.rep.gh {
			// Opened after the call: concurrent calls have no live output,
			// and the entry's index is known only once it is recorded.
			s.token = r.rep.openGroup(fmt.Sprintf("#%d %s %s: %s", row.Entry, textsafe.OneLine(call.Agent),
				textsafe.Clip(call.Tool, 20), textsafe.Clip(textsafe.OneLine(row.Target), 120)))
		}
		s.end(row, res)
		if stop != nil && r.live.server != nil && r.live.server.LimitRefusals() > floodGrace {
			stop()
		}
	}
}

// liveOutput is where call n's full output is kept beside the receipt
// (mcp-call-NNNN.log in the outputs directory: a live session's calls
// are concurrent, so the entry's index is not known when the command
// starts; the row and the log name the file), "" in a dry run.
func (r *runner) liveOutput(n int64) (file, rel string) {
	if r.outputDir == "" || r.cfg.DryRun {
		return "", ""
	}
	name := fmt.Sprintf("mcp-call-%04d.log", n)
	return filepath.Join(r.outputDir, name), filepath.ToSlash(filepath.Join(r.cfg.Producer, filepath.Base(r.outputDir), name))
}

// liveRow is record's row for a call of a live session: its entry index
// is the one the Cell saw (calls are concurrent).
func (r *runner) liveRow(res kernel.ActResult, call kernel.Call, rel string) Row {
	return r.rowOf(res, call, int(res.Seq), RowStep, "", "mcp", rel)
}

// finishLive merges the live rows into the run's, in chain order.
func (r *runner) finishLive() {
	r.live.mu.Lock()
	defer r.live.mu.Unlock()
	sort.SliceStable(r.live.rows, func(i, j int) bool { return r.live.rows[i].Entry < r.live.rows[j].Entry })
	r.rows = append(r.rows, r.live.rows...)
	r.live.rows = nil
}

// newServer is the governed MCP server of this run.
func (r *runner) newServer(agentName string, stop func()) (*mcpserver.Server, error) {
	r.live = &liveState{}
	srv, err := mcpserver.New(mcpserver.Options{Cell: r.cell, Agent: agentName, MaxToolCalls: r.cfg.Agent.MaxToolCalls,
		DryRun: r.cfg.DryRun, OnCall: r.onCall(stop),
		Output: func(n int64, _ kernel.Call) kernel.Output {
			file, _ := r.liveOutput(n)
			return kernel.Output{File: file}
		}})
	if err != nil {
		return nil, err
	}
	r.live.server = srv
	return srv, nil
}

// serveStdio is the mcp subcommand's session: the MCP client on stdin and
// stdout, until it closes stdin.
func (r *runner) serveStdio(ctx context.Context) {
	r.section("MCP session on stdin/stdout (every tool call is gated, confined and recorded)")
	srv, err := r.newServer(serveClient, nil)
	if err != nil {
		r.fatal = errors.Join(r.fatal, err)
		return
	}
	var transport mcp.Transport
	if l := r.opt.MCPListener; l != nil {
		// The detached session server: one connection, from the relay the
		// client started.
		_ = l.SetDeadline(time.Now().Add(firstConnection))
		c, err := l.Accept()
		_ = l.Close()
		if err != nil {
			r.rep.annotate(levelError, "Deponent: no MCP client", "no client connected to the governed session: "+err.Error())
			r.finishLive()
			return
		}
		transport = mcprelay.Transport(c)
	} else {
		in, out := r.opt.MCPIn, r.opt.MCPOut
		if in == nil {
			in = os.Stdin
		}
		if out == nil {
			out = os.Stdout
		}
		transport = &mcp.IOTransport{Reader: io.NopCloser(in), Writer: nopWriteCloser{out}}
	}
	err = srv.Serve(ctx, transport)
	r.finishLive()
	if err := srv.LedgerErr(); err != nil {
		r.fatal = errors.Join(r.fatal, err)
	}
	r.rep.printf("  MCP session ended: %d tool call(s)%s", srv.Calls(), endNote(err))
}

func endNote(err error) string {
	if err == nil || errors.Is(err, io.EOF) {
		return ""
	}
	return " (" + textsafe.OneLine(err.Error()) + ")"
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// agentJail returns the agent jail, or the unjailed runner on the
// explicit opt-out, or an error (refuse).
func (r *runner) agentJail() (aj jail.AgentJail, unjailedReason string, err error) {
	var j jail.AgentJail
	var jerr error
	if r.opt.AgentJail != nil {
		j, jerr = r.opt.AgentJail, r.opt.AgentJail.Available()
	} else {
		j, jerr = jail.SelectAgentJail(jail.NameAuto, jail.Options{})
	}
	if jerr == nil {
		return j, "", nil
	}
	if !r.cfg.Agent.AllowUnjailed {
		return nil, "", jerr
	}
	return jail.NewUnjailedAgent(jail.Options{}), jerr.Error(), nil
}

// tempParent is where the agent's private directories go: RUNNER_TEMP in
// Actions, else the system's temporary directory.
func (r *runner) tempParent() string {
	if rt := r.opt.Getenv("RUNNER_TEMP"); rt != "" && filepath.IsAbs(rt) {
		if real, err := filepath.EvalSymlinks(rt); err == nil {
			return real
		}
	}
	d := os.TempDir()
	if real, err := filepath.EvalSymlinks(d); err == nil {
		return real
	}
	return d
}

// agentSession runs the live agent: its governed session hosted on a Unix
// socket outside the agent jail, the agent in the jail launching the relay
// to it, then the agent_session entry.
func (r *runner) agentSession(ctx context.Context, pl *plan) {
	cfg := r.cfg.Agent
	r.section("agent session: " + textsafe.OneLine(cfg.describe()))
	s := &session{r: r, cfg: cfg, receipts: pl.res.ReceiptsDir, rec: evidence.AgentRecord{Kind: cfg.Kind, Command: cfg.Command, Env: append([]string{}, cfg.EnvNames...),
		MaxToolCalls: int64(cfg.MaxToolCalls), TimeoutMS: cfg.Timeout.Milliseconds()}}
	if s.rec.Env == nil {
		s.rec.Env = []string{}
	}
	s.run(ctx)
	s.record()
}

// session is one live agent session.
type session struct {
	r        *runner
	receipts string
	cfg      AgentConfig
	rec      evidence.AgentRecord
	sum      AgentSummary
	errMsg   string // why the agent did not run as asked, for the entry's error
}

func (s *session) fail(killed, format string, args ...any) {
	s.rec.Killed = killed
	s.rec.ExitCode = -1
	s.errMsg = fmt.Sprintf(format, args...)
	s.r.rep.annotate(levelError, "Deponent: the agent did not run", s.errMsg)
}

func (s *session) run(ctx context.Context) {
	r := s.r
	aj, unjailedWhy, err := r.agentJail()
	if err != nil {
		s.rec.Jail = ""
		s.fail(evidence.KilledNoJail, "no agent jail is available (%v): the agent was not started (fail closed); "+
			"fix the jail (see the reason), or set allow-unjailed-agent: true to run the agent process without one (recorded)", err)
		return
	}
	s.rec.Jail, s.rec.Unjailed = aj.Name(), aj.Name() == jail.NameNone
	if s.rec.Unjailed {
		s.sum.UnjailedReason = unjailedWhy
		r.rep.annotate(levelWarning, "Deponent: agent UNJAILED", "allow-unjailed-agent: the agent process runs WITHOUT the agent jail ("+
			unjailedWhy+"); it could write the workspace and read the runner's files directly. Recorded in the receipt.")
	}
	root, err := os.MkdirTemp(r.tempParent(), "deponent-agent-")
	if err != nil {
		s.fail(KilledNotStarted, "cannot create the agent's private directory: %v", err)
		return
	}
	defer os.RemoveAll(root)
	home, tmp, cfgDir := filepath.Join(root, "home"), filepath.Join(root, "tmp"), filepath.Join(root, "cfg")
	for _, d := range []string{home, tmp, cfgDir} {
		if err := os.Mkdir(d, 0o700); err != nil {
			s.fail(KilledNotStarted, "cannot create the agent's private directory: %v", err)
			return
		}
	}
	ln, err := listenShort(root)
	if err != nil {
		s.fail(KilledNotStarted, "cannot listen for the agent's MCP relay: %v", err)
		return
	}
	defer ln.Close()
	self, err := os.Executable()
	if err == nil {
		self, err = filepath.EvalSymlinks(self)
	}
	if err != nil {
		s.fail(KilledNotStarted, "cannot locate deponent-action itself, the relay the agent starts: %v", err)
		return
	}
	server := agent.MCPServer{Command: self, Args: []string{"mcp", "--connect", ln.Path()}}
	values := map[string]string{}
	for _, name := range s.cfg.EnvNames {
		values[name] = r.opt.Getenv(name)
	}
	cfgPath := filepath.Join(cfgDir, "mcp.json")
	readOnly := []string{self, cfgDir, ln.Dir()}
	var argv, env []string
	switch s.cfg.Kind {
	case AgentCommand:
		if err := agent.WriteMCPConfig(cfgPath, map[string]agent.MCPServer{agent.ServerName: server}); err != nil {
			s.fail(KilledNotStarted, "cannot write the MCP config: %v", err)
			return
		}
		path := joinPath(nodeDir(r.hostPATH()), "/usr/local/bin", "/usr/bin", "/bin")
		for k, v := range values {
			env = append(env, k+"="+v)
		}
		sort.Strings(env)
		// Set last: agent-env cannot name these (agent.CheckEnv), and
		// they would win anyway.
		env = append(env, "HOME="+home, "TMPDIR="+tmp, "PATH="+path, agent.MCPConfigEnv+"="+cfgPath)
		argv = []string{"/bin/sh", "-c", s.cfg.Command}
	default:
		getenv := func(k string) string {
			if k == "PATH" {
				return r.hostPATH()
			}
			return r.opt.Getenv(k)
		}
		cli, err := findCLI(ctx, s.cfg, getenv, r.tempParent(), func(p string) (string, error) {
			return s.version(ctx, aj, p, home, tmp)
		})
		if err != nil {
			s.fail(KilledNotStarted, "%v", err)
			return
		}
		s.sum.Note = cli.Note
		r.rep.printf("  %s", textsafe.OneLine(cli.Note))
		if v, err := s.version(ctx, aj, cli.Path, home, tmp); err == nil {
			s.rec.CLIVersion = v
		}
		readOnly = append(readOnly, exposedFor(cli.Path)...)
		nd := nodeDir(r.hostPATH())
		if nd != "" {
			readOnly = append(readOnly, nd)
		}
		inv, err := agent.Build(s.cfg.Preset, agent.Options{Task: r.cfg.Task, MCPConfig: cfgPath, Server: server, Home: home, TmpDir: tmp,
			PATH: joinPath(filepath.Dir(cli.Path), nd, "/usr/local/bin", "/usr/bin", "/bin"), AgentEnv: values})
		if err != nil {
			s.fail(KilledNotStarted, "%v", err)
			return
		}
		if err := inv.WriteFiles(); err != nil {
			s.fail(KilledNotStarted, "%v", err)
			return
		}
		argv, env = append([]string{cli.Path}, inv.Argv[1:]...), inv.Env
	}

	transcriptName := "agent-" + r.cfg.SessionID + ".transcript"
	dir := filepath.Join(s.receipts, r.cfg.Producer)
	tw, err := newCappedFile(filepath.Join(dir, transcriptName), maxTranscriptBytes)
	if err != nil {
		s.fail(KilledNotStarted, "cannot create the transcript file: %v", err)
		return
	}
	ew, err := newCappedFile(filepath.Join(dir, "agent-"+r.cfg.SessionID+".stderr"), maxStderrBytes)
	if err != nil {
		tw.Close()
		s.fail(KilledNotStarted, "cannot create the agent's stderr file: %v", err)
		return
	}
	s.rec.Transcript = transcriptName

	actx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	var stopOnce sync.Once
	tw.onOver = func() {
		stopOnce.Do(func() { stop(jail.AgentKill(fmt.Sprintf("transcript>%dMB", maxTranscriptBytes>>20))) })
	}
	srv, err := r.newServer(s.cfg.Kind, func() { stopOnce.Do(func() { stop(jail.AgentKill(KilledToolCallLimit)) }) })
	if err != nil {
		tw.Close()
		ew.Close()
		s.fail(KilledNotStarted, "%v", err)
		return
	}
	var served sync.WaitGroup
	var connsMu sync.Mutex
	var conns []net.Conn
	accepted := make(chan struct{})
	go func() {
		defer close(accepted)
		for {
			c, err := ln.Accept()
			if err != nil {
				if errors.Is(err, net.ErrClosed) {
					return
				}
				r.live.mu.Lock()
				r.rep.annotate(levelWarning, "Deponent: relay connection refused", err.Error())
				r.live.mu.Unlock()
				continue
			}
			connsMu.Lock()
			conns = append(conns, c)
			connsMu.Unlock()
			served.Add(1)
			go func() {
				defer served.Done()
				// The session's context is not the agent's: a call in flight
				// when the agent is killed is cancelled by the SDK as the
				// connection ends, and still recorded.
				_ = srv.Serve(context.WithoutCancel(ctx), mcprelay.Transport(c))
			}()
		}
	}()

	r.rep.printf("  agent jail: %s; timeout %s; max-tool-calls %d; transcript %s", s.rec.Jail, s.cfg.Timeout, s.cfg.MaxToolCalls, transcriptName)
	res, runErr := aj.Run(actx, jail.AgentSpec{Workspace: r.gate.Sandbox(), Argv: argv, Env: env, Home: home, TmpDir: tmp,
		ReadOnly: dedupeExposed(readOnly), Stdout: tw, Stderr: ew, Timeout: s.cfg.Timeout})
	// The agent and the relays are gone: no new connection comes; the
	// sessions end as their connections close, and every call in flight is
	// recorded before the session entry.
	_ = ln.Close()
	<-accepted
	if !waitTimeout(&served, sessionGrace) {
		// Something outside the agent's process tree still holds a
		// connection (possible only without an agent jail's pid
		// namespace): end those sessions; their calls in flight are
		// cancelled and still recorded.
		r.live.mu.Lock()
		r.rep.annotate(levelWarning, "Deponent: MCP session outlived the agent", "a connection to the governed session was still open after the agent exited; it was closed")
		r.live.mu.Unlock()
		connsMu.Lock()
		for _, c := range conns {
			_ = c.Close()
		}
		connsMu.Unlock()
		served.Wait()
	}
	srv.Drain()
	r.finishLive()
	if err := srv.LedgerErr(); err != nil {
		r.fatal = errors.Join(r.fatal, err)
	}
	terr, eerr := tw.Close(), ew.Close()
	s.rec.TranscriptSHA256 = tw.sum()
	s.rec.ToolCalls = srv.Calls()
	s.rec.ExitCode = int64(res.ExitCode)
	s.rec.Killed = res.Killed
	s.rec.DurationMS = res.Duration.Milliseconds()
	s.sum.Duration = res.Duration
	if runErr != nil {
		s.errMsg = "the agent jail: " + runErr.Error()
		r.rep.annotate(levelError, "Deponent: agent jail", s.errMsg)
		if s.rec.Killed == "" {
			s.rec.Killed = "jail-error"
		}
	}
	if res.Killed == evidence.KilledNoJail {
		s.errMsg = "the agent jail could not be built; the agent did not run: " + res.Reason
	} else if res.Reason != "" {
		// How the session ended, or what the jail could not give on this host
		// (no abstract-socket scope before Linux 6.12): said, never silent.
		r.rep.annotate(levelWarning, "Deponent: agent session", res.Reason)
		s.sum.Detail = strings.TrimPrefix(s.sum.Detail+"; "+res.Reason, "; ")
	}
	if terr != nil || eerr != nil {
		s.errMsg = strings.TrimPrefix(s.errMsg+"; ", "; ") + fmt.Sprintf("writing the agent's output: %v", errors.Join(terr, eerr))
	}
	if tw.cut {
		s.sum.Detail = fmt.Sprintf("the transcript was cut at %d MiB", maxTranscriptBytes>>20)
	}
	s.readReport(filepath.Join(dir, transcriptName))
	if res.ExitCode != 0 || res.Killed != "" {
		s.sum.Detail = strings.TrimPrefix(s.sum.Detail+"; "+ew.tailText(), "; ")
	}
}

// version runs `CLI --version` in the agent jail (the CLI is not run on the
// host unconfined, not even for its version).
func (s *session) version(ctx context.Context, aj jail.AgentJail, cli, home, tmp string) (string, error) {
	if _, err := os.Stat(cli); err != nil {
		return "", err
	}
	var out, errb bytes.Buffer
	ro := append(exposedFor(cli), s.r.nodeReadOnly()...)
	res, err := aj.Run(ctx, jail.AgentSpec{Workspace: s.r.gate.Sandbox(), Argv: []string{cli, "--version"},
		Env:  []string{"HOME=" + home, "TMPDIR=" + tmp, "PATH=" + joinPath(filepath.Dir(cli), nodeDir(s.r.hostPATH()), "/usr/local/bin", "/usr/bin", "/bin")},
		Home: home, TmpDir: tmp, ReadOnly: dedupeExposed(ro), Stdout: &out, Stderr: &errb, Timeout: versionTimeout})
	if err != nil {
		return "", err
	}
	if res.ExitCode != 0 {
		return "", fmt.Errorf("%s --version exited %d (%s): %s", cli, res.ExitCode, res.Killed, lastLine(errb.String()))
	}
	return parseCLIVersion(s.cfg.Preset, out.Bytes())
}

// hostPATH is the runner's PATH without the entries that are, or resolve
// into, the workspace: the repository must not choose the agent's CLI (it
// would get the agent's API key) or its node.
func (r *runner) hostPATH() string {
	var keep []string
	for _, d := range filepath.SplitList(r.opt.Getenv("PATH")) {
		if d == "" || !filepath.IsAbs(d) {
			continue
		}
		real := d
		if rd, err := filepath.EvalSymlinks(d); err == nil {
			real = rd
		}
		if within(real, r.gate.Sandbox()) || within(d, r.gate.Sandbox()) {
			continue
		}
		keep = append(keep, d)
	}
	return strings.Join(keep, string(filepath.ListSeparator))
}

func (r *runner) nodeReadOnly() []string {
	if nd := nodeDir(r.hostPATH()); nd != "" {
		return []string{nd}
	}
	return nil
}

// readReport reads a preset's transcript: the CLI's own account of the
// session (version, model, status), recorded, never evidence.
func (s *session) readReport(path string) {
	if s.cfg.Kind == AgentCommand {
		return
	}
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	rep, err := agent.Parse(s.cfg.Preset, f)
	if err != nil {
		s.sum.Detail = "the transcript could not be read in full: " + err.Error()
	}
	s.rec.Status = string(rep.Status)
	if rep.Model != "" {
		s.rec.Model = rep.Model
	}
	if s.rec.CLIVersion == "" {
		s.rec.CLIVersion = rep.CLIVersion
	}
	if rep.Detail != "" {
		s.sum.Detail = strings.TrimPrefix(s.sum.Detail+"; "+rep.Detail, "; ")
	}
}

// record appends the agent_session entry and keeps the agent object for
// the receipt and the summary.
func (s *session) record() {
	r := s.r
	if s.rec.TranscriptSHA256 == "" {
		s.rec.TranscriptSHA256 = evidence.HashOutcome(nil)
	}
	if r.cfg.Model == "" && s.rec.Model != "" {
		r.cfg.Model = s.rec.Model
	}
	params := map[string]any{"agent": s.rec.Kind}
	if s.rec.Command != "" {
		params["command"] = s.rec.Command
	}
	if s.rec.CLIVersion != "" {
		params["cli_version"] = s.rec.CLIVersion
	}
	extra := []canon.Member{
		canon.M(evidence.FieldExitCode, canon.Int(s.rec.ExitCode)),
		canon.M(evidence.FieldDurationMS, canon.Int(s.rec.DurationMS)),
		canon.M(evidence.FieldToolCalls, canon.Int(s.rec.ToolCalls)),
		canon.M(evidence.FieldAgentJail, canon.Str(s.rec.Jail)),
	}
	if s.rec.Killed != "" {
		extra = append(extra, canon.M(evidence.FieldKilled, canon.Str(s.rec.Killed)))
	}
	if s.errMsg != "" {
		extra = append(extra, canon.M(evidence.FieldError, canon.Str(s.errMsg)))
	}
	reason := fmt.Sprintf("the harness ran the %s agent in the agent jail (%s); its exit code and words are testimony, not evidence", s.rec.Kind, s.rec.Jail)
	if s.rec.Unjailed {
		reason = fmt.Sprintf("the harness ran the %s agent WITHOUT an agent jail (allow-unjailed-agent); its exit code and words are testimony, not evidence", s.rec.Kind)
	}
	if _, err := r.cell.Record(evidence.Record{Agent: evidence.AgentHarness, Tool: evidence.ToolAgentSession, Params: params,
		Verdict: evidence.VerdictAllow, BlastClass: evidence.ClassAgentSession, Reason: reason,
		OutcomeSHA256: s.rec.TranscriptSHA256, Extra: extra}); err != nil {
		r.fatal = errors.Join(r.fatal, fmt.Errorf("the agent_session entry was not recorded: %w", err))
	}
	rec := s.rec
	if r.live == nil {
		r.live = &liveState{}
	}
	r.live.rec = &rec
	s.sum.Kind, s.sum.Command, s.sum.CLIVersion, s.sum.Model, s.sum.Status = rec.Kind, rec.Command, rec.CLIVersion, rec.Model, rec.Status
	s.sum.Jail, s.sum.Unjailed, s.sum.ExitCode, s.sum.Killed = rec.Jail, rec.Unjailed, rec.ExitCode, rec.Killed
	s.sum.ToolCalls, s.sum.MaxToolCalls, s.sum.Transcript, s.sum.TranscriptSHA256 = rec.ToolCalls, rec.MaxToolCalls, rec.Transcript, rec.TranscriptSHA256
	if s.errMsg != "" {
		s.sum.Detail = strings.TrimPrefix(s.sum.Detail+"; "+s.errMsg, "; ")
	}
	sum := s.sum
	r.live.sum = &sum
	end := fmt.Sprintf("exit %d", rec.ExitCode)
	if rec.Killed != "" {
		end = "killed: " + rec.Killed
	}
	r.rep.printf("  agent session ended: %s after %s; %d tool call(s); transcript sha256 %s", end,
		roundDur(time.Duration(rec.DurationMS)*time.Millisecond), rec.ToolCalls, shortHash(rec.TranscriptSHA256))
}

func joinPath(dirs ...string) string {
	var out []string
	seen := map[string]bool{}
	for _, d := range dirs {
		if d == "" || seen[d] || !filepath.IsAbs(d) {
			continue
		}
		seen[d] = true
		out = append(out, d)
	}
	return strings.Join(out, string(filepath.ListSeparator))
}

// dedupeExposed drops duplicates and what the agent jail exposes anyway.
func dedupeExposed(paths []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range paths {
		if p == "" || seen[p] || systemExposed(p) {
			continue
		}
		seen[p] = true
		out = append(out, p)
	}
	return out
}

// cappedFile writes to a new file and a running sha256 until max bytes;
// the rest is dropped and onOver is called once.
type cappedFile struct {
	f      *os.File
	h      hash.Hash
	n, max int64
	cut    bool
	onOver func()
	tail   []byte // the last bytes written, for the log
	mu     sync.Mutex
}

func newCappedFile(path string, max int64) (*cappedFile, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	return &cappedFile{f: f, h: sha256.New(), max: max}, nil
}

func (c *cappedFile) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(p)
	if room := c.max - c.n; int64(len(p)) > room {
		p = p[:max(room, 0)]
		if !c.cut {
			c.cut = true
			if c.onOver != nil {
				go c.onOver()
			}
		}
	}
	if len(p) > 0 {
		if _, err := c.f.Write(p); err != nil {
			return 0, err
		}
		c.h.Write(p)
		c.n += int64(len(p))
		c.tail = append(c.tail, p...)
		if len(c.tail) > 4096 {
			c.tail = c.tail[len(c.tail)-4096:]
		}
	}
	return n, nil
}

func (c *cappedFile) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.f.Sync(); err != nil {
		c.f.Close()
		return err
	}
	return c.f.Close()
}

func (c *cappedFile) sum() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return hex.EncodeToString(c.h.Sum(nil))
}

// tailText is the last line of what was written, for the summary.
func (c *cappedFile) tailText() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := strings.TrimSpace(string(c.tail))
	if t == "" {
		return ""
	}
	return "stderr: " + textsafe.OneLine(lastLine(t))
}

// listenShort listens for the relay in a private directory under root, or,
// when that path would be too long for a Unix socket, under the system's
// temporary directory.
func listenShort(root string) (*mcprelay.Listener, error) {
	ln, err := mcprelay.Listen(root)
	if err == nil {
		return ln, nil
	}
	for _, alt := range []string{os.TempDir(), "/tmp"} {
		if real, rerr := filepath.EvalSymlinks(alt); rerr == nil {
			if ln, aerr := mcprelay.Listen(real); aerr == nil {
				return ln, nil
			}
		}
	}
	return nil, err
}

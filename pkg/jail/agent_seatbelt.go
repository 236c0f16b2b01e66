package jail

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"time"
)

// AgentSeatbelt confines an agent process with macOS sandbox-exec and the
// profile of agentSeatbeltProfile.
type AgentSeatbelt struct {
	opts Options
}

// NewAgentSeatbelt returns the Seatbelt agent jail.
func NewAgentSeatbelt(opts Options) *AgentSeatbelt { return &AgentSeatbelt{opts: opts} }

// Name is "seatbelt".
func (a *AgentSeatbelt) Name() string { return NameSeatbelt }

func (a *AgentSeatbelt) binary() string { return NewSeatbelt(a.opts).binary() }

var agentSeatbeltProbes sync.Map // binary → *seatbeltProbe

// Available probes once per binary that sandbox-exec applies the agent
// profile and that, under it, the private HOME is writable and the
// workspace is not.
func (a *AgentSeatbelt) Available() error {
	if runtime.GOOS != "darwin" {
		return fmt.Errorf("jail: Seatbelt needs macOS (this is %s)", runtime.GOOS)
	}
	v, _ := agentSeatbeltProbes.LoadOrStore(a.binary(), &seatbeltProbe{})
	p := v.(*seatbeltProbe)
	p.once.Do(func() { p.err = a.probe() })
	return p.err
}

func (a *AgentSeatbelt) probe() error {
	if _, err := os.Stat(a.binary()); err != nil {
		return fmt.Errorf("jail: Seatbelt launcher %s is missing (%v): the agent cannot run confined on this Mac", a.binary(), err)
	}
	root, err := os.MkdirTemp(tempRoot(a.opts), "deponent-agent-probe-")
	if err != nil {
		return fmt.Errorf("jail: agent jail probe: %w", err)
	}
	defer os.RemoveAll(root)
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	spec := AgentSpec{Workspace: filepath.Join(root, "ws"), Home: filepath.Join(root, "home"), TmpDir: filepath.Join(root, "tmp"),
		Argv: []string{shell, "-c", `touch "$HOME/ok" && ! touch ./no 2>/dev/null`}}
	spec.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + spec.Home}
	for _, d := range []string{spec.Workspace, spec.Home, spec.TmpDir} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return fmt.Errorf("jail: agent jail probe: %w", err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	argv, err := a.argv(spec, root)
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = spec.Workspace
	cmd.Env = spec.Env
	cmd.ExtraFiles = []*os.File{devNull()}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("jail: the agent's Seatbelt profile cannot be applied here (%v: %q); the agent cannot run confined", err, bytes.TrimSpace(stderr.Bytes()))
	}
	if _, err := os.Stat(filepath.Join(spec.Home, "ok")); err != nil {
		return fmt.Errorf("jail: agent jail probe: the private HOME was not writable under the profile")
	}
	return nil
}

func devNull() *os.File {
	f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return nil
	}
	return f
}

// Run confines spec with Seatbelt.
func (a *AgentSeatbelt) Run(ctx context.Context, spec AgentSpec) (AgentResult, error) {
	if err := checkAgentSpec(spec, a.opts); err != nil {
		return AgentResult{}, err
	}
	if err := a.Available(); err != nil {
		return AgentResult{Backend: NameSeatbelt, ExitCode: -1, Killed: KilledNoJail, Reason: err.Error()}, nil
	}
	dir, err := os.MkdirTemp(tempRoot(a.opts), "deponent-agent-")
	if err != nil {
		return AgentResult{}, err
	}
	defer os.RemoveAll(dir)
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		dir = r
	}
	argv, err := a.argv(spec, dir)
	if err != nil {
		return AgentResult{}, err
	}
	return runAgent(ctx, NameSeatbelt, argv, spec.Env, spec, dir, false)
}

// argv is sandbox-exec with the agent profile, then the wrapper and the
// agent's command. markerDir holds the started marker the wrapper writes.
func (a *AgentSeatbelt) argv(spec AgentSpec, markerDir string) ([]string, error) {
	home := realHome(a.opts)
	profile, params, err := agentSeatbeltProfile(agentSeatbeltInputs{
		workspace: spec.Workspace,
		writable:  []string{spec.Home, spec.TmpDir},
		readOnly:  append(append([]string(nil), spec.ReadOnly...), markerDir),
		output:    []string{filepath.Join(markerDir, "agent-started")},
		home:      home,
		secrets:   seatbeltSecrets(home, nil),
	})
	if err != nil {
		return nil, err
	}
	return seatbeltArgv(a.binary(), profile, params, agentWrapper(spec.Argv)), nil
}

// agentSeatbeltInputs are the symlink-resolved paths of an agent profile.
type agentSeatbeltInputs struct {
	workspace string   // readable, not writable; the working directory
	writable  []string // the private HOME and TMPDIR
	readOnly  []string // the CLI, node, the relay, its configuration and socket directories
	output    []string // files written through inherited descriptors (the started marker)
	home      string   // the real home: unreadable except what is re-allowed; "" when unknown
	secrets   []string // unreadable wherever they are
}

// agentSeatbeltServices are the mach services an agent CLI needs besides
// the tools' jail's user and group lookups: DNS resolution
// (mDNSResponder), network configuration and proxies (configd), TLS trust
// evaluation for CLIs that use the system's (trustd), and the notification
// centre libSystem uses for configuration changes.
var agentSeatbeltServices = []string{
	"com.apple.system.opendirectoryd.libinfo",
	"com.apple.system.opendirectoryd.membership",
	"com.apple.dnssd.service",
	"com.apple.SystemConfiguration.configd",
	"com.apple.SystemConfiguration.DNSConfiguration",
	"com.apple.trustd",
	"com.apple.trustd.agent",
	"com.apple.system.notification_center",
}

// agentSeatbeltDeniedOps are denied at the end of the agent profile: the
// tools' jail's list without the network.
var agentSeatbeltDeniedOps = []string{
	"lsopen", "appleevent-send", "job-creation", "user-preference-write",
	"file-mount", "file-unmount", "nvram*", "sysctl-write", "mach-register",
}

// agentSeatbeltProfile renders the agent jail's SBPL profile: deny by
// default; processes as in the tools' jail; the NETWORK ALLOWED (outbound
// and inbound sockets: the agent must reach its model API, and the relay
// socket); reads as in the tools' jail — everything but the hidden areas
// (every home, other volumes, the shared temporary directories), then again
// the workspace, the private HOME and TMPDIR and the read-only paths;
// writes only to the private HOME and TMPDIR, the started marker and the
// /dev nodes a shell needs — never the workspace; then the denials no rule
// above can undo (credential locations, root's secrets, terminals, sudo,
// TIOCSTI, the LaunchServices/preferences/Keychain service prefixes, and
// agentSeatbeltDeniedOps).
func agentSeatbeltProfile(in agentSeatbeltInputs) (string, []sbplParam, error) {
	w := &sbplWriter{count: map[string]int{}}
	all := append(append(append([]string{in.workspace}, in.writable...), in.readOnly...), in.output...)
	all = append(all, in.secrets...)
	if in.home != "" {
		all = append(all, in.home)
	}
	if err := checkParamValues(all); err != nil {
		return "", nil, err
	}
	w.processRules(agentSeatbeltServices, "(allow ipc-posix-sem ipc-posix-shm)")

	w.line("; the network: the agent's model API and the relay socket")
	w.line("(allow system-socket)")
	w.line("(allow network*)")

	w.readRules("the agent", in.home, append(append([]string{in.workspace}, in.writable...), in.readOnly...))

	w.line("; writes: the private HOME and TMPDIR, the marker, the /dev nodes a shell needs; never the workspace")
	var trees []string
	for _, t := range in.writable {
		trees = append(trees, "(subpath "+w.param("WRITE", t)+")")
	}
	w.writeRules(trees, in.output)

	w.line("; denials no rule above may undo")
	w.rule("deny file-write*", []string{"(subpath " + w.param("WORKSPACE", in.workspace) + ")"})
	var denied []string
	for _, s := range seatbeltDeniedServices {
		if s != "com.apple.trustd" { // TLS trust evaluation is allowed above
			denied = append(denied, s)
		}
	}
	w.finalDenials(in.secrets, denied, agentSeatbeltDeniedOps)
	if w.err != nil {
		return "", nil, w.err
	}
	return w.b.String(), w.params, nil
}

package jail

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
)

// AgentBwrap confines an agent process with bubblewrap.
type AgentBwrap struct {
	opts Options
}

// NewAgentBwrap returns the bubblewrap agent jail.
func NewAgentBwrap(opts Options) *AgentBwrap { return &AgentBwrap{opts: opts} }

// Name is "bwrap".
func (a *AgentBwrap) Name() string { return NameBwrap }

var agentBwrapProbes sync.Map // binary → *probeOnce

// Available probes once per binary that bubblewrap can build the tools'
// jail here (the same namespaces) and then an agent-shaped jail: a user
// namespace, the host's network, a read-only workspace and a writable
// private HOME.
func (a *AgentBwrap) Available() error {
	b := NewBwrap(a.opts)
	f, err := b.probe()
	if err != nil {
		return err
	}
	bin, err := b.binary()
	if err != nil {
		return err
	}
	v, _ := agentBwrapProbes.LoadOrStore(bin, &probeOnce{})
	po := v.(*probeOnce)
	po.once.Do(func() { po.res.err = a.probeAgent(bin, f) })
	return po.res.err
}

func (a *AgentBwrap) probeAgent(bin string, f bwrapFeatures) error {
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
	res, err := a.run(context.Background(), bin, f, spec)
	if err != nil {
		return fmt.Errorf("jail: agent jail probe: %w", err)
	}
	if res.Killed != "" || res.ExitCode != 0 {
		return fmt.Errorf("jail: bubblewrap cannot build the agent jail here (exit %d, %s %s); the agent cannot run confined", res.ExitCode, res.Killed, res.Reason)
	}
	if _, err := os.Stat(filepath.Join(spec.Home, "ok")); err != nil {
		return fmt.Errorf("jail: agent jail probe: the private HOME was not writable in the jail")
	}
	return nil
}

// Run confines spec with bubblewrap.
func (a *AgentBwrap) Run(ctx context.Context, spec AgentSpec) (AgentResult, error) {
	if err := checkAgentSpec(spec, a.opts); err != nil {
		return AgentResult{}, err
	}
	if err := a.Available(); err != nil {
		return AgentResult{Backend: NameBwrap, ExitCode: -1, Killed: KilledNoJail, Reason: err.Error()}, nil
	}
	b := NewBwrap(a.opts)
	f, _ := b.probe()
	bin, _ := b.binary()
	return a.run(ctx, bin, f, spec)
}

func (a *AgentBwrap) run(ctx context.Context, bin string, f bwrapFeatures, spec AgentSpec) (AgentResult, error) {
	rd, err := newRunDir(tempRoot(a.opts))
	if err != nil {
		return AgentResult{}, err
	}
	defer rd.remove()
	argv := append([]string{bin}, agentBwrapArgs(f, os.Geteuid(), spec, rd)...)
	return runAgent(ctx, NameBwrap, argv, spec.Env, spec, rd.root, true)
}

// agentBwrapArgs builds the agent jail's command line after the binary:
//
//   - every namespace but the network (the tools' jail's baseArgs, then
//     --share-net): always a user namespace with no nested ones where bwrap
//     can forbid them, uid 65534 inside when the runner is root (it maps to
//     the runner's own uid outside, so the private HOME it writes stays the
//     runner's), no capabilities, a new session, death with the caller;
//   - the OS read-only as in the tools' jail (systemArgs), a private /proc
//     of the new pid namespace and /dev, both read-only, capped tmpfs /tmp
//     and /dev/shm, the /etc secrets masked, and the jail's own root
//     remounted read-only last (finalArgs);
//   - the directory /etc/resolv.conf points into when it leaves /etc (on
//     systemd-resolved hosts, e.g. GitHub's Ubuntu runners, a file under
//     /run), read-only, so that name resolution works;
//   - spec.ReadOnly read-only, the private HOME and TMPDIR read-write, the
//     workspace read-only and the working directory.
//
// Nothing else of the host exists in the jail: not the real home, not
// RUNNER_TEMP (the receipts and the ledger), not /run, /var or another
// process's socket.
func agentBwrapArgs(f bwrapFeatures, euid int, spec AgentSpec, rd *runDir) []string {
	// The tools' jail's isolation (baseArgs: every namespace, always a user
	// namespace, uid 65534 for root, no nested user namespaces, no
	// capabilities), with the network shared back.
	args := append(baseArgs(f, euid), "--share-net")
	args = append(args, systemArgs()...)
	// A runner installed under a system tree (/opt/actions-runner): its
	// credentials, RUNNER_TEMP (the ledger, the receipts) and other jobs'
	// checkouts are hidden as in the tools' jail.
	sys := newExposureGuard("", spec.Workspace, "", os.Getenv).systemMasks()
	args = append(args, systemMaskArgs(f, sys)...)
	args = append(args, volatileArgs(f, agentTmpfsMB)...)
	for _, m := range existingEtcMasks() {
		args = append(args, maskArgs(m, rd)...)
	}
	if d := resolvConfDir(); d != "" {
		args = append(args, "--ro-bind", d, d)
	}
	ro := append([]string(nil), spec.ReadOnly...)
	sort.Strings(ro) // parents before children: a later bind covers an earlier one
	for _, p := range ro {
		args = append(args, "--ro-bind", p, p)
	}
	args = append(args,
		"--bind", spec.Home, spec.Home,
		"--bind", spec.TmpDir, spec.TmpDir,
		"--ro-bind", spec.Workspace, spec.Workspace)
	args = append(args, systemMaskSealArgs(sys)...)
	args = append(args, finalArgs()...)
	args = append(args, "--chdir", spec.Workspace)
	return append(args, agentWrapper(spec.Argv)...)
}

// agentTmpfsMB caps the jail's own /tmp and /dev/shm (the agent's TMPDIR
// is the private directory, not these).
const agentTmpfsMB = 512

// resolvConfDir is the directory /etc/resolv.conf resolves into when that
// lies outside the system directories the jail exposes; "" otherwise.
func resolvConfDir() string {
	r, err := filepath.EvalSymlinks("/etc/resolv.conf")
	if err != nil || r == "/etc/resolv.conf" {
		return ""
	}
	for _, d := range systemDirs {
		if within(r, d) {
			return ""
		}
	}
	return filepath.Dir(r)
}

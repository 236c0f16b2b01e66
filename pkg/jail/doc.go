// Package jail confines what an allowed command does once it runs.
//
// The gate decides whether a tool call may run; an allowed `python3` can
// still run any code. This package is the second line: one Backend
// interface, bubblewrap on Linux, Seatbelt on macOS, and a refusal ("no-jail")
// when neither can really confine. This comment is the package's contract;
// the live tests in this directory (live_test.go and friends) prove each
// claim marked "tested" against the real sandbox, each with a positive
// control that shows the same probe succeeding unjailed.
//
// # Selection
//
// Select("auto" | "bwrap" | "seatbelt" | "none", Options). "auto"
// probes the native backend of the OS (bwrap on Linux, Seatbelt on macOS)
// by running a trivial command in a real jail once per binary, and returns an
// error that says why and names the fix when it cannot (bwrap missing, user
// namespaces blocked by AppArmor on Ubuntu 24.04: `sudo sysctl -w
// kernel.apparmor_restrict_unprivileged_userns=0` or an AppArmor profile for
// bwrap, disabled by sysctl, or not permitted in a container). A named
// backend that is unavailable is an error, never a silent switch. "none" is
// gate-only, needs Options.UnsafeAllowUnjailed, and marks every Result Unjailed. A Backend
// whose probe fails at Run time returns NoJail: Killed "no-jail",
// ExitCode -1, nothing executed (tested).
//
// # Contract of every jailing backend
//
//   - No network: no sockets to the internet, to the host's loopback
//     services, or to the host's Unix sockets (tested: TCP to a listener on
//     127.0.0.1, a route lookup to a public address, a path Unix socket outside
//     the sandbox, and on Linux an abstract Unix socket). A Unix socket that a
//     host process creates INSIDE the sandbox directory is reachable: the
//     sandbox is shared with the host by design.
//   - Writes confined to the sandbox and a private TMPDIR created per run
//     outside the sandbox and removed afterwards (tested: /tmp, the real
//     HOME, a read-only toolchain, through a symlink in the sandbox, from a
//     grandchild). Spec.Protected paths inside the sandbox stay read-only,
//     also against code (tested: .git/hooks/pre-commit written from Python,
//     mv/rm of .git, a hard link to .git/config). An absent protected path
//     cannot be created (tested: a later `git init` would otherwise run a
//     planted hook on the host); on Linux its mount point is removed after the
//     run when still empty. A protected path that is, or lies below, a
//     symlink is refused (no-jail): the jail can neither pin a name that lives
//     in a writable directory nor bind through a link (tested).
//   - Secrets stay out: the environment is rebuilt from an allowlist — PATH
//     (Spec.PATH), HOME (an empty private directory), TMPDIR, LANG, LC_*,
//     TERM, Spec.Env, and DEPONENT_JAIL_RUN (a random per-run token, not a
//     secret, used by the process sweep). Everything else of the caller —
//     GITHUB_TOKEN, ACTIONS_*, cloud keys — is never passed (tested, with a
//     plain exec as the control that shows them leaking). The real home's
//     credential locations (.ssh, .aws, .config/gh, .config/gcloud, .docker,
//     .netrc, .git-credentials, .gnupg, .kube, .npmrc, .pypirc,
//     .cargo/credentials.toml, Library/Keychains, ... see credentialPaths) are
//     unreadable (tested), and other processes' environments cannot be read
//     nor the processes signalled (tested).
//   - Bounded: RLIMIT_CPU (default 60 s; soft limit → SIGXCPU, reported
//     "cpu>60s"; hard limit one second later → SIGKILL), RLIMIT_FSIZE
//     (default 256 MiB, reported "fsize>256MB"), resident memory summed over
//     the whole process tree and polled (default 2048 MiB, reported
//     "memory>2048MB"; shared pages count once per process, which errs on
//     the safe side), and wall clock (default 90 s, reported
//     "wallclock>90s"); all tested. The rlimits are applied by a /bin/sh
//     prelude inside the jail that then execs `/bin/sh -c Script`, so they
//     hold for every process the script starts. MB means MiB throughout.
//   - No process outlives its step: children, grandchildren, setsid and
//     double-forked daemons are gone when Run returns, however it ends
//     (tested, with a plain run as the control that leaves them behind).
//   - Output goes to a file, never a pipe, so a chatty child cannot stall
//     the watchdog; RLIMIT_FSIZE caps it too. The Result carries the exit
//     code, a bounded tail (Spec.TailBytes, default 64 KiB), the sha256 and
//     size of the full output (tested).
//   - Fail closed: no usable backend, a protected path the jail cannot
//     hold, or a jail that could not be set up for this run (the rlimit
//     prelude never reached the script) all give Killed "no-jail",
//     ExitCode -1 and the reason; the script did not run (tested).
//
// # Linux: bubblewrap
//
// The command line (see bwrapArgs) is, in order: --unshare-all (user, ipc,
// pid, net, uts, cgroup; plus --unshare-user --disable-userns where bwrap
// supports it, so no nested user namespaces), --die-with-parent,
// --new-session (no TIOCSTI into the caller's terminal), --cap-drop ALL;
// read-only binds of /usr, /etc, /opt and the non-symlink ones of /bin,
// /sbin, /lib* (symlinks of merged-/usr systems are recreated); --proc /proc
// of the new pid namespace (other processes invisible); --dev /dev (null,
// zero, full, random, urandom, tty, pts); tmpfs /tmp and /dev/shm (mode 1777,
// size-capped at FileSizeMB where bwrap supports --size); empty read-only
// files/directories over secrets in /etc (shadow, gshadow, sudoers,
// ssl/private, ssh host keys, NetworkManager/wpa/netplan secrets, ...: a root
// runner's jail is uid 0 and dropping capabilities does not change file
// ownership); read-only binds of the toolchain roots of PATH entries that are
// not under the system dirs (under the real HOME the first directory below
// it, e.g. ~/.pyenv for ~/.pyenv/shims, ~/go for ~/go/bin, ~/.local/bin for
// itself; elsewhere the prefix of a bin dir, e.g. /home/linuxbrew/.linuxbrew)
// plus Options.ExtraReadOnly, with the credential locations inside them
// masked; read-write binds of the private TMPDIR and HOME and of the
// sandbox; read-only re-binds of the protected paths (an empty read-only
// directory over absent ones); --chdir to the sandbox. Nothing else of the
// host exists in the jail: no /run, /var, /home, /root, /sys, /srv, /mnt,
// no host socket anywhere. The real HOME itself is never bound; an
// exposed toolchain's programs keep working (tested with the pyenv shim,
// which sets PYENV_ROOT itself). Tools that locate their data through HOME
// need it named by policy: e.g. rustup's proxies want RUSTUP_HOME in
// Spec.Env and the directory in Options.ExtraReadOnly.
//
// Works as root (CI) and as an unprivileged user (GitHub's `runner`; tested by
// re-running the live tests as an unprivileged account via runuser). Hard
// links out of a read-only bind fail with EXDEV. If the caller dies, the
// bwrap process gets SIGKILL (parent-death signal) and the pid namespace
// dies with it.
//
// # macOS: Seatbelt
//
// `/usr/bin/sandbox-exec -p PROFILE -D KEY=path ... /bin/sh -c ...`, the step
// started in a new session (no controlling terminal), with the profile of
// seatbeltProfile. Every path reaches the profile as a parameter (`(param
// "KEY")` in the text); patterns are built in Go and passed the same way,
// so no path is ever profile text. A path with a control character or
// invalid UTF-8 is refused; a protected path whose pattern would exceed 1024
// bytes is refused too. Paths are symlink-resolved (/var → /private/var).
//
// The profile denies by default (as the strictest public agent profiles do)
// and allows, in order, with later rules winning:
//
//   - processes: exec and fork; signals, process information and task ports
//     only for processes of this sandbox; sysctl reads except kern.procargs*
//     (other processes' arguments and environment); host information;
//     POSIX semaphores; creating Unix and IP sockets, with every network
//     operation denied; mach-lookup of opendirectoryd's libinfo and
//     membership only. No LaunchServices (open, .command files, URL
//     handlers), Apple events, preferences daemon (defaults write),
//     background URL sessions, Keychain or trust daemons, launchd jobs,
//     distributed notifications, IOKit or pseudo-terminals;
//   - reads and executable mappings of the whole system except the hidden
//     areas — /Users, the real HOME wherever it is, /Volumes, root's home,
//     /private/var/folders, /private/tmp and /private/var/tmp, where other
//     processes keep their files (RUNNER_TEMP is under the home on hosted
//     runners) — then again the sandbox, the run directory and the exposed
//     toolchain roots (computeExposure: PATH toolchains and
//     Options.ExtraReadOnly), with the metadata, not the contents, of the
//     directories above them;
//   - writes and ioctls only to the sandbox, the private TMPDIR and HOME, the
//     output file and the /dev nodes a shell needs;
//   - then the denials no rule above can undo: writes to the protected paths,
//     matched case-insensitively (APFS: ".GIT" is ".git"; simple Unicode case
//     folding, so KELVIN SIGN and LONG S too) and also when absent; writes to
//     every .git at any depth when the sandbox's .git is protected; writes of
//     any kind (rename, removal, replacement, mode) to the directories between
//     the sandbox and a protected path, which are created before the run when
//     missing and removed after it when still empty, never following a
//     symlink (a rename is an unlink of the source and a create of the
//     destination, so renaming .github away and back would otherwise change
//     .github/workflows); hard links and clones (a new writable name for a
//     protected or secret inode); reads and writes of the real home's
//     credential locations, of the paths they resolve to when they are
//     symlinks (a ~/.npmrc linked elsewhere), of the credential masks of the
//     exposed roots and of root's secrets (/etc/sudoers, master.passwd, ssh
//     host keys, the system keychain, ...); the terminal devices; exec of
//     sudo, su and login (hosted runners have passwordless sudo); the TIOCSTI
//     ioctl by number; the LaunchServices, cfprefsd, nsurlsessiond and
//     Keychain service prefixes; and network*, lsopen, appleevent-send,
//     job-creation, user-preference-write, file-mount, file-unmount, nvram*,
//     sysctl-write and mach-register, each by name.
//
// The availability probe applies a profile with every kind of rule, so an
// operation or filter a macOS version does not know refuses the backend
// instead of failing a step. The same rlimits, RSS polling (through ps) and
// wall clock apply; macOS ignores RLIMIT_AS, hence the RSS watchdog. The
// profile's text and every pattern are unit-tested on any OS
// (seatbelt_profile_test.go: rules present and in order, every parameter
// defined and used, no path text, each pattern compiled with Go's regexp
// against sample paths). Its live tests (live_test.go and
// live_seatbelt_darwin_test.go, each with a positive control: open of a URL
// and of a .command file, defaults write, a launchd job, a renamed .github,
// case variants, a symlinked ~/.npmrc, the temp trees, sudo, the home's
// agent credentials, TIOCSTI, the common toolchains) run only on the macOS
// CI job. Until that job has passed, the Seatbelt backend is unproven.
//
// # Not covered
//
//   - Kernel and sandbox exploits. There is no seccomp filter: jailed code
//     has the full syscall surface that namespaces (Linux) or Seatbelt
//     (macOS) leave. Side channels (timing, cache, /proc/loadavg-style
//     global counters) are out of scope.
//   - Reading what is deliberately exposed: world-readable files under /usr,
//     /etc, /opt and the toolchain roots, and on Linux root-owned files there
//     when the runner is root (only the listed secrets are masked). On macOS
//     reads are allowed everywhere outside the hidden areas, the credential
//     locations and root's secrets: a self-hosted runner installed outside
//     the home (its .credentials, its _work/_temp) is readable, as is
//     world-readable data under /Library and /private/var. sysctl reads
//     other than kern.procargs* are allowed (process list, hardware,
//     network configuration). Reading alone is inert without a network, but
//     whatever is read can end up in the step's output, which the caller
//     records.
//   - The sandbox itself: anything the host later executes from it (build
//     scripts, unprotected dotfiles) is the gate's and the policy's concern.
//   - Polling windows: memory is sampled every Options.PollInterval (100 ms
//     by default), so a fast allocator can overshoot the cap by what it
//     allocates in one interval. tmpfs pages (/tmp, /dev/shm) are not any
//     process's resident memory: they are capped by size instead, one
//     FileSizeMB each. Disk use in the sandbox and TMPDIR is capped per file
//     (RLIMIT_FSIZE), not in total.
//   - RLIMIT_CPU is per process: a tree of processes can use N seconds each;
//     the wall clock bounds the total. Forks are not capped (RLIMIT_NPROC is
//     per user; the seed rejects it) — wall clock, memory and, on Linux, the
//     pid namespace bound fork bombs. A program that exits by itself with
//     status 152 or 153 is reported as a CPU or file-size kill.
//   - macOS has no pid namespace: the sweep (process group, process tree,
//     every process seen earlier, and the run token in the environment) is
//     best-effort; a daemon that clears its environment and leaves the tree
//     between two samples survives. The same holds for "none" on Linux. If
//     the caller itself crashes, "none" and Seatbelt steps are not killed.
//     On macOS a process started through a service (launchd, LaunchServices)
//     has launchd as its parent and escapes the sweep; the profile denies
//     those services (tested: nothing of the step survives).
//   - macOS name equivalence beyond simple case folding: APFS also treats
//     canonically equivalent Unicode spellings as one name. The patterns
//     cover case (and the KELVIN SIGN's and LONG S's folds to k and s), not
//     normalization of non-ASCII protected names; the gate and the runner's
//     after-step comparison of the protected set remain for those.
//   - Concurrent runs on the same sandbox with an absent protected path:
//     the first run to finish removes the empty mount point and the other
//     run's guard over that name detaches with it. Steps of one sandbox are
//     meant to run one at a time.
//   - The Seatbelt profile's operations are verified only on the macOS runner
//     (and by the availability probe, which applies the same profile shape);
//     the Linux build only unit-tests its text. Concurrent Seatbelt runs on
//     one sandbox share the parents they create for protected paths: the
//     first to finish removes an empty one while the other still runs, whose
//     profile still denies that name (nothing opens; the step just cannot add
//     files below it any more).
//
// The "none" backend has the rebuilt environment, private TMPDIR/HOME,
// rlimits, watchdogs, output handling and sweep, and nothing else: no
// network, write, read or protected-path confinement.
//
// # The agent jail
//
// AgentJail confines a live agent's own process (Claude Code, Codex, an
// agent-command), whose tool calls go through Deponent's governed tools and
// the jail above. SelectAgentJail("auto") is bubblewrap on Linux and
// Seatbelt on macOS, probed once; an unavailable one is an error (the
// action then refuses to run the agent) — NewUnjailedAgent exists only for
// the action's explicit, recorded opt-out allow-unjailed-agent. Contract
// (Linux: tested live in agent_live_test.go, each claim against the
// unjailed runner as the control; macOS: the profile's text is unit-tested,
// its live tests run only on a macOS runner):
//
//   - The network is ALLOWED: the agent must reach its model API. So is
//     the relay socket (in a read-only directory), its only way to act.
//   - The workspace is read-only and the working directory; only the
//     private HOME and TMPDIR the caller made are writable (tested: a write
//     to the workspace fails and leaves nothing).
//   - Nothing else of the host is visible on Linux: the OS read-only as in
//     the tools' jail with the /etc secrets masked, the directory
//     /etc/resolv.conf points into, and AgentSpec.ReadOnly (the CLI, node,
//     the relay, its configuration). Not the real home, not RUNNER_TEMP —
//     the ledger and the receipts — not /run or another socket (tested: a
//     file beside the workspace is not visible). On macOS reads follow the
//     tools' profile: everything but the homes, other volumes and the
//     shared temporary directories, then the workspace, HOME, TMPDIR and
//     the read-only paths again.
//   - The environment is exactly AgentSpec.Env plus DEPONENT_JAIL_RUN
//     (tested: GITHUB_TOKEN and ACTIONS_* of the caller do not appear).
//   - Linux: a user namespace always, no nested one where bwrap can forbid
//     it, uid 65534 inside for a root runner (tested), no capabilities, a
//     new pid namespace and session, death with the caller.
//   - The timeout, or the caller's context (with an AgentKill cause naming
//     why), kills the agent and every process it started, setsid'd
//     daemons included, before Run returns (tested); Killed says why.
//   - Fail closed: a jail that cannot be built runs nothing (Killed
//     "no-jail"; tested with a bubblewrap that fails).
//
// Not covered by the agent jail: what the agent sends over the network
// (its model API sees the repository content the agent reads, and a
// prompt-injected agent can send it anywhere it can reach); what it does
// through the governed tools (that is the gate's and the tools' jail's);
// macOS's mach services beyond the listed ones are denied, which a future
// CLI may need (the probe and the macOS live tests would show it).
package jail

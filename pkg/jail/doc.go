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
// `/usr/bin/sandbox-exec -p PROFILE /bin/sh -c ...` with the profile of
// seatbeltProfile, after the seed's: (allow default), (deny network*),
// (deny file-write*) then allow writes to the sandbox, the private TMPDIR and
// HOME, the output file and the /dev nodes a shell needs; then, since later
// rules win, deny writes to the protected paths, deny hard links and clones
// (a new writable name for a protected or secret inode would bypass
// path-based rules), deny reads of the credential locations, deny
// information about processes outside the sandbox and the kern.procargs
// sysctls (another process's arguments and environment), and deny signals
// to processes outside the sandbox. Paths are symlink-resolved (/var →
// /private/var) and quoted; a path with a control character or invalid UTF-8
// is refused (tested: a sandbox path cannot inject rules). The same rlimits,
// RSS polling (through ps) and wall clock apply; macOS ignores RLIMIT_AS,
// hence the RSS watchdog. The live tests are the same files as on Linux and
// run on a macOS runner; they cannot run here.
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
//     reads are allowed by default except the credential locations; the
//     Keychain is also reachable through the securityd service, which the
//     profile does not block. Reading alone is inert without a network, but
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
//   - Concurrent runs on the same sandbox with an absent protected path:
//     the first run to finish removes the empty mount point and the other
//     run's guard over that name detaches with it. Steps of one sandbox are
//     meant to run one at a time.
//   - The Seatbelt profile's operations are verified only on the macOS runner
//     (and by the availability probe, which applies the same profile shape);
//     the Linux build only unit-tests its text.
//
// The "none" backend has the rebuilt environment, private TMPDIR/HOME,
// rlimits, watchdogs, output handling and sweep, and nothing else: no
// network, write, read or protected-path confinement.
package jail

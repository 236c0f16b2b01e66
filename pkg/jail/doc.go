// Package jail confines what an allowed command does once it runs.
//
// The gate decides whether a tool call may run; an allowed `python3` can
// still run any code. This package is the second line: one Backend
// interface, bubblewrap on Linux, Seatbelt on macOS, and a refusal ("no-jail")
// when neither can really confine. This comment is the package's contract;
// the live tests in this directory (live_test.go and friends) prove each
// claim marked "tested" against the real sandbox, each with a positive
// control that shows the same probe succeeding unjailed (or under a looser
// cap). On Linux they run as root and again as an unprivileged account.
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
//   - Writes confined to the sandbox and a private TMPDIR and HOME created
//     per run outside the sandbox and removed afterwards (tested: /tmp, the
//     real HOME, a read-only toolchain, through a symlink in the sandbox,
//     from a grandchild; on Linux also the jail's own root, /dev, /usr,
//     /etc). The run's leftovers are removed without following any symlink
//     the step planted (tested).
//   - The protected set: every entry named .git at any depth of the sandbox
//     (directories, gitdir files and links, found by a walk that follows no
//     symlink, plus the in-sandbox gitdir a .git file or link points to),
//     .github/workflows and .github/actions (always), and Spec.Protected.
//     Where the backend can, they are read-only in the jail, also when
//     absent (tested: hooks, core.fsmonitor and core.hooksPath written into
//     the top, a nested and a submodule's .git; mv/rm of .git; a hard link
//     to .git/config; a later `git init` planting hooks). A Spec.Protected
//     or built-in path that is, or lies below, a symlink is refused
//     (no-jail, tested); a discovered .git below one is left to the
//     tripwire. AND, whatever the backend ("none" included), the runner
//     snapshots the protected set before the step and compares it after
//     (the tripwire): type, mode, owner, size, links, mtime, ctime, inode,
//     a symlink's target and the sha256 of files up to 64 KiB (git's
//     object files by stat only), and the identity (device, inode) of every
//     directory between the sandbox and each protected path. Any difference
//     — a new nested .git or gitdir file, a parent renamed away and
//     recreated (.github, the parent of a protected extra, of a submodule,
//     of an absent protected path), a changed config — lists the path in
//     Result.Tampered and Reason; the caller must not let such a step pass
//     (tested: thirteen attacks blocked or reported in the jail, all
//     reported through "none", ordinary work beside them not reported). A
//     directory the step made unreadable counts as tampered (a .git could
//     hide in it). Cost: two walks of the sandbox's directories per step
//     (BenchmarkTripwire).
//   - Secrets stay out: the environment is rebuilt from an allowlist — PATH
//     (Spec.PATH), HOME (an empty private directory), TMPDIR, LANG, LC_*,
//     TERM, PYTHONDONTWRITEBYTECODE=1 (below), Spec.Env, and
//     DEPONENT_JAIL_RUN (a random per-run token, not a secret, used by the
//     process sweep). Everything else of the caller — GITHUB_TOKEN,
//     ACTIONS_*, cloud keys — is never passed (tested, with a plain exec as
//     the control that shows them leaking). The real home's credential
//     stores (.ssh, .aws, .config/gh, .netrc, .git-credentials, .npmrc,
//     .pypirc, cargo's credentials, docker, kube, cloud CLIs, agents' keys,
//     ... see credentialPaths) are unreadable, and configuration files that
//     may carry a token beside settings (cargo's config.toml, pip.conf, ...
//     see credentialConfigs) are hidden when they do (tested); other
//     processes' environments cannot be read nor the processes signalled
//     (tested). No descriptor of the caller reaches the step or the agent
//     but stdio and the jail's own: one the caller itself inherited without
//     close-on-exec (a CI runner's or harness's pipe, an open log or
//     secret) is marked close-on-exec before every start (tested: written
//     and read through by a plain exec as the control, not by bwrap,
//     "none", the agent jail or its opt-out). FindCredentials lists the
//     credentials a sandbox itself holds
//     (git configs, .git-credentials, .npmrc tokens, ...) and FindHardLinks
//     its multiply-linked files, for the caller to warn about.
//   - PYTHONDONTWRITEBYTECODE=1 by default (Spec.Env may set it otherwise):
//     Python validates a .pyc by the source's whole-second mtime and size, so
//     a same-size edit within the same second as an earlier run kept running
//     stale bytecode, and __pycache__ directories nobody wrote filled the
//     workspace (tested). Steps import from source instead.
//   - Bounded (MB means MiB; Limits, defaults in DefaultLimits):
//   - CPUSeconds (60) per process. On Linux the watchdog reads every
//     process's CPU time and kills at the limit itself, RLIMIT_CPU standing
//     2 s above as a backstop; elsewhere RLIMIT_CPU's SIGXCPU and, one
//     second later, SIGKILL. Reported "cpu>60s", also when the program
//     ignores or handles SIGXCPU (tested).
//   - FileSizeMB (256) per file, RLIMIT_FSIZE one 512-byte block above the
//     cap, so a file may be exactly FileSizeMB and one that grows past it
//     is the sign of a write the cap stopped. Reported "fsize>256MB" on
//     SIGXFSZ, and also when the program ignores SIGXFSZ (Python does): a
//     file seen open past the cap during the step, a new file past it after
//     the step, or output past it (tested).
//   - MemoryMB (2048) for the whole step: a cgroup's memory limit where one
//     can be made — the kernel then counts anonymous memory, memfd, SysV
//     and POSIX shared memory, tmpfs files and page cache, and kills at the
//     limit — else resident memory summed over the process tree and polled.
//     Result.MemoryGuard says which ("cgroup" | "rss-poll", and Reason why
//     not a cgroup). Reported "memory>2048MB" (tested: 240 MiB of memfd,
//     SysV and tmpfs memory under a 120 MiB cap, the 600 MiB control
//     completes).
//   - Tasks (1024) processes and threads at once: cgroup pids.max, else
//     RLIMIT_NPROC of the bwrap jail's own user namespace (unprivileged
//     runners), else counted every poll. Result.TaskGuard says which
//     ("cgroup" | "rlimit" | "poll"). Reported "pids>1024" (tested with a
//     cgroup and with polling alone).
//   - DiskMB (4096): the growth of the used space of the filesystems
//     holding the sandbox and the private TMPDIR/HOME, polled every 10 ms
//     and checked after the step, and of their used inodes, one new file
//     charged 4 KiB of the cap (DiskMB 4096 allows 1 Mi new files): empty
//     files take no block, and millions of them would exhaust the host
//     filesystem's inodes. Reported "disk>4096MB", also when the step
//     ended by itself over the cap, Reason saying which (tested with
//     fallocate, and with 50000 empty files under an 8 MiB cap, the same
//     step under 1 GiB completing as the control). The jail's
//     own tmpfs (/tmp, /dev/shm) are capped by size instead, FileSizeMB
//     each.
//   - WallClock (90 s) for the step, reported "wallclock>90s" (tested).
//     The rlimits are applied by a /bin/sh prelude inside the jail that
//     then execs `/bin/sh -c Script`, so they hold for every process the
//     script starts.
//   - Whenever a cap named the kill, ExitCode is -1 and Reason gives the
//     command's own exit status when it had one.
//   - No process outlives its step: children, grandchildren, setsid and
//     double-forked daemons are gone when Run returns, however it ends
//     (tested, with a plain run as the control that leaves them behind).
//     With a cgroup the step's processes are listed and killed through it;
//     without, through the process group, the tree and the run token.
//   - Output goes to a file, never a pipe, so a chatty child cannot stall
//     the watchdog; RLIMIT_FSIZE caps it too. The Result carries the exit
//     code, a bounded tail (Spec.TailBytes, default 64 KiB), the sha256 and
//     size of the full output (tested). Spec.OutputFile keeps the full
//     output after the run (outside the sandbox; copied, checked against
//     the sha256, synced and renamed into place; none when nothing ran),
//     and Spec.Live receives it while the step runs, read from the file
//     (never a pipe), at most Spec.LiveBytes (1 MiB by default) with a note
//     when cut (tested: the step waits for a file the test creates only
//     once output arrived live).
//   - Fail closed: no usable backend, a protected path the jail cannot
//     hold, a protected set too large or unreadable to snapshot, or a jail
//     that could not be set up for this run (the rlimit prelude never
//     reached the script) all give Killed "no-jail", ExitCode -1 and the
//     reason; the script did not run (tested). A step that cannot be
//     watched (its cgroup or the process table unreadable) is killed
//     ("watchdog").
//
// # Linux: bubblewrap
//
// The command line (see bwrapArgs) is, in order: --unshare-all and
// --unshare-user (user, ipc, pid, net, uts, cgroup namespaces; a user
// namespace always, also for a root runner), --disable-userns where bwrap
// supports it (no nested user namespaces), --uid 65534 --gid 65534 when the
// runner is root, --die-with-parent, --new-session (no TIOCSTI into the
// caller's terminal), --cap-drop ALL, --seccomp with the set-id filter
// (below; amd64 and arm64); read-only binds of /usr, /etc, /opt
// and the non-symlink ones of /bin, /sbin, /lib* (symlinks of merged-/usr
// systems are recreated), with the runner's directories that lie inside
// them hidden behind an empty tmpfs (below), read-only once the binds
// inside it are made; --proc /proc of the new pid namespace (other
// processes invisible), then remounted read-only as a whole; --dev /dev
// (null, zero, full, random, urandom, tty, pts), tmpfs /tmp and /dev/shm
// (mode 1777, size-capped at FileSizeMB where bwrap supports --size), then
// /dev read-only; empty read-only files/directories over secrets in /etc
// (shadow, gshadow, sudoers, ssl/private, ssh host keys,
// NetworkManager/wpa/netplan secrets, ...) and, for a root runner, over
// every file and directory of /etc that other users may not read (its
// jailed uid maps to host uid 0, their owner: a database's maintenance
// password, a VPN or WireGuard key, an admin kubeconfig were readable;
// tested in both jails with root unjailed as the control and a
// world-readable file beside them still readable; the walk is cached
// while no directory of /etc changes); read-only binds of the trees the
// PATH needs (below) plus Options.ExtraReadOnly, with the credential
// locations inside them masked; read-write binds of the private TMPDIR and
// HOME and of the sandbox; read-only re-binds of the protected set (an
// empty read-only directory over absent paths, whose mount points are
// removed after the run when still empty); the sanitized copies of git
// configs (below); and last, the jail's own root remounted read-only;
// --chdir to the sandbox. Nothing else of the host exists in the jail: no
// /run, /var, /home, /root, /sys, /srv, /mnt, no host socket anywhere.
//
// No host root: jailed code holds no capability, in a user namespace that
// owns nothing of the host, and a root runner's code runs as uid 65534
// there. The kernel still maps that uid to the runner's own (0) for
// ownership checks, so everything that checks the uid rather than a
// capability is read-only or absent in the jail: /proc as a whole
// (kernel.core_pattern and every /proc/sys knob, sysrq-trigger), /sys, /dev,
// the jail's root, the system trees (tested: every host /proc file opened
// for writing and four knobs written back unchanged, with root unjailed as
// the control; uid 65534 and no capabilities inside).
//
// No set-id files: the same mapping makes what a root runner's step
// creates in the sandbox root's on the host, and a file's owner may set
// its set-user-ID bit, so a step could leave a setuid-root program in the
// workspace for any local account (or a later step that drops
// privileges) to run as root; an unprivileged runner's step, set-id
// programs of its account. A seccomp filter (seccomp_linux.go) refuses
// with EPERM every set-user-ID or set-group-ID bit in a mode argument —
// chmod, fchmod, fchmodat, fchmodat2, and the mode of a file created by
// open, openat, creat, mknod or mknodat — and answers ENOSYS to openat2
// and io_uring_setup (arguments it cannot see; programs fall back to
// openat and plain reads and writes) and to every call of another ABI
// (x32, 32-bit compat). A write to a set-id file clears its bits (the
// kernel does, without CAP_FSETID). Tested: chmod of a file and of a
// directory, fchmod and a create with 04755, each setting the bit through
// a plain exec as the control, refused in the jail with ordinary modes
// working beside them; each architecture's filter is also run through a
// BPF interpreter on every covered call. The probe applies the same
// filter, so a kernel or bwrap that refuses it refuses the backend.
//
// What the PATH needs (exposure.go): each PATH directory outside the
// system trees exposes its prefix (the parent of a bin, sbin or shims
// directory: a toolchain's lib and share, pyenv's tree for its shims) or,
// when the prefix may not be exposed, the directory alone — never its
// siblings — plus, by the same rules, where its programs lead: the targets
// of its symlinks (pipx and poetry venvs) and the interpreters of its
// scripts. Never exposed: the home or anything holding it, a home container
// (~/.local, ~/.config, ~/.cache) as a whole, a credential location, the
// sandbox, the jail's private directories, and the runner's own
// directories — RUNNER_TEMP (the file-command files), its parent work
// directory (every job's checkout), RUNNER_WORKSPACE, GITHUB_WORKSPACE, the
// directories of GITHUB_ENV and its kind, and any directory holding a
// runner's .runner or .credentials (tested with a self-hosted runner's
// layout: the tool-cache and RUNNER_TEMP tools run, the runner's
// credentials, file commands and other checkouts stay unreadable; the pyenv
// shim works). The same directories inside a system tree the jail binds
// whole — a self-hosted runner installed in /opt/actions-runner, the
// ledger and receipts in its RUNNER_TEMP — and every runner installation
// found one or two levels below /opt and /usr/local are hidden behind an
// empty tmpfs; the sandbox, the private directories and the tools of the
// runner's tool cache are bound over it (tested for the tools' jail and the
// agent jail: credentials, file commands, the ledger and another job's
// checkout read by the unjailed control, unreadable jailed, the sandbox
// and the rest of /opt still there, a tool-cache program runs). Tools
// that locate their data through HOME need it named by policy: e.g.
// rustup's proxies want RUSTUP_HOME in Spec.Env and the directory in
// Options.ExtraReadOnly.
//
// Git configs: every config (and config.worktree) of every git directory in
// the sandbox — top, nested, submodule gitdirs, worktrees — is parsed; one
// holding credentials (credential.*, http.*.extraheader, secret-named keys,
// Authorization values, the user part of URLs in values and section names)
// reads through a sanitized copy bound read-only over it, its other lines
// kept byte for byte; one that cannot be parsed is hidden whole (tested:
// checkout's extraheader, a credential helper, a token in a nested remote
// URL; git still reads the rest). The files on the host are untouched.
// IsGitConfig and GitConfigAsJailed give callers that read sandbox files
// outside the jail the same view (the Cell's read_file uses them).
//
// Cgroups: with Options.Cgroup empty, a root runner gets a cgroup per step —
// v2 under <mount>/deponent-jail (memory and pids delegated), the launcher
// cloned straight into it (CLONE_INTO_CGROUP); on a hybrid host, v1 memory
// and pids cgroups under the caller's own, entered by the thread that
// starts the step (which then returns; tested); memory.max (+ swap 0,
// oom.group), pids.max. Options.Cgroup may name a cgroup v2 directory
// delegated to an unprivileged caller (on GitHub's hosted runners, prepared
// with sudo: the directory and its cgroup.procs and cgroup.subtree_control
// owned by the runner user, and the caller's own process moved into a leaf
// below it, since the kernel moves a process only within a subtree the
// mover may write). "off" never makes one (a named relaxation). The cgroup
// is removed after the step.
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
//   - Kernel and sandbox exploits. The only seccomp filter is the set-id
//     one of the bwrap jail (above): jailed code otherwise has the full
//     syscall surface that namespaces (Linux) or Seatbelt (macOS) leave.
//     On Linux architectures other than amd64 and arm64 there is no filter
//     at all, and neither "none" nor the agent jail has one (the agent's
//     workspace is read-only; its HOME and TMPDIR are the caller's to
//     discard). Side channels (timing, cache, /proc/loadavg-style
//     global counters) are out of scope.
//   - Reading what is deliberately exposed: world-readable files under /usr,
//     /etc, /opt and the toolchain roots, and on Linux root-only files under
//     /usr, /opt and the toolchain roots when the runner is root (under /etc
//     they are hidden, see above; a file already in /etc whose mode is
//     narrowed later shows until a directory the walk saw changes, and
//     /etc past 50000 entries keeps only the listed masks). On macOS
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
//     Credentials the sandbox holds are readable by the step: git configs
//     read sanitized in the bwrap jail only (not through "none" or
//     Seatbelt), files a git config includes are not sanitized, and a
//     token file placed in the workspace is the workspace's. FindCredentials
//     finds the common ones for the caller to warn about.
//   - Hard links placed in the sandbox before the run (a pnpm or other
//     content-addressed store, a `cp -l` checkout) let a step edit the
//     linked file in place, and so change every other name of it wherever
//     that lies: the jail confines names, not inodes. New links out of a
//     read-only bind fail (EXDEV); FindHardLinks lists regular files with
//     more than one link (outside .git, where local clones share objects by
//     design) for the caller to warn about.
//   - Polling windows: without a cgroup, memory is sampled every
//     Options.PollInterval (100 ms by default), so a fast allocator can
//     overshoot the cap by what it allocates in one interval, and memory in
//     no process's resident set escapes the count: memfd contents written
//     but not mapped, detached SysV segments (each file and segment bounded
//     by FileSizeMB and the IPC namespace only), tmpfs (capped by size,
//     FileSizeMB each). Tasks are then capped by RLIMIT_NPROC for an
//     unprivileged runner, which the kernel does not apply to host uid 0:
//     a root runner without a cgroup (a container with a read-only cgroup
//     tree) only counts tasks every poll, so a fork bomb can make many
//     between two polls. Result.MemoryGuard and TaskGuard say when this
//     applies.
//   - The disk guard measures the filesystems, not the step: other writers
//     on them count too (it can trip early, never late), and a burst
//     between two polls overshoots (fallocate adds gigabytes per second:
//     the live test's 64 MiB cap stopped a fill after a few hundred MiB).
//     A filesystem that reports no inode counts (btrfs reports zero) is
//     bounded by its bytes only.
//   - A file-size kill is named from evidence: a program that ignores
//     SIGXFSZ, rewrites an existing file in place past the cap and exits
//     between two polls is reported by its exit status only (the cap held).
//   - RLIMIT_CPU and the CPU watchdog are per process: a tree of processes
//     can use N seconds each; the wall clock bounds the total. A program
//     that exits by itself with status 152 or 153 is reported as a CPU or
//     file-size kill.
//   - The tripwire compares; it does not prevent. A step through "none" or
//     a backend that cannot hold a path may change it; the change is
//     reported, and the caller must fail the run. Its cost grows with the
//     number of directories in the sandbox (two walks per step). A .git
//     that is a symlink is watched by the tripwire only (its in-sandbox
//     target is bound read-only).
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
//   - On Linux with a cgroup (a root runner, or a delegated cgroup), "none"
//     steps are found and killed through the cgroup instead, escaped
//     daemons included.
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
// rlimits, watchdogs, cgroup (where one can be made), output handling,
// sweep and tripwire, and nothing else: no network, write, read or
// protected-path confinement.
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
//     Sharing the host's network namespace shares its abstract Unix
//     sockets too (they have no file a mount could hide); on Linux the
//     agent starts inside a Landlock domain scoped to abstract sockets and
//     signals of its own (ABI 6, Linux 6.12), so a host service listening
//     on one is refused (tested, with the unjailed opt-out reaching it as
//     the control and the agent's own abstract socket working). On an
//     older kernel the agent runs without the scope and Reason says so.
//   - The workspace is read-only and the working directory; only the
//     private HOME and TMPDIR the caller made are writable (tested: a write
//     to the workspace fails and leaves nothing).
//   - Nothing else of the host is visible on Linux: the OS read-only as in
//     the tools' jail with the /etc secrets masked, the directory
//     /etc/resolv.conf points into, and AgentSpec.ReadOnly (the CLI, node,
//     the relay, its configuration). Not the real home, not RUNNER_TEMP —
//     the ledger and the receipts — not /run or another socket (tested: a
//     file beside the workspace is not visible; a runner installed under
//     /opt, its RUNNER_TEMP there included, is hidden as in the tools'
//     jail). On macOS reads follow the
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
// Not covered by the agent jail: on Linux before 6.12 (Landlock ABI < 6,
// e.g. Ubuntu 24.04's 6.8), the host's abstract Unix sockets (named in
// AgentResult.Reason); the host's loopback services and link-local
// addresses (a database on 127.0.0.1, a Docker API on TCP, a cloud's
// instance-metadata endpoint with its role credentials on a self-hosted
// cloud runner): the agent shares the host's network namespace and no
// filter stands between; what the agent sends over the network
// (its model API sees the repository content the agent reads, and a
// prompt-injected agent can send it anywhere it can reach); what it does
// through the governed tools (that is the gate's and the tools' jail's);
// macOS's mach services beyond the listed ones are denied, which a future
// CLI may need (the probe and the macOS live tests would show it).
package jail

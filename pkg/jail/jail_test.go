package jail

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDefaultLimitsAreTheSeeds(t *testing.T) {
	assert.Equal(t, Limits{CPUSeconds: 60, FileSizeMB: 256, MemoryMB: 2048, WallClock: 90 * time.Second,
		Tasks: 1024, DiskMB: 4096}, DefaultLimits())
	l, err := Limits{MemoryMB: 200}.withDefaults()
	require.NoError(t, err)
	assert.Equal(t, Limits{CPUSeconds: 60, FileSizeMB: 256, MemoryMB: 200, WallClock: 90 * time.Second,
		Tasks: 1024, DiskMB: 4096}, l)
	for _, bad := range []Limits{{Tasks: -1}, {DiskMB: -1}} {
		_, err = bad.withDefaults()
		assert.Error(t, err)
	}
	_, err = Limits{CPUSeconds: -1}.withDefaults()
	assert.Error(t, err)
}

func TestNoJailRunsNothing(t *testing.T) {
	r := NoJail("bwrap missing")
	assert.Equal(t, KilledNoJail, r.Killed)
	assert.Equal(t, -1, r.ExitCode)
	assert.Equal(t, "bwrap missing", r.Reason)
	assert.Empty(t, r.Output)
	assert.Zero(t, r.OutputBytes)
	assert.Equal(t, emptySHA256, r.OutputSHA256)
	assert.False(t, r.Unjailed)
	assert.Empty(t, r.Backend, "no backend ran")
	assert.Equal(t, NameBwrap, refuse(NameBwrap, "x").Backend)
}

func TestSelectUnknownNameListsValidOnes(t *testing.T) {
	_, err := Select("docker", Options{})
	require.Error(t, err)
	assert.True(t, errors.Is(err, ErrUnknownBackend))
	for _, n := range []string{"auto", "bwrap", "seatbelt", "none"} {
		assert.Contains(t, err.Error(), n)
	}
}

func TestSelectNoneNeedsOptIn(t *testing.T) {
	_, err := Select(NameNone, Options{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "UnsafeAllowUnjailed")
	b, err := Select(NameNone, Options{UnsafeAllowUnjailed: true})
	require.NoError(t, err)
	assert.Equal(t, NameNone, b.Name())
	assert.NoError(t, b.Available())
}

func TestSelectNamedUnavailableIsAnErrorNotASwitch(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-bwrap")
	b, err := Select(NameBwrap, Options{BwrapPath: missing, UnsafeAllowUnjailed: true})
	assert.Nil(t, b, "never a silent switch to another backend, not even with UnsafeAllowUnjailed")
	require.Error(t, err)

	if runtime.GOOS != "darwin" {
		_, err = Select(NameSeatbelt, Options{UnsafeAllowUnjailed: true})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "macOS")
	}
}

func TestSelectAutoExplainsWhyNothingIsUsable(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("auto picks bwrap on Linux only")
	}
	t.Setenv("PATH", t.TempDir()) // no bwrap to find
	_, err := Select(NameAuto, Options{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "apt-get install -y bubblewrap")
}

// fakeBwrap writes a stand-in bwrap that fails like a restricted host.
func fakeBwrap(t *testing.T, stderr string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "bwrap")
	script := "#!/bin/sh\nif [ \"$1\" = --help ]; then echo 'usage: bwrap --disable-userns --size'; exit 0; fi\n" +
		"echo '" + stderr + "' >&2\nexit 1\n"
	require.NoError(t, os.WriteFile(p, []byte(script), 0o755))
	return p
}

func TestBwrapProbeFailureFailsClosed(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("bwrap probing is Linux-only")
	}
	bin := fakeBwrap(t, "bwrap: setting up uid map: Permission denied")
	b := NewBwrap(Options{BwrapPath: bin})
	err := b.Available()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "AppArmor")
	assert.Contains(t, err.Error(), "sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0")

	_, err = Select(NameAuto, Options{BwrapPath: bin})
	require.Error(t, err, "auto must not hand out a backend whose probe failed")

	sb := resolvedTempDir(t)
	res, err := b.Run(context.Background(), Spec{Sandbox: sb, Script: "echo ran > ran.txt", PATH: "/usr/bin:/bin"})
	require.NoError(t, err)
	assert.Equal(t, KilledNoJail, res.Killed)
	assert.Equal(t, -1, res.ExitCode)
	assert.Contains(t, res.Reason, "apparmor_restrict_unprivileged_userns")
	assert.False(t, exists(filepath.Join(sb, "ran.txt")))
}

func TestExplainBwrapFailure(t *testing.T) {
	cases := map[string]string{
		"bwrap: setting up uid map: Permission denied": "kernel.apparmor_restrict_unprivileged_userns=0",
		"bwrap: No permissions to create new namespace, likely because the kernel does not allow non-privileged user namespaces": "kernel.unprivileged_userns_clone=1",
		"bwrap: No permissions to creating new namespace":                                                                        "kernel.unprivileged_userns_clone=1",
		"bwrap: Creating new namespace failed: No space left on device":                                                          "user.max_user_namespaces",
		"bwrap: Creating new namespace failed: Operation not permitted":                                                          "apparmor_restrict_unprivileged_userns=0",
		"bwrap: loopback: Failed RTM_NEWADDR: Operation not permitted":                                                           "seccomp=unconfined",
		"something new": "cannot build the jail",
	}
	for stderr, want := range cases {
		err := explainBwrapFailure("/usr/bin/bwrap", stderr, errors.New("exit status 1"))
		assert.Contains(t, err.Error(), want, "for %q", stderr)
		assert.Contains(t, err.Error(), stderr, "the original complaint is kept")
		assert.Contains(t, err.Error(), "nothing will run jailed")
	}
}

func TestBuildEnvIsAnAllowlist(t *testing.T) {
	host := []string{
		"GITHUB_TOKEN=ghs_x", "ACTIONS_RUNTIME_TOKEN=y", "AWS_SECRET_ACCESS_KEY=z", "SSH_AUTH_SOCK=/run/x",
		"LD_PRELOAD=/evil.so", "HOME=/root", "PATH=/evil", "TMPDIR=/tmp", "PYENV_ROOT=/root/.pyenv",
		"LANG=C.UTF-8", "LC_ALL=C", "LC_CTYPE=en_US.UTF-8", "TERM=xterm", "noequals",
	}
	env := buildEnv(host, "/usr/bin:/bin", "/r/home", "/r/tmp", "tok", map[string]string{"PYTHONHASHSEED": "0"})
	assert.Equal(t, []string{
		"DEPONENT_JAIL_RUN=tok", "HOME=/r/home", "LANG=C.UTF-8", "LC_ALL=C", "LC_CTYPE=en_US.UTF-8",
		"PATH=/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE=1", "PYTHONHASHSEED=0", "TERM=xterm", "TMPDIR=/r/tmp",
	}, env)
}

func TestBuildEnvDefaultsYieldToPolicy(t *testing.T) {
	env := buildEnv(nil, "/usr/bin", "/h", "/t", "", map[string]string{"PYTHONDONTWRITEBYTECODE": ""})
	assert.Contains(t, env, "PYTHONDONTWRITEBYTECODE=")
	assert.NotContains(t, env, "PYTHONDONTWRITEBYTECODE=1")
}

func TestPolicyEnvCannotOverrideReserved(t *testing.T) {
	for _, k := range []string{"PATH", "HOME", "TMPDIR", runTokenVar} {
		assert.Error(t, checkEnv(map[string]string{k: "x"}), k)
	}
	assert.Error(t, checkEnv(map[string]string{"A=B": "x"}))
	assert.Error(t, checkEnv(map[string]string{"": "x"}))
	assert.Error(t, checkEnv(map[string]string{"A": "x\x00y"}))
	assert.NoError(t, checkEnv(map[string]string{"LANG": "C", "CI": "true"}))
}

func TestPrepareRejectsCallerMistakes(t *testing.T) {
	sb := resolvedTempDir(t)
	home := resolvedTempDir(t)
	link := filepath.Join(resolvedTempDir(t), "link")
	require.NoError(t, os.Symlink(sb, link))
	file := filepath.Join(sb, "file")
	writeFile(t, file, "", 0o644)
	opts := Options{RealHome: home}
	ok := Spec{Sandbox: sb, Script: "true", PATH: "/usr/bin:/bin"}
	_, err := prepare(ok, opts)
	require.NoError(t, err)

	bad := map[string]func(*Spec){
		"relative sandbox":        func(s *Spec) { s.Sandbox = "work" },
		"unclean sandbox":         func(s *Spec) { s.Sandbox = sb + "/." },
		"symlinked sandbox":       func(s *Spec) { s.Sandbox = link },
		"sandbox is a file":       func(s *Spec) { s.Sandbox = file },
		"sandbox is /":            func(s *Spec) { s.Sandbox = "/" },
		"sandbox contains home":   func(s *Spec) { s.Sandbox = filepath.Dir(home) },
		"empty script":            func(s *Spec) { s.Script = "  " },
		"NUL in script":           func(s *Spec) { s.Script = "true\x00" },
		"empty PATH":              func(s *Spec) { s.PATH = "" },
		"relative PATH entry":     func(s *Spec) { s.PATH = "bin:/usr/bin" },
		"empty PATH entry":        func(s *Spec) { s.PATH = "/usr/bin::/bin" },
		"PATH in sandbox":         func(s *Spec) { s.PATH = sb + "/bin:/usr/bin" },
		"env sets HOME":           func(s *Spec) { s.Env = map[string]string{"HOME": "/root"} },
		"protected outside":       func(s *Spec) { s.Protected = []string{"/etc"} },
		"protected is sandbox":    func(s *Spec) { s.Protected = []string{sb} },
		"protected relative":      func(s *Spec) { s.Protected = []string{".git"} },
		"negative tail":           func(s *Spec) { s.TailBytes = -1 },
		"negative memory":         func(s *Spec) { s.Limits.MemoryMB = -5 },
		"protected under a file":  func(s *Spec) { s.Protected = []string{file + "/x"} },
		"protected via a symlink": func(s *Spec) { s.Protected = []string{filepath.Join(sb, "lnk", "x")} },
	}
	require.NoError(t, os.Symlink("/etc", filepath.Join(sb, "lnk")))
	for name, mutate := range bad {
		s := ok
		mutate(&s)
		_, err := prepare(s, opts)
		assert.Error(t, err, name)
	}
}

func TestProtectedSymlinkIsARefusal(t *testing.T) {
	sb := resolvedTempDir(t)
	require.NoError(t, os.Symlink(t.TempDir(), filepath.Join(sb, ".git")))
	_, err := prepare(Spec{Sandbox: sb, Script: "true", PATH: "/usr/bin",
		Protected: []string{filepath.Join(sb, ".git")}}, Options{RealHome: resolvedTempDir(t)})
	var r *refusal
	require.True(t, errors.As(err, &r), "a symlinked protected path is a fail-closed refusal, got %v", err)
	res, done, err := settle(nil, err, NameBwrap)
	assert.True(t, done)
	assert.NoError(t, err)
	assert.Equal(t, KilledNoJail, res.Killed)
	assert.Equal(t, NameBwrap, res.Backend)
}

func TestProtectedMinimalSetAndCreatedDirs(t *testing.T) {
	sb := resolvedTempDir(t)
	mustMkdir(t, filepath.Join(sb, ".git", "hooks"))
	prs, _, err := checkProtected([]string{
		filepath.Join(sb, ".git", "hooks"), // covered by .git
		filepath.Join(sb, ".git"),
		filepath.Join(sb, "a", "b", ".deponent"), // absent, with absent parents
	}, nil, sb)
	require.NoError(t, err)
	require.Len(t, prs, 2)
	assert.Equal(t, filepath.Join(sb, ".git"), prs[0].path)
	assert.True(t, prs[0].exists)
	assert.Empty(t, prs[0].created)
	assert.Equal(t, filepath.Join(sb, "a", "b", ".deponent"), prs[1].path)
	assert.False(t, prs[1].exists)
	assert.Equal(t, []string{filepath.Join(sb, "a"), filepath.Join(sb, "a", "b"), filepath.Join(sb, "a", "b", ".deponent")}, prs[1].created)

	// Cleanup removes what the mount point creation left, deepest first,
	// and keeps directories the step filled.
	mustMkdir(t, filepath.Join(sb, "a", "b", ".deponent"))
	writeFile(t, filepath.Join(sb, "a", "keep.txt"), "x", 0o644)
	removeCreatedMountPoints(sb, prs)
	assert.False(t, exists(filepath.Join(sb, "a", "b")))
	assert.True(t, exists(filepath.Join(sb, "a", "keep.txt")))
}

func TestWithin(t *testing.T) {
	assert.True(t, within("/a/b", "/a"))
	assert.True(t, within("/a", "/a"))
	assert.False(t, within("/ab", "/a"))
	assert.True(t, within("/x", "/"))
}

func TestLimitedArgv(t *testing.T) {
	argv := limitedArgv(Limits{CPUSeconds: 7, FileSizeMB: 3}, "echo hi")
	require.Len(t, argv, 5)
	assert.Equal(t, []string{"/bin/sh", "-c"}, argv[:2])
	soft := 7
	if cpuPolled {
		soft += cpuBackstop // the watchdog enforces 7 s itself; the rlimit is the backstop
	}
	assert.Contains(t, argv[2], fmt.Sprintf("ulimit -S -t %d && ulimit -H -t %d", soft, soft+1))
	assert.Contains(t, argv[2], "ulimit -f 6145") // 3 MiB in 512-byte blocks, plus one
	assert.NotContains(t, argv[2], "ulimit -u")
	withTasks := preludeArgv(Limits{CPUSeconds: 7, FileSizeMB: 3}, "echo hi", 50)
	assert.Contains(t, withTasks[2], "{ ulimit -u 50 2>/dev/null || ulimit -p 50; }")
	assert.True(t, strings.HasSuffix(argv[2], `exec /bin/sh -c "$1"`))
	assert.Equal(t, "echo hi", argv[4], "the script is passed as data, never spliced into the prelude")
}

func TestReadOutputTailAndHash(t *testing.T) {
	p := filepath.Join(t.TempDir(), "out")
	writeFile(t, p, "hello world", 0o600)
	tail, sum, n, err := readOutput(p, 5)
	require.NoError(t, err)
	assert.Equal(t, "world", string(tail))
	assert.EqualValues(t, 11, n)
	assert.Equal(t, "b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9", sum)
	tail, _, _, err = readOutput(p, 100)
	require.NoError(t, err)
	assert.Equal(t, "hello world", string(tail))
	writeFile(t, p, "", 0o600)
	_, sum, _, err = readOutput(p, 100)
	require.NoError(t, err)
	assert.Equal(t, emptySHA256, sum)
}

func TestRunDirRemovedEvenWhenLockedDown(t *testing.T) {
	rd, err := newRunDir(t.TempDir())
	require.NoError(t, err)
	locked := filepath.Join(rd.tmp, "locked")
	writeFile(t, filepath.Join(locked, "f"), "x", 0o600)
	require.NoError(t, os.Chmod(locked, 0))
	rd.remove()
	assert.False(t, exists(rd.root))
}

package jail

import (
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// argIndex finds the position of a flag followed by its operands.
func argIndex(args []string, seq ...string) int {
	for i := 0; i+len(seq) <= len(args); i++ {
		match := true
		for j, s := range seq {
			if args[i+j] != s {
				match = false
				break
			}
		}
		if match {
			return i
		}
	}
	return -1
}

type argsFixture struct {
	sb, home string
	p        *prepared
	rd       *runDir
	ex       exposure
	args     []string
}

func buildTestArgs(t *testing.T, f bwrapFeatures, mutate func(*Spec)) argsFixture {
	t.Helper()
	var af argsFixture
	af.sb, af.home = resolvedTempDir(t), resolvedTempDir(t)
	mustMkdir(t, filepath.Join(af.sb, ".git", "hooks"))
	writeFile(t, filepath.Join(af.home, ".pyenv", "shims", "python3"), "#!/bin/sh\n", 0o755)
	writeFile(t, filepath.Join(af.home, ".cargo", "bin", "cargo"), "#!/bin/sh\n", 0o755)
	writeFile(t, filepath.Join(af.home, ".cargo", "credentials.toml"), "token", 0o600)
	writeFile(t, filepath.Join(af.home, ".ssh", "id_rsa"), "key", 0o600)
	spec := Spec{
		Sandbox: af.sb, Script: "python3 -V",
		PATH:      filepath.Join(af.home, ".pyenv", "shims") + ":" + filepath.Join(af.home, ".cargo", "bin") + ":/usr/bin:/bin",
		Protected: []string{filepath.Join(af.sb, ".git"), filepath.Join(af.sb, ".deponent")},
	}
	if mutate != nil {
		mutate(&spec)
	}
	var err error
	af.p, err = prepare(spec, Options{RealHome: af.home})
	require.NoError(t, err)
	af.rd, err = newRunDir(t.TempDir())
	require.NoError(t, err)
	t.Cleanup(af.rd.remove)
	af.ex, err = computeExposure(af.p.pathDirs, af.home, af.sb, nil)
	require.NoError(t, err)
	overlays, err := writeGitConfigOverlays(af.p.gitConfigs, af.rd)
	require.NoError(t, err)
	af.args = bwrapArgs(af.p, af.rd, f, af.ex, overlays)
	return af
}

func TestBwrapArgsIsolation(t *testing.T) {
	af := buildTestArgs(t, bwrapFeatures{disableUserns: true, size: true}, nil)
	a := af.args
	for _, seq := range [][]string{
		{"--unshare-all", "--unshare-user"}, {"--disable-userns"}, {"--die-with-parent"},
		{"--new-session"}, {"--cap-drop", "ALL"}, {"--proc", "/proc", "--remount-ro", "/proc"}, {"--dev", "/dev"},
		{"--remount-ro", "/dev"}, {"--remount-ro", "/"},
		{"--ro-bind", "/usr", "/usr"}, {"--ro-bind", "/etc", "/etc"}, {"--chdir", af.sb},
	} {
		assert.NotEqual(t, -1, argIndex(a, seq...), "missing %v", seq)
	}
	assert.Equal(t, -1, argIndex(a, "--share-net"))
	// No host socket directories, no /sys, no /var, never the real home.
	for i, s := range a {
		if s == "--bind" || s == "--ro-bind" || s == "--bind-try" || s == "--ro-bind-try" {
			src := a[i+1]
			for _, bad := range []string{"/run", "/var", "/sys", "/home", "/root", "/proc"} {
				assert.False(t, within(src, bad) && !within(src, os.TempDir()), "exposes %s", src)
			}
			assert.NotEqual(t, af.home, src, "the real home is bound")
		}
	}
	// The script is the last argument, after the rlimit prelude.
	assert.Equal(t, "python3 -V", a[len(a)-1])
	assert.Equal(t, "/bin/sh", a[len(a)-5])
}

func TestBwrapArgsOrder(t *testing.T) {
	af := buildTestArgs(t, bwrapFeatures{size: true}, nil)
	a := af.args
	tmpfs := argIndex(a, "--tmpfs", "/tmp")
	sandbox := argIndex(a, "--bind", af.sb, af.sb)
	tmpdir := argIndex(a, "--bind", af.rd.tmp, af.rd.tmp)
	home := argIndex(a, "--bind", af.rd.home, af.rd.home)
	git := argIndex(a, "--ro-bind", filepath.Join(af.sb, ".git"), filepath.Join(af.sb, ".git"))
	absent := argIndex(a, "--ro-bind", af.rd.emptyDir, filepath.Join(af.sb, ".deponent"))
	pyenv := argIndex(a, "--ro-bind", filepath.Join(af.home, ".pyenv"), filepath.Join(af.home, ".pyenv"))
	for name, i := range map[string]int{"tmpfs": tmpfs, "sandbox": sandbox, "tmpdir": tmpdir, "home": home, "git": git, "absent": absent, "pyenv": pyenv} {
		require.NotEqual(t, -1, i, "%s missing from %q", name, a)
	}
	assert.Less(t, tmpfs, sandbox, "tmpfs /tmp must not cover a sandbox below /tmp")
	assert.Less(t, tmpfs, tmpdir)
	assert.Less(t, tmpfs, pyenv)
	assert.Less(t, pyenv, sandbox)
	assert.Less(t, sandbox, git, "protected paths are re-bound read-only after the sandbox")
	assert.Less(t, sandbox, absent)
	// tmpfs size is capped (tmpfs pages escape the RSS watchdog).
	assert.NotEqual(t, -1, argIndex(a, "--size", "268435456", "--tmpfs", "/tmp"))
	assert.NotEqual(t, -1, argIndex(a, "--perms", "1777"))
}

// TestBwrapArgsUnprivilegedInside: a root runner's jailed code runs as
// the unprivileged jail uid in its own user namespace; another runner keeps
// its own uid (bwrap maps it).
func TestBwrapArgsUnprivilegedInside(t *testing.T) {
	root := baseArgs(bwrapFeatures{}, 0)
	assert.NotEqual(t, -1, argIndex(root, "--uid", "65534", "--gid", "65534"))
	assert.NotEqual(t, -1, argIndex(root, "--unshare-user"), "a user namespace even without --disable-userns")
	user := baseArgs(bwrapFeatures{}, 1001)
	assert.Equal(t, -1, argIndex(user, "--uid"))
	assert.NotEqual(t, -1, argIndex(user, "--unshare-user"))
}

// TestBwrapArgsReadOnlyRootIsLast: the jail's root becomes read-only after
// every mount point exists, and /dev after /dev/shm is mounted below it.
func TestBwrapArgsReadOnlyRootIsLast(t *testing.T) {
	a := buildTestArgs(t, bwrapFeatures{size: true}, nil).args
	ro := argIndex(a, "--remount-ro", "/")
	require.NotEqual(t, -1, ro)
	for i := ro + 2; i < len(a); i++ {
		switch a[i] {
		case "--bind", "--ro-bind", "--tmpfs", "--dir", "--symlink", "--proc", "--dev":
			t.Fatalf("%s after --remount-ro /", a[i])
		}
	}
	assert.Less(t, argIndex(a, "--tmpfs", "/dev/shm"), argIndex(a, "--remount-ro", "/dev"))
}

func TestBwrapArgsWithoutNewerFeatures(t *testing.T) {
	af := buildTestArgs(t, bwrapFeatures{}, nil)
	assert.Equal(t, -1, argIndex(af.args, "--disable-userns"))
	assert.Equal(t, -1, argIndex(af.args, "--size"))
	assert.NotEqual(t, -1, argIndex(af.args, "--unshare-all"))
}

func TestBwrapArgsToolchainsAndCredentialMasks(t *testing.T) {
	af := buildTestArgs(t, bwrapFeatures{}, nil)
	assert.Equal(t, []string{filepath.Join(af.home, ".cargo"), filepath.Join(af.home, ".pyenv")}, af.ex.roots)
	cred := filepath.Join(af.home, ".cargo", "credentials.toml")
	assert.Equal(t, []string{cred}, af.ex.masks, "only credentials inside exposed roots need masks; ~/.ssh is never bound")
	assert.NotEqual(t, -1, argIndex(af.args, "--ro-bind", af.rd.emptyFile, cred))
	for _, s := range af.args {
		assert.False(t, within(s, filepath.Join(af.home, ".ssh")), "~/.ssh appears in %q", s)
	}
}

func TestBwrapArgsEtcMasks(t *testing.T) {
	af := buildTestArgs(t, bwrapFeatures{}, nil)
	if fi, err := os.Lstat("/etc/shadow"); err == nil && fi.Mode().IsRegular() {
		assert.NotEqual(t, -1, argIndex(af.args, "--ro-bind", af.rd.emptyFile, "/etc/shadow"))
		assert.Less(t, argIndex(af.args, "--ro-bind", "/etc", "/etc"), argIndex(af.args, "--ro-bind", af.rd.emptyFile, "/etc/shadow"))
	} else {
		t.Skip("no /etc/shadow on this host")
	}
}

// TestExposureTreeFor: a PATH directory exposes its prefix (bin, sbin,
// shims) or itself — never the first directory below the home, never a
// tree holding the home, a credential location, or the runner's own
// directories.
func TestExposureTreeFor(t *testing.T) {
	h := "/home/runner"
	g := exposureGuard{home: h, sensitive: []string{h + "/actions-runner/_work", h + "/actions-runner/_work/_temp", h + "/actions-runner"}}
	cases := map[string]string{
		h + "/.pyenv/shims":                          h + "/.pyenv",
		h + "/.pyenv/plugins/pyenv-virtualenv/shims": h + "/.pyenv/plugins/pyenv-virtualenv",
		h + "/go/bin":                                h + "/go",
		h + "/.cargo/bin":                            h + "/.cargo",
		h + "/.nvm/versions/node/v20.1.0/bin":        h + "/.nvm/versions/node/v20.1.0",
		h + "/.local/bin":                            h + "/.local/bin",
		h + "/.config/composer/vendor/bin":           h + "/.config/composer/vendor",
		h + "/.dotnet/tools":                         h + "/.dotnet/tools",
		h + "/bin":                                   h + "/bin", // its prefix is the home
		h + "/.local":                                "",
		h:                                            "",
		h + "/.ssh/bin":                              "",
		h + "/.docker/cli-plugins":                   "",
		// A self-hosted runner: the tool cache is fine, the runner's own
		// directories never.
		h + "/actions-runner/_work/_tool/Python/3.12.1/x64/bin": h + "/actions-runner/_work/_tool/Python/3.12.1/x64",
		h + "/actions-runner/_work/_temp/tool/bin":              h + "/actions-runner/_work/_temp/tool",
		h + "/actions-runner/bin":                               h + "/actions-runner/bin",
		h + "/actions-runner/_work/_temp":                       "",
		h + "/actions-runner/_work":                             "",
		"/home/linuxbrew/.linuxbrew/bin":                        "/home/linuxbrew/.linuxbrew",
		"/opt/hostedtoolcache/Python/3.12.1/x64/bin":            "/opt/hostedtoolcache/Python/3.12.1/x64",
		"/snap/bin":                      "/snap",
		"/home/bin":                      "/home/bin", // its prefix /home contains the home
		"/run/current-system/sw/bin":     "",
		"/nix/store/abc-python-3.12/bin": "/nix/store/abc-python-3.12",
	}
	for dir, want := range cases {
		got, why := g.treeFor(dir)
		assert.Equal(t, want, got, "%s (%s)", dir, why)
		if want == "" {
			assert.NotEmpty(t, why, dir)
		}
	}
}

// TestExposureGuardFromRunnerEnvironment: the runner's directories come
// from its environment and its installation is found by its credential
// files.
func TestExposureGuardFromRunnerEnvironment(t *testing.T) {
	home := resolvedTempDir(t)
	runner := filepath.Join(home, "actions-runner")
	writeFile(t, filepath.Join(runner, ".credentials"), "{}", 0o600)
	writeFile(t, filepath.Join(runner, "bin", "Runner.Listener"), "", 0o755)
	temp := filepath.Join(runner, "_work", "_temp")
	writeFile(t, filepath.Join(temp, "_runner_file_commands", "set_env_x"), "", 0o600)
	tool := filepath.Join(runner, "_work", "_tool", "go", "1.22", "x64", "bin")
	writeFile(t, filepath.Join(tool, "go"), "", 0o755)
	writeFile(t, filepath.Join(temp, "mytool", "bin", "t"), "", 0o755)
	env := map[string]string{"RUNNER_TEMP": temp, "GITHUB_ENV": filepath.Join(temp, "_runner_file_commands", "set_env_x")}
	g := newExposureGuard(home, resolvedTempDir(t), "", func(k string) string { return env[k] })
	ex, err := computeExposureWith([]string{tool, filepath.Join(temp, "mytool", "bin"), filepath.Join(runner, "bin"), temp}, nil, g)
	require.NoError(t, err)
	assert.Equal(t, sortedCopy([]string{filepath.Join(runner, "_work", "_tool", "go", "1.22", "x64"), filepath.Join(runner, "bin"),
		filepath.Join(temp, "mytool")}), ex.roots)
	require.Len(t, ex.notes, 1)
	assert.Contains(t, ex.notes[0], temp)
	for _, r := range ex.roots {
		assert.False(t, within(filepath.Join(runner, ".credentials"), r), "%s exposes the runner's credentials", r)
	}
}

// TestExposureFollowsWhatProgramsNeed: a symlink into a venv (pipx) and a
// script's interpreter are exposed by the same rules; their siblings not.
func TestExposureFollowsWhatProgramsNeed(t *testing.T) {
	home := resolvedTempDir(t)
	venv := filepath.Join(home, ".local", "share", "pipx", "venvs", "black")
	writeFile(t, filepath.Join(venv, "bin", "black"), "#!/bin/sh\n", 0o755)
	writeFile(t, filepath.Join(home, ".local", "share", "other", "secret"), "x", 0o600)
	bin := filepath.Join(home, ".local", "bin")
	mustMkdir(t, bin)
	require.NoError(t, os.Symlink(filepath.Join(venv, "bin", "black"), filepath.Join(bin, "black")))
	interp := filepath.Join(home, ".pyenv", "versions", "3.12", "bin")
	writeFile(t, filepath.Join(interp, "python3.12"), "", 0o755)
	writeFile(t, filepath.Join(bin, "tool"), "#!"+filepath.Join(interp, "python3.12")+" -E\nprint(1)\n", 0o755)
	ex, err := computeExposure([]string{bin}, home, resolvedTempDir(t), nil)
	require.NoError(t, err)
	assert.Equal(t, []string{bin, venv, filepath.Join(home, ".pyenv", "versions", "3.12")}, sortedCopy(ex.roots))
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}

func TestComputeExposureExtraReadOnly(t *testing.T) {
	sb, home := resolvedTempDir(t), resolvedTempDir(t)
	extra := resolvedTempDir(t)
	ex, err := computeExposure(nil, home, sb, []string{extra})
	require.NoError(t, err)
	assert.Equal(t, []string{extra}, ex.roots)
	for _, bad := range []string{"relative", "/", filepath.Dir(home), home, sb, filepath.Join(sb), "/run"} {
		if bad == "/run" {
			if _, err := os.Stat("/run"); err != nil {
				continue
			}
		}
		if bad == sb {
			mustMkdir(t, filepath.Join(sb, "inner"))
			bad = filepath.Join(sb, "inner")
		}
		_, err := computeExposure(nil, home, sb, []string{bad})
		assert.Error(t, err, bad)
	}
}

func TestMissingPATHEntryIsSkipped(t *testing.T) {
	sb, home := resolvedTempDir(t), resolvedTempDir(t)
	ex, err := computeExposure([]string{filepath.Join(home, "go", "bin"), "/usr/bin"}, home, sb, nil)
	require.NoError(t, err)
	assert.Empty(t, ex.roots)
}

//go:build linux || darwin

package jail

// Live tests of the protected set (issue 11, items 2-4): every .git at any
// depth, .github/workflows, .github/actions and the caller's protected
// paths are kept read-only where the backend can, and compared before and
// after every step (the tripwire) whatever the backend.

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gitSandbox fills the fixture's sandbox with a repository the way CI
// leaves one: a top .git with a submodule's gitdir under .git/modules, the
// submodule's .git file, a nested repository, a workflow and a protected
// extra below an unprotected directory.
func gitSandbox(t *testing.T, f *fixture) {
	t.Helper()
	sb := f.sandbox
	writeFile(t, filepath.Join(sb, ".git", "config"), "[core]\n\tbare = false\n", 0o644)
	writeFile(t, filepath.Join(sb, ".git", "HEAD"), "ref: refs/heads/main\n", 0o644)
	mustMkdir(t, filepath.Join(sb, ".git", "hooks"))
	mustMkdir(t, filepath.Join(sb, ".git", "objects", "pack"))
	writeFile(t, filepath.Join(sb, ".git", "modules", "sub", "config"), "[core]\n\tworktree = ../../../sub\n", 0o644)
	writeFile(t, filepath.Join(sb, ".git", "modules", "sub", "HEAD"), "ref: refs/heads/main\n", 0o644)
	mustMkdir(t, filepath.Join(sb, ".git", "modules", "sub", "hooks"))
	writeFile(t, filepath.Join(sb, "sub", ".git"), "gitdir: ../.git/modules/sub\n", 0o644)
	writeFile(t, filepath.Join(sb, "sub", "lib.py"), "x = 1\n", 0o644)
	writeFile(t, filepath.Join(sb, "pkg", "inner", ".git", "config"), "[core]\n\tbare = false\n", 0o644)
	writeFile(t, filepath.Join(sb, "pkg", "inner", ".git", "HEAD"), "ref: refs/heads/main\n", 0o644)
	writeFile(t, filepath.Join(sb, ".github", "workflows", "ci.yml"), "on: push\n", 0o644)
	writeFile(t, filepath.Join(sb, "docs", "locked", "rules.txt"), "rules\n", 0o644)
	writeFile(t, filepath.Join(sb, "docs", "guide.md"), "guide\n", 0o644)
}

// gitSpec protects what the gate would name, plus an extra below an
// unprotected directory and an absent one below an absent directory.
func (f *fixture) gitSpec(script string) Spec {
	s := f.spec(script)
	s.Protected = []string{filepath.Join(f.sandbox, ".git"), filepath.Join(f.sandbox, "docs", "locked"),
		filepath.Join(f.sandbox, "cfg", "secure")}
	return s
}

// tripwireAttack is one way of leaving code for the host to run later.
type tripwireAttack struct {
	name, script string
	// mustBlockOnLinux: bwrap's read-only binds stop it outright.
	mustBlockOnLinux bool
	// want is a path Result.Tampered must cover (list it or a directory
	// above it) when the attack went through.
	want string
}

var tripwireAttacks = []tripwireAttack{
	{"nested repo fsmonitor", `printf '[core]\n\tfsmonitor = "touch /tmp/pwned"\n' >> pkg/inner/.git/config`, true, "pkg/inner/.git/config"},
	{"submodule gitdir hook", `printf '#!/bin/sh\ntouch /tmp/pwned\n' > .git/modules/sub/hooks/post-checkout`, true, ".git/modules/sub/hooks/post-checkout"},
	{"submodule gitdir file", `printf 'gitdir: /tmp/evil\n' > sub/.git`, true, "sub/.git"},
	{"top hooksPath", `printf '[core]\n\thooksPath = /tmp\n' >> .git/config`, true, ".git/config"},
	{"new nested .git dir", `mkdir -p newdir/.git && printf '[core]\n\tfsmonitor = evil\n' > newdir/.git/config`, false, "newdir/.git"},
	{"new .git gitdir file", `printf 'gitdir: /tmp/evil\n' > pkg/.git`, false, "pkg/.git"},
	{"new deep .git", `mkdir -p a/b/c/.git/hooks && echo x > a/b/c/.git/hooks/pre-commit`, false, "a/b/c/.git"},
	{"rename .github, recreate workflows", `mv .github gh-old && mkdir -p .github/workflows && echo evil > .github/workflows/evil.yml`, false, ".github"},
	{"rename parent of a protected extra", `mv docs docs-old && mkdir -p docs/locked && echo evil > docs/locked/rules.txt`, false, "docs"},
	{"absent protected path via its created parent", `mkdir -p cfg && mv cfg cfg-old && mkdir -p cfg/secure && echo evil > cfg/secure/x`, false, "cfg/secure"},
	{"replace the submodule's parent", `mv sub sub-old && mkdir sub && printf 'gitdir: ../evil\n' > sub/.git`, false, "sub"},
	{"new workflow dir where none was", `rm -rf .github && mkdir -p .github/actions/x && echo evil > .github/actions/x/action.yml`, false, ".github/actions"},
	{"move a nested .git away", `mv pkg/inner/.git pkg/inner/git-was-here`, true, "pkg/inner/.git"},
}

func TestLiveTripwire(t *testing.T) {
	for _, a := range tripwireAttacks {
		t.Run(a.name, func(t *testing.T) {
			f := newFixture(t)
			gitSandbox(t, f)
			res := f.run(f.jail, f.gitSpec(a.script+" && echo DONE"))
			done := strings.Contains(string(res.Output), "DONE")
			if a.mustBlockOnLinux && runtime.GOOS == "linux" {
				assert.False(t, done, "bwrap keeps every existing .git read-only")
			}
			if done {
				assertTamperedCovers(t, res.Tampered, a.want)
				assert.Contains(t, res.Reason, "TAMPERED")
			} else {
				assert.Empty(t, res.Tampered, "a blocked attack changed nothing")
			}
		})
	}
}

// TestLiveTripwireUnjailed: the tripwire is the runner's, not a backend's:
// the same attacks through "none" all go through (the positive control for
// the blocked ones above) and are all reported.
func TestLiveTripwireUnjailed(t *testing.T) {
	for _, a := range tripwireAttacks {
		t.Run(a.name, func(t *testing.T) {
			f := newFixture(t)
			gitSandbox(t, f)
			res := f.run(f.none, f.gitSpec(a.script+" && echo DONE"))
			require.Contains(t, string(res.Output), "DONE", "control: unjailed, the attack goes through")
			assertTamperedCovers(t, res.Tampered, a.want)
		})
	}
}

// assertTamperedCovers: Tampered names want or a directory above it (a
// replaced parent covers what lies below it).
func assertTamperedCovers(t *testing.T, tampered []string, want string) {
	t.Helper()
	for _, p := range tampered {
		if p == want || strings.HasPrefix(want, p+"/") {
			return
		}
	}
	t.Errorf("the attack went through unreported: Tampered %q does not cover %q", tampered, want)
}

// TestLiveTripwireNoFalseAlarm: ordinary work beside the protected paths —
// files next to a nested .git, reading every .git, git status in the jail,
// a new directory next to .github — is not tampering.
func TestLiveTripwireNoFalseAlarm(t *testing.T) {
	f := newFixture(t)
	gitSandbox(t, f)
	res := f.run(f.jail, f.gitSpec(`set -e
mkdir -p pkg/inner/src && echo ok > pkg/inner/src/a.txt
echo more >> docs/guide.md && mkdir -p docs/new && echo x > docs/new/page.md
cat .git/config sub/.git pkg/inner/.git/config .github/workflows/ci.yml docs/locked/rules.txt >/dev/null
mkdir -p .github/ISSUE_TEMPLATE && echo t > .github/ISSUE_TEMPLATE/bug.md
echo x > sub/new.py
if command -v git >/dev/null; then git status >/dev/null 2>&1 || true; git -C pkg/inner status >/dev/null 2>&1 || true; fi
echo DONE`))
	require.Contains(t, string(res.Output), "DONE")
	assert.Empty(t, res.Tampered)
	assert.NotContains(t, res.Reason, "TAMPERED")
	// Cleanup left no mount point behind for the absent protected paths.
	assert.NoDirExists(t, filepath.Join(f.sandbox, "cfg"))
	assert.NoDirExists(t, filepath.Join(f.sandbox, ".github", "actions"))
	_, err := os.Stat(filepath.Join(f.sandbox, ".github", "workflows", "ci.yml"))
	assert.NoError(t, err)
}

package release

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// These tests run scripts/release.sh's workflow steps on a fake repository
// laid out as GoReleaser leaves it (dist/<binary>_<os>_<arch>_<variant>/),
// with a stand-in gh and a local bare repository as origin. The real build
// is TestSnapshotMatchesCommittedChecksums.

type fakeRepo struct {
	t   *testing.T
	dir string
	ver string
}

func newFakeRepo(t *testing.T, ver string) *fakeRepo {
	t.Helper()
	r := &fakeRepo{t: t, dir: t.TempDir(), ver: ver}
	b, err := os.ReadFile(filepath.Join(root, "scripts", "release.sh"))
	require.NoError(t, err)
	r.write("scripts/release.sh", string(b))
	require.NoError(t, os.Chmod(filepath.Join(r.dir, "scripts", "release.sh"), 0o755))
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	require.NoError(t, err)
	r.write("go.mod", string(gomod))
	r.write("internal/version/version.go", fmt.Sprintf("package version\n\nconst Version = %q\n", ver))
	r.write("CHANGELOG.md", fmt.Sprintf("# Changelog\n\n## [%s] - 2026-12-01\n\nThe notes of %s.\n\n## [0.0.1] - 2026-01-01\n\nOlder.\n", ver, ver))
	// What GoReleaser leaves: one build directory per binary and platform,
	// the manifest from the before hook, and checksums.txt.
	var sums strings.Builder
	for _, n := range ExpectedNames(ver) {
		content := "content of " + n
		if n == ManifestName(ver) {
			r.write("build/source-manifest.txt", content)
		} else {
			parts := strings.Split(n, "_") // bin, ver, os, arch
			variant := map[string]string{"amd64": "v1", "arm64": "v8.0"}[parts[3]]
			r.write(fmt.Sprintf("dist/%s_%s_%s_%s/%s", parts[0], parts[2], parts[3], variant, parts[0]), content)
		}
		fmt.Fprintf(&sums, "%s  %s\n", SHA256Hex([]byte(content)), n)
	}
	r.write("dist/checksums.txt", sums.String())
	r.write(CommittedPath, sums.String())
	return r
}

func (r *fakeRepo) write(rel, content string) {
	r.t.Helper()
	p := filepath.Join(r.dir, rel)
	require.NoError(r.t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(r.t, os.WriteFile(p, []byte(content), 0o644))
}

func (r *fakeRepo) run(env []string, args ...string) (int, string) {
	r.t.Helper()
	cmd := exec.Command("bash", append([]string{filepath.Join(r.dir, "scripts", "release.sh")}, args...)...)
	cmd.Dir = r.dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), string(out)
	}
	require.NoError(r.t, err)
	return 0, string(out)
}

func TestReleaseScriptCompare(t *testing.T) {
	r := newFakeRepo(t, "0.3.0")
	code, out := r.run(nil, "compare")
	require.Equal(t, 0, code, out)
	assert.Contains(t, out, "the build matches release/checksums.txt byte for byte")
	for _, n := range append(ExpectedNames("0.3.0"), "checksums.txt") {
		assert.FileExists(t, filepath.Join(r.dir, "dist", "release", n))
	}

	t.Run("a binary that is not the one checksummed", func(t *testing.T) {
		r := newFakeRepo(t, "0.3.0")
		r.write("dist/deponent-verify_darwin_arm64_v8.0/deponent-verify", "other bytes")
		code, out := r.run(nil, "compare")
		assert.Equal(t, 1, code, out)
		assert.Contains(t, out, "a release file does not match checksums.txt")
	})
	t.Run("a build that differs from the committed checksums", func(t *testing.T) {
		r := newFakeRepo(t, "0.3.0")
		b, err := os.ReadFile(filepath.Join(r.dir, CommittedPath))
		require.NoError(t, err)
		r.write(CommittedPath, strings.Replace(string(b), string(b[:8]), "00000000", 1))
		code, out := r.run(nil, "compare")
		assert.Equal(t, 1, code, out)
		assert.Contains(t, out, "Nothing is published")
		assert.NoDirExists(t, filepath.Join(r.dir, "dist", "release"), "nothing staged")
	})
	t.Run("no committed checksums", func(t *testing.T) {
		r := newFakeRepo(t, "0.3.0")
		require.NoError(t, os.Remove(filepath.Join(r.dir, CommittedPath)))
		code, out := r.run(nil, "compare")
		assert.Equal(t, 1, code, out)
		assert.Contains(t, out, "Nothing is published")
	})
}

func TestReleaseScriptPreflight(t *testing.T) {
	r := newFakeRepo(t, "0.3.0")
	gover := regexp.MustCompile(`(?m)^go ([0-9.]+)$`).FindStringSubmatch(readFile(t, "go.mod"))[1]
	goVersion, err := exec.Command("go", "env", "GOVERSION").Output()
	require.NoError(t, err)
	if strings.TrimSpace(string(goVersion)) != "go"+gover {
		t.Fatalf("the tests run with %s, go.mod says go%s: the release checks need go.mod's toolchain", goVersion, gover)
	}
	code, out := r.run(nil, "preflight", "v0.3.0")
	require.Equal(t, 0, code, out)
	for _, c := range []struct{ name, tag, want string }{
		{"another version", "v0.3.1", "internal/version says 0.3.0"},
		{"the major tag", "v0", "is not vX.Y.Z"},
		{"a pre-release", "v0.3.0-rc.1", "is not vX.Y.Z"},
	} {
		code, out := r.run(nil, "preflight", c.tag)
		assert.Equal(t, 1, code, "%s: %s", c.name, out)
		assert.Contains(t, out, c.want, c.name)
	}
	r.write("CHANGELOG.md", "# Changelog\n\n## [0.2.0]\n")
	code, out = r.run(nil, "preflight", "v0.3.0")
	assert.Equal(t, 1, code, out)
	assert.Contains(t, out, "CHANGELOG.md has no '## [0.3.0]' entry")

	r = newFakeRepo(t, "0.3.0")
	b, err := os.ReadFile(filepath.Join(r.dir, CommittedPath))
	require.NoError(t, err)
	r.write(CommittedPath, strings.ReplaceAll(string(b), "0.3.0", "0.2.9"))
	code, out = r.run(nil, "preflight", "v0.3.0")
	assert.Equal(t, 1, code, out)
	assert.Contains(t, out, "is not a checksum of a v0.3.0 file")

	require.NoError(t, os.Remove(filepath.Join(r.dir, CommittedPath)))
	code, out = r.run(nil, "preflight", "v0.3.0")
	assert.Equal(t, 1, code, out)
	assert.Contains(t, out, "release/checksums.txt is not committed")
}

// TestReleaseScriptPublish: the release gets exactly the staged files and
// the changelog's entry as its notes (gh is a stand-in that records).
func TestReleaseScriptPublish(t *testing.T) {
	r := newFakeRepo(t, "0.3.0")
	bin := t.TempDir()
	record := filepath.Join(t.TempDir(), "gh-args")
	notes := filepath.Join(t.TempDir(), "notes")
	gh := fmt.Sprintf("#!/bin/sh\nprintf '%%s\\n' \"$@\" > %q\nwhile [ $# -gt 0 ]; do if [ \"$1\" = --notes-file ]; then cp \"$2\" %q; fi; shift; done\n", record, notes)
	require.NoError(t, os.WriteFile(filepath.Join(bin, "gh"), []byte(gh), 0o755))
	path := "PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH")

	code, out := r.run([]string{path}, "publish", "v0.3.0")
	assert.Equal(t, 1, code, "publish before compare: %s", out)
	assert.Contains(t, out, "run scripts/release.sh compare first")
	assert.NoFileExists(t, record)

	code, out = r.run(nil, "compare")
	require.Equal(t, 0, code, out)
	code, out = r.run([]string{path}, "publish", "v0.3.0")
	require.Equal(t, 0, code, out)
	args, err := os.ReadFile(record)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(args)), "\n")
	assert.Equal(t, []string{"release", "create", "v0.3.0", "--verify-tag", "--title", "v0.3.0", "--notes-file"}, lines[:7])
	var assets []string
	for _, a := range lines[8:] {
		assets = append(assets, strings.TrimPrefix(a, "dist/release/"))
	}
	assert.ElementsMatch(t, append(ExpectedNames("0.3.0"), "checksums.txt"), assets)
	n, err := os.ReadFile(notes)
	require.NoError(t, err)
	assert.Equal(t, "\nThe notes of 0.3.0.\n\n", string(n), "the changelog entry, and only it")
}

// TestReleaseScriptMoveMajor: v0 moves to a release only when it is the
// newest v0.y.z, in the remote too.
func TestReleaseScriptMoveMajor(t *testing.T) {
	r := newFakeRepo(t, "0.3.0")
	origin := t.TempDir()
	git(t, origin, "init", "-q", "--bare")
	git(t, r.dir, "init", "-q")
	git(t, r.dir, "remote", "add", "origin", origin)
	commit := func(msg string) string {
		git(t, r.dir, "commit", "-q", "--allow-empty", "-m", msg)
		out, err := exec.Command("git", "-C", r.dir, "rev-parse", "HEAD").Output()
		require.NoError(t, err)
		return strings.TrimSpace(string(out))
	}
	c1 := commit("one")
	git(t, r.dir, "tag", "v0.2.0")
	c2 := commit("two")
	git(t, r.dir, "tag", "-a", "-m", "v0.3.0", "v0.3.0") // annotated: v0 must name the commit
	git(t, r.dir, "push", "-q", "origin", "HEAD:refs/heads/main", "--tags")
	remoteTag := func(name string) string {
		out, err := exec.Command("git", "-C", origin, "rev-parse", "--verify", "-q", name+"^{commit}").Output()
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(out))
	}
	env := []string{"GIT_CONFIG_GLOBAL=/dev/null", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com"}

	code, out := r.run(env, "move-major", "v0.2.0")
	require.Equal(t, 0, code, out)
	assert.Contains(t, out, "v0.3.0 is newer than v0.2.0")
	assert.Empty(t, remoteTag("v0"), "an older release does not move v0")

	code, out = r.run(env, "move-major", "v0.3.0")
	require.Equal(t, 0, code, out)
	assert.Equal(t, c2, remoteTag("v0"))

	// A later release moves it again; v1.0.0 would not touch v0.
	c3 := commit("three")
	git(t, r.dir, "tag", "v0.3.1")
	git(t, r.dir, "push", "-q", "origin", "--tags")
	code, out = r.run(env, "move-major", "v0.3.1")
	require.Equal(t, 0, code, out)
	assert.Equal(t, c3, remoteTag("v0"))
	assert.NotEqual(t, c1, c3)
}

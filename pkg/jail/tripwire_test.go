package jail

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func snap(t *testing.T, sb string, roots ...string) *snapshot {
	t.Helper()
	s, err := takeSnapshot(sb, roots)
	require.NoError(t, err)
	return s
}

func diffPaths(before, after *snapshot) []string {
	return tamperedPaths(diffSnapshots(before, after))
}

func TestFindGitsEveryDepthNoFollow(t *testing.T) {
	sb := resolvedTempDir(t)
	outside := resolvedTempDir(t)
	mustMkdir(t, filepath.Join(outside, "x", ".git"))
	mustMkdir(t, filepath.Join(sb, ".git", "modules", "m"))
	mustMkdir(t, filepath.Join(sb, "a", "b", ".git"))
	writeFile(t, filepath.Join(sb, "m", ".git"), "gitdir: ../.git/modules/m\n", 0o644)
	writeFile(t, filepath.Join(sb, "far", ".git"), "gitdir: /elsewhere/repo\n", 0o644)
	require.NoError(t, os.Symlink(outside, filepath.Join(sb, "link"))) // not followed
	mustMkdir(t, filepath.Join(sb, "l"))
	require.NoError(t, os.Symlink("../a/b/.git", filepath.Join(sb, "l", ".gitx"))) // not a .git
	mustMkdir(t, filepath.Join(sb, "s"))
	require.NoError(t, os.Symlink("../a/b/.git", filepath.Join(sb, "s", ".git")))
	gits, unreadable, err := findGits(sb, nil)
	require.NoError(t, err)
	assert.Empty(t, unreadable)
	assert.Equal(t, []gitFound{
		{rel: ".git", kind: kDir},
		{rel: "a/b/.git", kind: kDir},
		{rel: "far/.git", kind: kFile},
		{rel: "m/.git", kind: kFile, gitdir: ".git/modules/m"},
		{rel: "s/.git", kind: kLink, gitdir: "a/b/.git"},
	}, gits)
}

func TestTripwireSeesSameSizeSameSecondRewrite(t *testing.T) {
	sb := resolvedTempDir(t)
	cfg := filepath.Join(sb, ".git", "config")
	writeFile(t, cfg, "[core]\n\tbare = false\n", 0o644)
	before := snap(t, sb)
	st, err := os.Stat(cfg)
	require.NoError(t, err)
	writeFile(t, cfg, "[core]\n\tbare = fals3\n", 0o644)
	require.NoError(t, os.Chtimes(cfg, st.ModTime(), st.ModTime())) // mtime and size as before
	assert.Equal(t, []string{".git/config"}, diffPaths(before, snap(t, sb, before.roots...)))
}

func TestTripwireNoChangeNoReport(t *testing.T) {
	sb := resolvedTempDir(t)
	writeFile(t, filepath.Join(sb, ".git", "config"), "x", 0o644)
	writeFile(t, filepath.Join(sb, "pkg", ".git"), "gitdir: ../.git\n", 0o644)
	before := snap(t, sb, ".github/workflows", "absent/deep")
	// Work beside the protected paths: not tampering.
	writeFile(t, filepath.Join(sb, "pkg", "main.go"), "package main", 0o644)
	writeFile(t, filepath.Join(sb, "README"), "x", 0o644)
	assert.Empty(t, diffPaths(before, snap(t, sb, before.roots...)))
}

func TestTripwireReportsTheTopOfANewTree(t *testing.T) {
	sb := resolvedTempDir(t)
	before := snap(t, sb, ".github/workflows")
	writeFile(t, filepath.Join(sb, ".github", "workflows", "a", "b.yml"), "x", 0o644)
	writeFile(t, filepath.Join(sb, "x", "y", ".git", "hooks", "pre-commit"), "x", 0o755)
	assert.Equal(t, []string{".github/workflows", "x/y/.git"}, diffPaths(before, snap(t, sb, before.roots...)))
}

func TestTripwireParentReplaced(t *testing.T) {
	sb := resolvedTempDir(t)
	writeFile(t, filepath.Join(sb, "docs", "locked", "f"), "x", 0o644)
	before := snap(t, sb, "docs/locked")
	require.NoError(t, os.Rename(filepath.Join(sb, "docs"), filepath.Join(sb, "old")))
	writeFile(t, filepath.Join(sb, "docs", "locked", "f"), "x", 0o644)
	ts := diffSnapshots(before, snap(t, sb, before.roots...))
	require.Len(t, ts, 1)
	assert.Equal(t, "docs", ts[0].rel)
	assert.Contains(t, ts[0].what, "parent of protected docs/locked")
}

func TestTripwireAbsentStaysQuietWhenParentChanges(t *testing.T) {
	sb := resolvedTempDir(t)
	mustMkdir(t, filepath.Join(sb, "docs"))
	before := snap(t, sb, "docs/locked")
	require.NoError(t, os.RemoveAll(filepath.Join(sb, "docs")))
	writeFile(t, filepath.Join(sb, "docs", "index.md"), "regenerated", 0o644)
	assert.Empty(t, diffPaths(before, snap(t, sb, before.roots...)), "an absent protected path that stays absent is not tampered")
}

func TestTripwireLargeFileByCtime(t *testing.T) {
	sb := resolvedTempDir(t)
	pack := filepath.Join(sb, ".git", "objects", "pack", "p.pack")
	big := make([]byte, tripwireHashMax+10)
	writeFile(t, pack, string(big), 0o444)
	before := snap(t, sb)
	st, err := os.Stat(pack)
	require.NoError(t, err)
	time.Sleep(20 * time.Millisecond) // let the coarse clock that stamps ctime move on
	big[0] = 1
	require.NoError(t, os.Chmod(pack, 0o644))
	require.NoError(t, os.WriteFile(pack, big, 0o644))
	require.NoError(t, os.Chmod(pack, 0o444))
	require.NoError(t, os.Chtimes(pack, st.ModTime(), st.ModTime()))
	assert.Equal(t, []string{".git/objects/pack/p.pack"}, diffPaths(before, snap(t, sb, before.roots...)))
}

func TestTripwireHardLinkToProtectedFile(t *testing.T) {
	sb := resolvedTempDir(t)
	writeFile(t, filepath.Join(sb, ".git", "config"), "x", 0o644)
	before := snap(t, sb)
	require.NoError(t, os.Link(filepath.Join(sb, ".git", "config"), filepath.Join(sb, "cfg")))
	assert.Equal(t, []string{".git/config"}, diffPaths(before, snap(t, sb, before.roots...)),
		"a new writable name for a protected file changes its link count")
}

// TestLiveTripwireUnreadableDirectory (Live: the unprivileged re-run runs
// it too): a directory the step made unreadable could hide a .git. Root
// lists it anyway and sees the .git; anyone else reports the directory.
func TestLiveTripwireUnreadableDirectory(t *testing.T) {
	sb := resolvedTempDir(t)
	before := snap(t, sb)
	mustMkdir(t, filepath.Join(sb, "hidden", ".git"))
	require.NoError(t, os.Chmod(filepath.Join(sb, "hidden"), 0))
	t.Cleanup(func() { os.Chmod(filepath.Join(sb, "hidden"), 0o755) })
	want := []string{"hidden"}
	if os.Geteuid() == 0 {
		want = []string{"hidden/.git"}
	}
	assert.Equal(t, want, diffPaths(before, snap(t, sb, before.roots...)))
}

func TestCollapseKeepsChangedChildren(t *testing.T) {
	got := collapse([]tamper{
		{"a/.git/hooks/x", "created (file)"}, {"a/.git/config", "changed"}, {"b/.git", "created (directory)"},
		{"b/.git/config", "created (file)"}, {"a/.git/config", "changed"},
	})
	assert.Equal(t, []tamper{{"a/.git/config", "changed"}, {"a/.git/hooks/x", "created (file)"}, {"b/.git", "created (directory)"}}, got)
}

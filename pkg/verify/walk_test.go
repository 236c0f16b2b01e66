package verify

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestClassify(t *testing.T) {
	cases := map[string]refKind{
		"r.json": refReceipt, "R.JSON": refReceipt, ".hidden.json": refReceipt,
		"l.jsonl": refLedger, "index.jsonl": refIndex, "LATEST": refLatest,
		"latest": refOther, "Index.jsonl": refLedger, ".json": refOther, "x.json.tmp-123": refOther, "notes.md": refOther,
	}
	for name, want := range cases {
		assert.Equal(t, want, classify(name), name)
	}
}

func TestWalkDir(t *testing.T) {
	root := t.TempDir()
	mk := func(rel, data string) {
		p := filepath.Join(root, filepath.FromSlash(rel))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(data), 0o644))
	}
	mk("b/r2.json", "{}")
	mk("a/r1.json", "{}")
	mk("a/index.jsonl", "")
	mk("a/LATEST", "")
	mk("notes.txt", "")
	require.NoError(t, os.Symlink("..", filepath.Join(root, "a", "up")))
	require.NoError(t, os.Symlink("a/r1.json", filepath.Join(root, "link.json")))
	if runtime.GOOS != "windows" {
		require.NoError(t, mkfifo(filepath.Join(root, "fifo.json")))
	}
	refs, problems := walkDir(root)
	require.Empty(t, problems)
	got := map[string]refKind{}
	bad := map[string]string{}
	for _, r := range refs {
		got[r.rel] = r.kind
		if r.kind == refBad {
			bad[r.rel] = r.bad
		}
		assert.Equal(t, filepath.Join(root, filepath.FromSlash(r.rel)), r.display)
	}
	assert.Equal(t, refReceipt, got["a/r1.json"])
	assert.Equal(t, refReceipt, got["b/r2.json"])
	assert.Equal(t, refIndex, got["a/index.jsonl"])
	assert.Equal(t, refLatest, got["a/LATEST"])
	assert.Equal(t, refOther, got["notes.txt"])
	assert.Contains(t, bad["a/up"], "symlink not followed")
	assert.Contains(t, bad["link.json"], "symlink not followed")
	if runtime.GOOS != "windows" {
		assert.Contains(t, bad["fifo.json"], "named pipe")
	}
	// Lexical order, whatever the directory order.
	for i := 1; i < len(refs); i++ {
		assert.Less(t, refs[i-1].rel, refs[i].rel)
	}
}

func TestWalkDirDepthCap(t *testing.T) {
	root := t.TempDir()
	deep := root
	for range MaxWalkDepth + 2 {
		deep = filepath.Join(deep, "d")
	}
	require.NoError(t, os.MkdirAll(deep, 0o755))
	refs, problems := walkDir(root)
	require.Empty(t, problems)
	require.Len(t, refs, 1)
	assert.Equal(t, refBad, refs[0].kind)
	assert.Contains(t, refs[0].bad, "nested deeper than 64 levels")
	assert.Equal(t, MaxWalkDepth+1, strings.Count(refs[0].rel, "/")+1)
}

func TestFileOpenerRefusesSpecialFiles(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no FIFOs")
	}
	dir := t.TempDir()
	fifo := filepath.Join(dir, "p.json")
	require.NoError(t, mkfifo(fifo))
	// Neither opener may block on a FIFO found by a walk.
	_, _, err := fileOpener(fifo, false)()
	assert.ErrorContains(t, err, "not a regular file (named pipe)")

	target := filepath.Join(dir, "t.json")
	require.NoError(t, os.WriteFile(target, []byte("{}"), 0o644))
	link := filepath.Join(dir, "l.json")
	require.NoError(t, os.Symlink(target, link))
	_, _, err = fileOpener(link, false)()
	assert.Error(t, err, "a symlink swapped in after the walk is not followed")
	rc, size, err := fileOpener(link, true)()
	require.NoError(t, err, "a symlink the user named is followed")
	rc.Close()
	assert.Equal(t, int64(2), size)
}

package verify

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/deponent-dev/deponent-action/pkg/verify/verifytest"
)

// referenceStore is a store written by the Python reference's persist()
// (see testdata/REFERENCE-STORE.md).
var referenceStore = filepath.Join("testdata", "reference-store")

// foreign relaxes what a receipt without a governance object cannot show:
// the outcome is the stored one, nothing records canaries or a jail.
func foreign() Options {
	return Options{AllowStoredOutcome: true, AllowNoCanaries: true, AllowUnjailed: true}
}

func TestReferenceStoreCopyIsCurrent(t *testing.T) {
	shared := filepath.Join("..", "..", "..", "shared", "interop", "store-sample", "deponent")
	ents, err := os.ReadDir(shared)
	if err != nil {
		t.Skipf("the shared store sample is not at %s (fine on a clone): %v", shared, err)
	}
	ours, err := os.ReadDir(filepath.Join(referenceStore, "deponent"))
	require.NoError(t, err)
	require.Len(t, ours, len(ents))
	for _, e := range ents {
		a, err := os.ReadFile(filepath.Join(shared, e.Name()))
		require.NoError(t, err)
		b, err := os.ReadFile(filepath.Join(referenceStore, "deponent", e.Name()))
		require.NoError(t, err)
		assert.True(t, bytes.Equal(a, b), "%s differs from the shared copy", e.Name())
	}
}

// TestReferenceStore: the store the reference writes verifies as it is —
// the store's directory, its producer directory and a zip of it — and its
// bookkeeping is checked, not skipped.
func TestReferenceStore(t *testing.T) {
	// What the layout is: no file or signature in the index, LATEST
	// without a newline.
	idx, err := os.ReadFile(filepath.Join(referenceStore, "deponent", "index.jsonl"))
	require.NoError(t, err)
	require.NotContains(t, string(idx), `"signature"`)
	require.NotContains(t, string(idx), `"file"`)
	require.Contains(t, string(idx), `\u00fc`, "written with ensure_ascii")
	latest, err := os.ReadFile(filepath.Join(referenceStore, "deponent", "LATEST"))
	require.NoError(t, err)
	require.False(t, bytes.HasSuffix(latest, []byte("\n")))

	zipPath := filepath.Join(t.TempDir(), "artifact.zip")
	require.NoError(t, os.WriteFile(zipPath, verifytest.ZipDir(t, referenceStore), 0o644))
	for _, path := range []string{referenceStore, filepath.Join(referenceStore, "deponent"), zipPath} {
		t.Run(filepath.Base(path), func(t *testing.T) {
			rep, err := Run([]string{path}, foreign())
			require.NoError(t, err)
			require.True(t, rep.OK, "%+v", rep.Items)
			assert.Equal(t, 3, rep.DistinctReceipts)
			kinds := map[Kind]int{}
			for _, it := range rep.Items {
				kinds[it.Kind]++
				switch it.Kind {
				case KindIndex:
					assert.Equal(t, 3, it.Receipts)
				case KindLatest:
					assert.Equal(t, "20261130T132049Z_sample0002", it.ReceiptID)
				case KindReceipt:
					assert.Equal(t, SourceStored, it.OutcomeSource)
					assert.Equal(t, int64(3), it.Entries)
				}
			}
			assert.Equal(t, 1, kinds[KindIndex])
			assert.Equal(t, 1, kinds[KindLatest])
			assert.Equal(t, 3, kinds[KindReceipt])

			// Strict, the receipts' stored outcome does not pass; the
			// store's bookkeeping still does.
			rep, err = Run([]string{path}, DefaultOptions())
			require.NoError(t, err)
			assert.False(t, rep.OK)
			for _, it := range rep.Items {
				switch it.Kind {
				case KindIndex, KindLatest:
					assert.True(t, it.OK, "%s: %s", it.Path, it.Reason())
				case KindReceipt:
					assert.Contains(t, it.Reason(), "is stored, not recomputed")
				}
			}
		})
	}
}

// TestReferenceStoreChecked: the reference's layout is accepted as it is,
// and what it holds is checked: each change to it fails.
func TestReferenceStoreChecked(t *testing.T) {
	const newest, older = "20261130T132049Z_sample0002", "20261130T132049Z_sample0001"
	copyStore := func(t *testing.T) (root, dir string) {
		root = t.TempDir()
		dir = filepath.Join(root, "deponent")
		require.NoError(t, os.MkdirAll(dir, 0o755))
		ents, err := os.ReadDir(filepath.Join(referenceStore, "deponent"))
		require.NoError(t, err)
		for _, e := range ents {
			data, err := os.ReadFile(filepath.Join(referenceStore, "deponent", e.Name()))
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(dir, e.Name()), data, 0o644))
		}
		return root, dir
	}
	edit := func(t *testing.T, p, from, to string) {
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		require.Contains(t, string(data), from)
		require.NoError(t, os.WriteFile(p, []byte(strings.Replace(string(data), from, to, 1)), 0o644))
	}
	cases := []struct {
		name   string
		change func(t *testing.T, dir string)
		item   string // the item that fails
		msg    string
	}{
		{"LATEST names an older receipt", func(t *testing.T, dir string) {
			require.NoError(t, os.WriteFile(filepath.Join(dir, "LATEST"), []byte(older), 0o644))
		}, "LATEST", "but the newest receipt index.jsonl lists (its last line) is " + newest},
		{"an outcome changed in the index", func(t *testing.T, dir string) {
			edit(t, filepath.Join(dir, "index.jsonl"), `"outcome": "GOVERNED_PASS"}`, `"outcome": "GOVERNED_FAIL"}`)
		}, "index.jsonl", `line 1: outcome "GOVERNED_FAIL", but the receipt`},
		{"a task changed in the index", func(t *testing.T, dir string) {
			edit(t, filepath.Join(dir, "index.jsonl"), `sample task 1`, `sample task 9`)
		}, "index.jsonl", `line 2: task "sample task 9`},
		{"a model changed in the index", func(t *testing.T, dir string) {
			edit(t, filepath.Join(dir, "index.jsonl"), `"model": "local-model"`, `"model": "other"`)
		}, "index.jsonl", `line 1: model "other", but the receipt`},
		{"an unknown field in the index", func(t *testing.T, dir string) {
			edit(t, filepath.Join(dir, "index.jsonl"), `"model": "local-model"`, `"model": "local-model", "trusted": "yes"`)
		}, "index.jsonl", `line 1: unknown field "trusted"`},
		{"an indexed receipt missing", func(t *testing.T, dir string) {
			require.NoError(t, os.Remove(filepath.Join(dir, older+".json")))
		}, "index.jsonl", "line 2: lists " + older + ".json, which is not beside it"},
		{"a receipt not indexed", func(t *testing.T, dir string) {
			data, err := os.ReadFile(filepath.Join(dir, "index.jsonl"))
			require.NoError(t, err)
			lines := strings.SplitAfter(string(data), "\n")
			require.NoError(t, os.WriteFile(filepath.Join(dir, "index.jsonl"), []byte(lines[0]+lines[2]), 0o644))
		}, older + ".json", "not listed in the index.jsonl beside it"},
		{"a receipt tampered", func(t *testing.T, dir string) {
			edit(t, filepath.Join(dir, older+".json"), `"model": "local-model"`, `"model": "other-model"`)
		}, "index.jsonl", "line 2: lists " + older + ".json, which does not verify"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root, dir := copyStore(t)
			rep, err := Run([]string{root}, foreign())
			require.NoError(t, err)
			require.True(t, rep.OK, "the copy passes before the change")
			c.change(t, dir)
			rep, err = Run([]string{root}, foreign())
			require.NoError(t, err)
			assert.False(t, rep.OK)
			found := false
			for _, it := range rep.Items {
				if filepath.Base(it.Path) == c.item {
					found = true
					assert.Contains(t, it.Reason(), c.msg)
				}
			}
			assert.True(t, found, "no item %s", c.item)
		})
	}
}

package verify

// Fuzz tests of the walkers' inputs. Seed corpora: testdata/fuzz/<Name>/.
// Run one with e.g.
//
//	go test -run '^$' -fuzz FuzzZip -fuzztime 60s ./pkg/verify/
//
// A panic anywhere is caught and turned into an "internal error" failure
// (a panic is never an outcome), so each target asserts that none
// happened, besides its own properties.

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deponent-dev/deponent-action/pkg/canon"
	"github.com/deponent-dev/deponent-action/pkg/verify/verifytest"
)

func checkReport(t *testing.T, rep *Report, root string) {
	t.Helper()
	failed, verified := 0, 0
	for _, it := range rep.Items {
		switch {
		case !it.OK:
			failed++
		case it.Kind == KindReceipt || it.Kind == KindLedger:
			verified++
		}
	}
	if rep.Verified != verified || rep.Failed != failed {
		t.Fatalf("counts %d verified, %d failed; the items say %d, %d", rep.Verified, rep.Failed, verified, failed)
	}
	for _, it := range rep.Items {
		if strings.Contains(it.Reason(), "internal error") {
			t.Fatalf("%s: %s", it.Path, it.Reason())
		}
		if it.OK != (len(it.Problems) == 0) {
			t.Fatalf("%s: ok=%v with %d problems", it.Path, it.OK, len(it.Problems))
		}
		if root != "" && !strings.HasPrefix(it.Path, root) && it.Kind != KindPolicy {
			t.Fatalf("item %q outside the PATH %q", it.Path, root)
		}
	}
}

// FuzzZip feeds arbitrary bytes as an artifact: whatever they are, the
// verifier reports (never panics, never hangs, stays under its caps), and a
// member it passes has a clean name.
func FuzzZip(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		o := DefaultOptions()
		r := &runner{o: &o, mem: newBudget(MemoryBudget)}
		slot := r.newItem("f.zip", KindZip)
		r.addZipReader(slot, "f.zip", bytes.NewReader(data), int64(len(data)))
		r.runJobs()
		for _, c := range r.containers {
			r.finishContainer(c)
		}
		rep := newReport(&o, r.items)
		checkReport(t, rep, "f.zip")
		for _, it := range rep.Items {
			if name, ok := strings.CutPrefix(it.Path, "f.zip!"); ok && it.OK && zipNameProblem(name) != "" {
				t.Fatalf("member %q passed with an unsafe name", name)
			}
		}
	})
}

// FuzzDirNames builds a tree from fuzzed names, one a line: "dir/" is a
// directory, "name->target" a symlink (to anywhere: it must not be
// followed), "name|fifo" a FIFO, anything else a file whose content its
// name picks (a receipt for *.json, its index line for index.jsonl, its
// id for LATEST, junk for names holding "bad"). Names that would leave
// the temporary root are skipped; link targets are not.
func FuzzDirNames(f *testing.F) {
	good := verifytest.Build(f, verifytest.Spec{})
	receipt := verifytest.Bytes(good)
	index := []byte(`{"receipt_id": "` + good.ID + `", "file": "` + good.ID + `.json", "ts": "` + good.TS +
		`", "outcome": "` + string(good.Outcome) + `", "signature": "` + good.Signature + `"}` + "\n")
	f.Fuzz(func(t *testing.T, spec string) {
		root := t.TempDir()
		lines := strings.Split(spec, "\n")
		if len(lines) > 64 {
			lines = lines[:64]
		}
		for _, l := range lines {
			makeEntry(root, l, receipt, index, good.ID)
		}
		o := DefaultOptions()
		o.MinReceipts = ptr(0)
		rep, err := Run([]string{root}, o)
		if err != nil {
			t.Fatal(err)
		}
		checkReport(t, rep, root)
		for _, it := range rep.Items {
			if it.Kind == KindReceipt && it.OK {
				// Whatever passed was a regular file reached without a link.
				st, err := os.Lstat(it.Path)
				if err != nil || !st.Mode().IsRegular() {
					t.Fatalf("%s passed but is not a regular file (%v)", it.Path, err)
				}
			}
		}
	})
}

func makeEntry(root, line string, receipt, index []byte, id string) {
	name, target, isLink := strings.Cut(line, "->")
	name, isFifo := strings.CutSuffix(name, "|fifo")
	dir := strings.HasSuffix(name, "/")
	name = strings.TrimSuffix(name, "/")
	if !filepath.IsLocal(name) || len(name) > 200 {
		return
	}
	p := filepath.Join(root, name)
	_ = os.MkdirAll(filepath.Dir(p), 0o755)
	switch {
	case dir:
		_ = os.MkdirAll(p, 0o755)
	case isLink:
		_ = os.Symlink(target, p)
	case isFifo:
		_ = mkfifo(p)
	default:
		var data []byte
		switch base := filepath.Base(name); {
		case strings.Contains(name, "bad"):
			data = []byte(name)
		case base == "index.jsonl":
			data = index
		case base == "LATEST":
			data = []byte(id + "\n")
		case hasExt(base, ".json"):
			data = receipt
		}
		_ = os.WriteFile(p, data, 0o644)
	}
}

// FuzzStore fuzzes a store's bookkeeping: index.jsonl and LATEST beside one
// good receipt. The store may pass only if they say exactly what the
// receipt says.
func FuzzStore(f *testing.F) {
	good := verifytest.Build(f, verifytest.Spec{})
	f.Fuzz(func(t *testing.T, index, latest []byte) {
		root := t.TempDir()
		dir := filepath.Join(root, "deponent")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		verifytest.WriteFile(t, filepath.Join(dir, good.ID+".json"), good)
		if err := os.WriteFile(filepath.Join(dir, "index.jsonl"), index, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "LATEST"), latest, 0o644); err != nil {
			t.Fatal(err)
		}
		rep, err := Run([]string{root}, DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		checkReport(t, rep, root)
		if rep.OK {
			if string(latest) != good.ID+"\n" && string(latest) != good.ID {
				t.Fatalf("passed with LATEST %q", latest)
			}
			if bytes.Count(index, []byte("\n")) != 1 || !bytes.HasSuffix(index, []byte("\n")) {
				t.Fatalf("passed with index %q", index)
			}
			v, err := canon.Parse(index[:len(index)-1], canon.DefaultLimits)
			if err != nil {
				t.Fatalf("passed with index %q: %v", index, err)
			}
			for k, want := range map[string]string{"receipt_id": good.ID, "ts": good.TS, "outcome": string(good.Outcome)} {
				if got, _ := v.Get(k); got.String() != canon.Str(want).String() {
					t.Fatalf("passed with index %q: %s is %s", index, k, got)
				}
			}
		}
	})
}

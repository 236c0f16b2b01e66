package gate

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deponent-dev/deponent-action/pkg/evidence"
)

// The red-team files: one tool call per line with the verdict the gate must
// give. testdata/redteam holds our fixture copy of the public sample (so
// the test always runs) and gate-extra.jsonl, our own larger table of
// hidden-class attacks and everyday commands, in the same format plus an
// optional "class" that, when present, must match too.

const sharedRedteamDir = "../../../shared/redteam"

type redteamCase struct {
	Tool   string           `json:"tool"`
	Params map[string]any   `json:"params"`
	Expect evidence.Verdict `json:"expect"`
	Why    string           `json:"why"`
	Class  evidence.Class   `json:"class,omitempty"`
	line   int
}

type redteamSetup struct {
	Symlinks map[string]string `json:"symlinks"`
	Files    map[string]string `json:"files"`
}

func loadRedteamCases(t *testing.T, path string) []redteamCase {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	var cases []redteamCase
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "//") {
			continue
		}
		var c redteamCase
		dec := json.NewDecoder(strings.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c); err != nil {
			t.Fatalf("%s:%d: %v", path, n, err)
		}
		if c.Expect != evidence.VerdictAllow && c.Expect != evidence.VerdictBlock {
			t.Fatalf("%s:%d: expect must be ALLOW or BLOCK, got %q", path, n, c.Expect)
		}
		c.line = n
		cases = append(cases, c)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(cases) == 0 {
		t.Fatalf("%s: no cases", path)
	}
	return cases
}

// buildRedteamSandbox creates the files and symlinks of setup.json in a
// fresh temporary directory and returns it.
func buildRedteamSandbox(t testing.TB, setupPath string) string {
	t.Helper()
	data, err := os.ReadFile(setupPath)
	if err != nil {
		t.Fatalf("read %s: %v", setupPath, err)
	}
	var setup redteamSetup
	if err := json.Unmarshal(data, &setup); err != nil {
		t.Fatalf("%s: %v", setupPath, err)
	}
	dir := t.TempDir()
	for name, content := range setup.Files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, target := range setup.Symlinks {
		if err := os.Symlink(target, filepath.Join(dir, filepath.FromSlash(name))); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func runRedteamFile(t *testing.T, g *Gate, path string) {
	t.Helper()
	cases := loadRedteamCases(t, path)
	var allows, blocks int
	for _, c := range cases {
		d := g.Decide(c.Tool, c.Params)
		if d.Verdict != c.Expect || (c.Class != "" && d.BlastClass != c.Class) {
			t.Errorf("%s:%d %s %v\n\twant %s %s (%s)\n\tgot  %s %s: %s",
				filepath.Base(path), c.line, c.Tool, c.Params, c.Expect, c.Class, c.Why, d.Verdict, d.BlastClass, d.Reason)
			continue
		}
		if d.Allowed() {
			allows++
			if c.Tool == "run_cmd" && d.Script == "" {
				t.Errorf("%s:%d: ALLOW without a Script", filepath.Base(path), c.line)
			}
		} else {
			blocks++
		}
	}
	t.Logf("%s: %d cases (%d ALLOW, %d BLOCK)", filepath.Base(path), len(cases), allows, blocks)
}

func TestRedteamPublicSample(t *testing.T) {
	dir := buildRedteamSandbox(t, "testdata/redteam/setup.json")
	g, err := NewGate(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	runRedteamFile(t, g, "testdata/redteam/gate-public.jsonl")
}

// TestRedteamSharedSample runs the live shared copy too, so an update to the
// shared sample is noticed even before the fixture is refreshed.
func TestRedteamSharedSample(t *testing.T) {
	if _, err := os.Stat(sharedRedteamDir); err != nil {
		skipWithoutShared(t, "shared red-team directory %s not present (%v); the testdata fixture copy still runs in TestRedteamPublicSample", sharedRedteamDir, err)
	}
	dir := buildRedteamSandbox(t, filepath.Join(sharedRedteamDir, "setup.json"))
	g, err := NewGate(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	runRedteamFile(t, g, filepath.Join(sharedRedteamDir, "gate-public.jsonl"))
	for _, name := range []string{"gate-public.jsonl", "setup.json"} {
		shared, err1 := os.ReadFile(filepath.Join(sharedRedteamDir, name))
		fixture, err2 := os.ReadFile(filepath.Join("testdata/redteam", name))
		if err1 == nil && err2 == nil && !bytes.Equal(shared, fixture) {
			t.Errorf("testdata/redteam/%s differs from the shared copy; refresh the fixture", name)
		}
	}
}

func TestRedteamExtra(t *testing.T) {
	dir := buildRedteamSandbox(t, "testdata/redteam/setup.json")
	g, err := NewGate(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	runRedteamFile(t, g, "testdata/redteam/gate-extra.jsonl")
}

package gate

import (
	"bufio"
	"bytes"
	"encoding/json"
	goflag "flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/deponent-dev/deponent-action/pkg/evidence"
)

// The catalogue's tests: every registered program has a table of cases in
// its prog_<file>_test.go (registered with progTable) and golden cases in
// testdata/catalogue/<family>.golden, each with at least one ALLOW and one
// BLOCK; the tables and golden files run against a sandbox shaped like a
// small Python/Go project (testdata/catalogue/setup.json).
//
// go test ./pkg/gate -run TestCatalogueGolden -update rewrites the golden
// files from the gate's current answers; review the diff.

var updateGolden = goflag.Bool("update", false, "rewrite testdata/catalogue/*.golden from the gate's answers")

// progCase is one row of a program's table: a command and the answer.
type progCase struct {
	cmd   string
	class evidence.Class // ClassLocalExec for ALLOW; any other is a BLOCK class
	why   string
	// operator selects the operator policy (catalogueOperatorPolicy):
	// programs outside the default allowlist, git writes.
	operator bool
}

func allow(cmd, why string) progCase {
	return progCase{cmd: cmd, class: evidence.ClassLocalExec, why: why}
}

func deny(cmd string, class evidence.Class, why string) progCase {
	return progCase{cmd: cmd, class: class, why: why}
}

func (c progCase) op() progCase { c.operator = true; return c }

var progTables = map[string][]progCase{}

// progTable registers a family's table (called from init in the family's
// test file).
func progTable(family string, cases ...progCase) bool {
	progTables[family] = append(progTables[family], cases...)
	return true
}

// catalogueOperatorPolicy allows every modelled program and git's writes.
const catalogueOperatorPolicy = `{
	"extra_allow_heads": ["make", "gmake", "awk", "gawk", "mawk", "nawk", "go", "tee", "egrep", "fgrep", "printf", "false", "py.test", "python3.12"],
	"allow_git_writes": ["add", "commit"]
}`

var (
	catalogueOnce    sync.Once
	catalogueDir     string
	catalogueGates   [2]*Gate
	catalogueGateErr error
)

// catalogueGate returns the shared gate over the catalogue sandbox. The
// sandbox is created once per test binary and never written by the tests.
func catalogueGate(t testing.TB, operator bool) *Gate {
	t.Helper()
	catalogueOnce.Do(func() {
		dir, err := os.MkdirTemp("", "deponent-catalogue-")
		if err != nil {
			catalogueGateErr = err
			return
		}
		catalogueDir = dir
		if err := writeSetup(dir, "testdata/catalogue/setup.json"); err != nil {
			catalogueGateErr = err
			return
		}
		pol, err := ParsePolicy([]byte(catalogueOperatorPolicy))
		if err != nil {
			catalogueGateErr = err
			return
		}
		for i, p := range []*Policy{nil, pol} {
			if catalogueGates[i], err = NewGate(dir, p); err != nil {
				catalogueGateErr = err
				return
			}
		}
	})
	if catalogueGateErr != nil {
		t.Fatal(catalogueGateErr)
	}
	if operator {
		return catalogueGates[1]
	}
	return catalogueGates[0]
}

func TestMain(m *testing.M) {
	code := m.Run()
	if catalogueDir != "" {
		os.RemoveAll(catalogueDir)
	}
	os.Exit(code)
}

// writeSetup creates setup.json's files and symlinks under dir.
func writeSetup(dir, setupPath string) error {
	data, err := os.ReadFile(setupPath)
	if err != nil {
		return err
	}
	var setup struct {
		Files    map[string]string `json:"files"`
		Symlinks map[string]string `json:"symlinks"`
		Dirs     []string          `json:"dirs"`
	}
	if err := json.Unmarshal(data, &setup); err != nil {
		return err
	}
	for _, d := range setup.Dirs {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return err
		}
	}
	for name, content := range setup.Files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return err
		}
	}
	for name, target := range setup.Symlinks {
		if err := os.Symlink(target, filepath.Join(dir, filepath.FromSlash(name))); err != nil {
			return err
		}
	}
	return nil
}

// runProgTable runs one family's table.
func runProgTable(t *testing.T, family string) {
	t.Helper()
	cases := progTables[family]
	if len(cases) == 0 {
		t.Fatalf("no table registered for %s", family)
	}
	for _, c := range cases {
		d := catalogueGate(t, c.operator).Decide("run_cmd", map[string]any{"cmd": c.cmd})
		if d.BlastClass != c.class {
			t.Errorf("%s: %q (%s)\n\twant %s\n\tgot  %s %s: %s", family, c.cmd, c.why, c.class, d.Verdict, d.BlastClass, d.Reason)
		}
	}
}

// Every registered program has a table and golden cases, each with both
// verdicts, and every option table builds.
func TestCatalogueComplete(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range catalogue {
		if seen[p.Family] {
			t.Errorf("family %s registered twice", p.Family)
		}
		seen[p.Family] = true
		if p.Summary == "" || len(p.Names)+len(p.Modules) == 0 || (p.Spec == nil && p.Run == nil) {
			t.Errorf("%s: a model needs a summary, names or modules, and an option table or a Run hook", p.Family)
		}
		var allows, blocks int
		for _, c := range progTables[p.Family] {
			if c.class == evidence.ClassLocalExec {
				allows++
			} else {
				blocks++
			}
		}
		if allows == 0 || blocks == 0 {
			t.Errorf("%s: its table has %d ALLOW and %d BLOCK cases; it needs both", p.Family, allows, blocks)
		}
		g, err := readGolden("testdata/catalogue/" + p.Family + ".golden")
		if err != nil {
			t.Errorf("%s: %v", p.Family, err)
			continue
		}
		allows, blocks = 0, 0
		for _, c := range g {
			if c.Verdict == evidence.VerdictAllow {
				allows++
			} else {
				blocks++
			}
		}
		if allows == 0 || blocks == 0 {
			t.Errorf("%s: its golden file has %d ALLOW and %d BLOCK cases; it needs both", p.Family, allows, blocks)
		}
	}
	for family := range progTables {
		if !seen[family] {
			t.Errorf("a table is registered for %s, which is not in the catalogue", family)
		}
	}
	files, _ := filepath.Glob("testdata/catalogue/*.golden")
	for _, f := range files {
		if !seen[strings.TrimSuffix(filepath.Base(f), ".golden")] {
			t.Errorf("%s: no such family in the catalogue", f)
		}
	}
}

// goldenCase is one line of a golden file.
type goldenCase struct {
	Cmd      string           `json:"cmd"`
	Operator bool             `json:"operator,omitempty"`
	Verdict  evidence.Verdict `json:"verdict"`
	Class    evidence.Class   `json:"class"`
	Script   string           `json:"script,omitempty"`
	Reason   string           `json:"reason,omitempty"`
}

func readGolden(path string) ([]goldenCase, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []goldenCase
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var c goldenCase
		dec := json.NewDecoder(strings.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, sc.Err()
}

// TestCatalogueGolden: every golden line gets exactly its recorded
// decision: verdict, class, and the rendered script (ALLOW) or the reason
// (BLOCK), so a change in what an agent is told shows in review.
func TestCatalogueGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/catalogue/*.golden")
	sort.Strings(files)
	if len(files) == 0 {
		t.Fatal("no golden files")
	}
	for _, f := range files {
		cases, err := readGolden(f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		var out bytes.Buffer
		for _, c := range cases {
			d := catalogueGate(t, c.Operator).Decide("run_cmd", map[string]any{"cmd": c.Cmd})
			got := goldenCase{Cmd: c.Cmd, Operator: c.Operator, Verdict: d.Verdict, Class: d.BlastClass}
			if d.Allowed() {
				got.Script = d.Script
			} else {
				got.Reason = d.Reason
			}
			if *updateGolden {
				enc := json.NewEncoder(&out)
				enc.SetEscapeHTML(false)
				if err := enc.Encode(got); err != nil {
					t.Fatal(err)
				}
				continue
			}
			if got != c {
				t.Errorf("%s: %q\n\twant %s %s %q%q\n\tgot  %s %s %q%q", filepath.Base(f), c.Cmd,
					c.Verdict, c.Class, c.Script, c.Reason, got.Verdict, got.Class, got.Script, got.Reason)
			}
		}
		if *updateGolden {
			if err := os.WriteFile(f, out.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// Short names for the classes the tables use.
const (
	cEscape  = evidence.ClassArgPathEscape
	cProt    = evidence.ClassProtectedPath
	cUnsafe  = evidence.ClassUnsafeOption
	cNotList = evidence.ClassNotAllowlisted
	cDeny    = evidence.ClassDestructive
	cComplex = evidence.ClassTooComplex
	cShell   = evidence.ClassShellConstruct
	cRedir   = evidence.ClassRedirect
	cEnv     = evidence.ClassEnvAssignment
	cSubst   = evidence.ClassSubstitution
)

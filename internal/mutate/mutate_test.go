package main

import (
	"bytes"
	"context"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// root is the module root, seen from this package's directory.
const root = "../.."

// TestListIsWellFormed: names, properties, files, packages and filters.
func TestListIsWellFormed(t *testing.T) {
	require.NoError(t, checkList(Mutations))
	for _, m := range Mutations {
		for _, p := range m.Pkgs {
			fi, err := os.Stat(filepath.Join(root, filepath.FromSlash(p)))
			if assert.NoError(t, err, "%s: package %s", m.Name, p) {
				assert.True(t, fi.IsDir(), "%s: %s", m.Name, p)
			}
		}
	}
}

// TestEveryTargetIsInTheCode keeps the list in step with the code without
// running a test: every target occurs exactly once, and every mutant still
// parses. An edit that moves a target fails here, in `go test ./...`,
// before the mutation run would.
func TestEveryTargetIsInTheCode(t *testing.T) {
	for _, m := range Mutations {
		src, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(m.File)))
		if !assert.NoError(t, err, m.Name) {
			continue
		}
		out, st := apply(src, m)
		if !assert.Empty(t, st, "%s: %s in %s: %q — update the entry to the code (the property stays)", m.Name, st, m.File, m.Old) {
			continue
		}
		_, err = parser.ParseFile(token.NewFileSet(), m.File, out, parser.SkipObjectResolution)
		assert.NoError(t, err, "%s: the mutant does not parse", m.Name)
	}
	for _, e := range Equivalents {
		src, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(e.File)))
		if assert.NoError(t, err, e.Name) {
			assert.Equal(t, 1, bytes.Count(src, []byte(e.Target)), "%s: the code this explanation is about moved: %q in %s", e.Name, e.Target, e.File)
		}
		assert.NotEmpty(t, e.Why, e.Name)
	}
}

func TestApply(t *testing.T) {
	src := []byte("a := x == y\nb := x == y && z\n")
	out, st := apply(src, Mutation{Old: "b := x == y", New: "b := x != y"})
	assert.Empty(t, st)
	assert.Equal(t, "a := x == y\nb := x != y && z\n", string(out))
	_, st = apply(src, Mutation{Old: "x == y", New: "x != y"})
	assert.Equal(t, Ambiguous, st)
	_, st = apply(src, Mutation{Old: "q == r", New: "q != r"})
	assert.Equal(t, NotFound, st)
	_, st = apply(src, Mutation{Old: "", New: "x"})
	assert.Equal(t, NotFound, st)
}

func TestCheckListRefusesBadEntries(t *testing.T) {
	good := Mutation{Name: "a-b", Property: "p", File: "pkg/x/y.go", Old: "a", New: "b", Pkgs: []string{"./pkg/x"}, Run: "^T$"}
	require.NoError(t, checkList([]Mutation{good}))
	for name, f := range map[string]func(*Mutation){
		"bad name":     func(m *Mutation) { m.Name = "A B" },
		"no property":  func(m *Mutation) { m.Property = " " },
		"abs file":     func(m *Mutation) { m.File = "/etc/x.go" },
		"outside":      func(m *Mutation) { m.File = "../x.go" },
		"not go":       func(m *Mutation) { m.File = "x.txt" },
		"no change":    func(m *Mutation) { m.New = m.Old },
		"no packages":  func(m *Mutation) { m.Pkgs = nil },
		"package path": func(m *Mutation) { m.Pkgs = []string{"pkg/x"} },
		"no filter":    func(m *Mutation) { m.Run = "" },
		"bad filter":   func(m *Mutation) { m.Run = "(" },
	} {
		m := good
		f(&m)
		assert.Error(t, checkList([]Mutation{m}), name)
	}
	assert.ErrorContains(t, checkList([]Mutation{good, good}), "used twice")
}

func TestClassify(t *testing.T) {
	st, k, _ := classify(goTest{out: "--- FAIL: TestA (0.00s)\n    --- FAIL: TestA/sub (0.00s)\nFAIL\nFAIL\tx\t0.1s\n", failed: true})
	assert.Equal(t, Killed, st)
	assert.Equal(t, []string{"TestA", "TestA/sub"}, k)
	st, _, _ = classify(goTest{out: "ok\tx\t0.1s\n"})
	assert.Equal(t, Survived, st)
	st, _, _ = classify(goTest{out: "# x\n./a.go:3:1: undefined: y\nFAIL\tx [build failed]\n", failed: true})
	assert.Equal(t, NoCompile, st)
	st, _, _ = classify(goTest{out: "", failed: true, timedOut: true})
	assert.Equal(t, TimedOut, st)
	st, k, _ = classify(goTest{out: "panic: test timed out after 1s\nFAIL\tx\t1.0s\n", failed: true})
	assert.Equal(t, Killed, st)
	assert.Equal(t, []string{"(a test panicked)"}, k)
	st, _, _ = classify(goTest{out: "go: cannot find main module\n", failed: true})
	assert.Equal(t, RunnerFailed, st)
}

// TestRunOnAModule runs the real thing on a tiny module: a killed
// mutant, a survivor, a missing target, a mutant that does not compile;
// the source is unchanged afterwards and no temporary file is left.
func TestRunOnAModule(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed: %v", err)
	}
	mod := t.TempDir()
	write := func(name, content string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(mod, name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(mod, name), []byte(content), 0o644))
	}
	write("go.mod", "module example.com/m\n\ngo 1.21\n")
	src := "package m\n\nfunc Max(a, b int) int {\n\tif a > b {\n\t\treturn a\n\t}\n\treturn b\n}\n\nfunc Untested(a int) int { return a + 1 }\n"
	write("m/m.go", src)
	write("m/m_test.go", "package m\n\nimport \"testing\"\n\nfunc TestMax(t *testing.T) {\n\tif Max(1, 2) != 2 || Max(3, 2) != 3 {\n\t\tt.Fatal(\"Max\")\n\t}\n}\n")
	ms := []Mutation{
		{Name: "killed", Property: "p", File: "m/m.go", Old: "if a > b {", New: "if a < b {", Pkgs: []string{"./m"}, Run: "^TestMax$"},
		{Name: "survives", Property: "untested", File: "m/m.go", Old: "return a + 1", New: "return a + 2", Pkgs: []string{"./m"}, Run: "^TestMax$"},
		{Name: "not-found", Property: "p", File: "m/m.go", Old: "if a >= b {", New: "x", Pkgs: []string{"./m"}, Run: "^TestMax$"},
		{Name: "no-compile", Property: "p", File: "m/m.go", Old: "return b\n", New: "return \"b\"\n", Pkgs: []string{"./m"}, Run: "^TestMax$"},
	}
	tmp := t.TempDir()
	var log strings.Builder
	c := &config{root: mod, tmpRoot: tmp, timeout: 2 * time.Minute, goTool: goTool,
		log: func(f string, a ...any) { log.WriteString(strings.TrimSpace(f) + "\n") }}
	outs, err := run(context.Background(), c, ms)
	require.NoError(t, err, log.String())
	require.Len(t, outs, 4)
	assert.Equal(t, Killed, outs[0].Status, outs[0].Detail)
	assert.Equal(t, []string{"TestMax"}, outs[0].Killers)
	assert.Equal(t, Survived, outs[1].Status)
	assert.Equal(t, NotFound, outs[2].Status)
	assert.Equal(t, NoCompile, outs[3].Status, outs[3].Detail)

	got, err := os.ReadFile(filepath.Join(mod, "m", "m.go"))
	require.NoError(t, err)
	assert.Equal(t, src, string(got), "the source is never modified")
	left, _ := os.ReadDir(tmp)
	assert.Empty(t, left, "the mutants are removed")
	assert.Equal(t, 1, report(&strings.Builder{}, &strings.Builder{}, outs, nil, time.Second), "a survivor fails the run")
	assert.Equal(t, 0, report(&strings.Builder{}, &strings.Builder{}, outs[:1], nil, time.Second))

	// A baseline that fails makes every kill meaningless: the run fails.
	write("m/m_test.go", "package m\n\nimport \"testing\"\n\nfunc TestMax(t *testing.T) { t.Fatal(\"always\") }\n")
	_, err = run(context.Background(), c, ms[:1])
	assert.ErrorContains(t, err, "baseline")

	// Over budget: not run is a failure, never a pass.
	write("m/m_test.go", "package m\n\nimport \"testing\"\n\nfunc TestMax(t *testing.T) {}\n")
	c.budget = time.Nanosecond
	outs, err = run(context.Background(), c, ms[:1])
	require.NoError(t, err)
	assert.Equal(t, OverBudget, outs[0].Status)

	// Interrupted: the run stops, and still leaves nothing behind.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c.budget = 0
	_, err = run(ctx, c, ms[:1])
	assert.ErrorIs(t, err, context.Canceled)
	left, _ = os.ReadDir(tmp)
	assert.Empty(t, left)
}

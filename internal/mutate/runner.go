package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
)

// Mutation is one named change to one line (or a few) of the module.
type Mutation struct {
	// Name identifies the mutation ("ledger-hash-prefix-stream").
	Name string
	// Property is what a test must keep true: what breaks if the mutant
	// ships.
	Property string
	// File is the module-relative path of the file changed.
	File string
	// Old is the exact text replaced; it must occur exactly once in File.
	// New replaces it.
	Old, New string
	// Pkgs are the packages whose tests guard the line ("./pkg/evidence").
	Pkgs []string
	// Run is the -run filter for those tests.
	Run string
}

// Status is what happened to a mutant.
type Status string

// The statuses. Only Killed is a success.
const (
	Killed       Status = "KILLED"
	Survived     Status = "SURVIVED"
	NotFound     Status = "ERROR: target not found"
	Ambiguous    Status = "ERROR: target not unique"
	NoCompile    Status = "ERROR: mutant does not compile"
	TimedOut     Status = "ERROR: timed out"
	OverBudget   Status = "ERROR: not run, over budget"
	RunnerFailed Status = "ERROR: could not run"
)

// Outcome is the result of one mutation.
type Outcome struct {
	M        Mutation
	Status   Status
	Killers  []string // the tests that failed, for a kill
	Detail   string   // why, for anything but a kill
	Duration time.Duration
}

// apply returns src with m applied, or the status saying why it cannot be.
func apply(src []byte, m Mutation) ([]byte, Status) {
	switch n := bytes.Count(src, []byte(m.Old)); {
	case m.Old == "" || n == 0:
		return nil, NotFound
	case n > 1:
		return nil, Ambiguous
	}
	return bytes.Replace(src, []byte(m.Old), []byte(m.New), 1), ""
}

// checkList finds what is wrong with a list before anything runs: names
// unique and well formed, a property, a file, a target, packages, a -run
// filter that compiles, and a change that is a change.
func checkList(ms []Mutation) error {
	var errs []error
	seen := map[string]bool{}
	name := regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)
	for i, m := range ms {
		where := fmt.Sprintf("mutation %d (%q)", i, m.Name)
		switch {
		case !name.MatchString(m.Name):
			errs = append(errs, fmt.Errorf("%s: the name must be lower-case words joined by '-'", where))
		case seen[m.Name]:
			errs = append(errs, fmt.Errorf("%s: the name is used twice", where))
		}
		seen[m.Name] = true
		if strings.TrimSpace(m.Property) == "" {
			errs = append(errs, fmt.Errorf("%s: no property: say what the mutation would break", where))
		}
		if m.File == "" || filepath.IsAbs(m.File) || strings.HasPrefix(filepath.Clean(m.File), "..") || !strings.HasSuffix(m.File, ".go") {
			errs = append(errs, fmt.Errorf("%s: file %q must be a module-relative .go file", where, m.File))
		}
		if m.Old == "" || m.Old == m.New {
			errs = append(errs, fmt.Errorf("%s: Old must be non-empty and differ from New", where))
		}
		if len(m.Pkgs) == 0 {
			errs = append(errs, fmt.Errorf("%s: no packages to test", where))
		}
		for _, p := range m.Pkgs {
			if !strings.HasPrefix(p, "./") {
				errs = append(errs, fmt.Errorf("%s: package %q must be module-relative (./pkg/x)", where, p))
			}
		}
		if m.Run == "" {
			errs = append(errs, fmt.Errorf("%s: no -run filter", where))
		} else if _, err := regexp.Compile(m.Run); err != nil {
			errs = append(errs, fmt.Errorf("%s: -run %q: %v", where, m.Run, err))
		}
	}
	return errors.Join(errs...)
}

// mutant writes m applied to its file under dir and returns the overlay
// file that points the go command at it.
func mutant(root, dir string, m Mutation) (string, Status, error) {
	orig := filepath.Join(root, filepath.FromSlash(m.File))
	src, err := os.ReadFile(orig)
	if err != nil {
		return "", RunnerFailed, fmt.Errorf("read %s: %w", m.File, err)
	}
	out, st := apply(src, m)
	if st != "" {
		return "", st, nil
	}
	if _, err := parser.ParseFile(token.NewFileSet(), m.File, out, parser.SkipObjectResolution); err != nil {
		return "", NoCompile, err
	}
	sub := filepath.Join(dir, m.Name)
	if err := os.MkdirAll(sub, 0o755); err != nil {
		return "", RunnerFailed, err
	}
	repl := filepath.Join(sub, filepath.Base(orig))
	if err := os.WriteFile(repl, out, 0o644); err != nil {
		return "", RunnerFailed, err
	}
	ov, err := json.Marshal(map[string]map[string]string{"Replace": {orig: repl}})
	if err != nil {
		return "", RunnerFailed, err
	}
	overlay := filepath.Join(sub, "overlay.json")
	if err := os.WriteFile(overlay, ov, 0o644); err != nil {
		return "", RunnerFailed, err
	}
	return overlay, "", nil
}

// goTest is one `go test` run: its combined output, whether it failed,
// and whether the context ended it.
type goTest struct {
	out      string
	failed   bool
	timedOut bool
}

// config is what a run needs besides the list.
type config struct {
	root        string        // module root
	tmpRoot     string        // where the mutants are written; "" means os.TempDir()
	timeout     time.Duration // per go test run
	budget      time.Duration // the whole run
	verbose     bool
	goTool      string
	log         func(format string, args ...any)
	runOverride func(ctx context.Context, overlay string, pkgs []string, run string) goTest // tests
}

func (c *config) goTest(ctx context.Context, overlay string, pkgs []string, run string) goTest {
	if c.runOverride != nil {
		return c.runOverride(ctx, overlay, pkgs, run)
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout+time.Minute)
	defer cancel()
	// -timeout inside the outer bound: a hanging mutant fails its test
	// binary (a kill, with a stack dump) before the runner gives up on it.
	args := append([]string{"test", "-count=1", "-vet=off", "-timeout", c.timeout.String(), "-run", run}, pkgs...)
	cmd := exec.CommandContext(ctx, c.goTool, args...)
	cmd.Dir = c.root
	cmd.Env = os.Environ()
	if overlay != "" {
		flags := strings.TrimSpace(os.Getenv("GOFLAGS") + " -overlay=" + overlay)
		cmd.Env = append(cmd.Env, "GOFLAGS="+flags)
	}
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	killGroup(cmd)
	cmd.WaitDelay = 10 * time.Second
	err := cmd.Run()
	return goTest{out: buf.String(), failed: err != nil, timedOut: ctx.Err() != nil}
}

var (
	failLine  = regexp.MustCompile(`(?m)^\s*--- FAIL: (\S+)`)
	panicLine = regexp.MustCompile(`(?m)^panic: `)
	buildFail = regexp.MustCompile(`\[(build|setup) failed\]`)
)

// classify turns a mutant's test run into an outcome.
func classify(r goTest) (Status, []string, string) {
	switch {
	case r.timedOut:
		return TimedOut, nil, lastLines(r.out, 15)
	case buildFail.MatchString(r.out):
		return NoCompile, nil, lastLines(r.out, 15)
	case !r.failed:
		return Survived, nil, "every guarding test passed with the mutant in place"
	}
	var killers []string
	for _, m := range failLine.FindAllStringSubmatch(r.out, -1) {
		killers = append(killers, m[1])
	}
	if len(killers) == 0 && panicLine.MatchString(r.out) {
		killers = append(killers, "(a test panicked)")
	}
	if len(killers) == 0 && strings.Contains(r.out, "FAIL") {
		killers = append(killers, "(a test binary failed: "+firstLine(r.out, "FAIL")+")")
	}
	if len(killers) == 0 {
		return RunnerFailed, nil, "go test failed without a failing test:\n" + lastLines(r.out, 15)
	}
	return Killed, dedupe(killers), ""
}

// run applies every mutation in turn. It returns the outcomes, in order.
// The baseline (the guarding tests, unmutated) must pass first.
func run(ctx context.Context, c *config, ms []Mutation) ([]Outcome, error) {
	start := time.Now()
	dir, err := os.MkdirTemp(c.tmpRoot, "deponent-mutate-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	if strings.ContainsAny(dir, " \t\n'\"") {
		// GOFLAGS is split on spaces: the overlay's path must not hold one.
		return nil, fmt.Errorf("the temporary directory %q holds a space or quote; set TMPDIR to a plain path", dir)
	}

	// Targets first: a list out of step with the code fails before anything
	// slow runs.
	var outs []Outcome
	var todo []int
	overlays := map[int]string{}
	for i, m := range ms {
		ov, st, err := mutant(c.root, dir, m)
		if st != "" {
			o := Outcome{M: m, Status: st}
			if err != nil {
				o.Detail = err.Error()
			}
			outs = append(outs, o)
			continue
		}
		overlays[i] = ov
		todo = append(todo, i)
		outs = append(outs, Outcome{M: m})
	}

	// Baseline: the same tests, unmutated, must pass; otherwise a "kill"
	// proves nothing.
	pkgs, filter := union(ms, todo)
	if len(todo) > 0 {
		c.log("baseline: go test -run '%s' %s", filter, strings.Join(pkgs, " "))
		t0 := time.Now()
		b := c.goTest(ctx, "", pkgs, filter)
		if ctx.Err() != nil {
			return outs, ctx.Err()
		}
		if b.failed || b.timedOut {
			return outs, fmt.Errorf("baseline: the guarding tests fail without any mutation, so no kill would mean anything:\n%s", lastLines(b.out, 40))
		}
		c.log("baseline passed in %v", time.Since(t0).Round(time.Second))
	}

	for _, i := range todo {
		m := ms[i]
		if c.budget > 0 && time.Since(start) > c.budget {
			outs[i].Status, outs[i].Detail = OverBudget, fmt.Sprintf("the run had used %v of its %v budget", time.Since(start).Round(time.Second), c.budget)
			continue
		}
		t0 := time.Now()
		r := c.goTest(ctx, overlays[i], m.Pkgs, m.Run)
		if ctx.Err() != nil {
			return outs, ctx.Err()
		}
		o := &outs[i]
		o.Duration = time.Since(t0)
		o.Status, o.Killers, o.Detail = classify(r)
		c.log("%-9s %-38s %5.1fs  %s", shortStatus(o.Status), m.Name, o.Duration.Seconds(), describe(*o))
		if c.verbose && o.Status != Killed {
			c.log("%s", r.out)
		}
	}
	return outs, nil
}

// union is every package and one -run filter matching every mutation's.
func union(ms []Mutation, idx []int) ([]string, string) {
	pk := map[string]bool{}
	var runs []string
	seen := map[string]bool{}
	for _, i := range idx {
		for _, p := range ms[i].Pkgs {
			pk[p] = true
		}
		if !seen[ms[i].Run] {
			seen[ms[i].Run] = true
			runs = append(runs, "(?:"+ms[i].Run+")")
		}
	}
	pkgs := make([]string, 0, len(pk))
	for p := range pk {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	return pkgs, strings.Join(runs, "|")
}

func shortStatus(s Status) string {
	if s == Killed || s == Survived {
		return string(s)
	}
	return "ERROR"
}

func describe(o Outcome) string {
	switch o.Status {
	case Killed:
		k := o.Killers
		if len(k) > 3 {
			k = append(k[:3:3], fmt.Sprintf("+%d more", len(o.Killers)-3))
		}
		return "by " + strings.Join(k, ", ")
	case Survived:
		return "SURVIVED: " + o.M.Property
	}
	d := string(o.Status)
	if o.Detail != "" {
		d += ": " + o.Detail
	}
	return d
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func firstLine(s, containing string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, containing) {
			return strings.TrimSpace(l)
		}
	}
	return ""
}

func dedupe(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

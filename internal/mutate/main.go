package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"
)

func main() {
	os.Exit(realMain(os.Args[1:], os.Stdout, os.Stderr))
}

func realMain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mutate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	list := fs.Bool("list", false, "print the mutations (and the known equivalents) and exit")
	only := fs.String("run", "", "run only the mutations whose name matches this regular expression")
	timeout := fs.Duration("timeout", 4*time.Minute, "bound on each mutant's go test run")
	budget := fs.Duration("budget", 10*time.Minute, "bound on the whole run; mutations not run in time fail it (0: no bound)")
	verbose := fs.Bool("v", false, "print the go test output of every mutant that was not killed")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "mutate: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	ms := Mutations
	if err := checkList(ms); err != nil {
		fmt.Fprintf(stderr, "mutate: the list is malformed:\n%v\n", err)
		return 1
	}
	if *only != "" {
		re, err := regexp.Compile(*only)
		if err != nil {
			fmt.Fprintf(stderr, "mutate: -run: %v\n", err)
			return 2
		}
		var sel []Mutation
		for _, m := range ms {
			if re.MatchString(m.Name) {
				sel = append(sel, m)
			}
		}
		if len(sel) == 0 {
			fmt.Fprintf(stderr, "mutate: -run %q matches no mutation (see -list)\n", *only)
			return 2
		}
		ms = sel
	}
	if *list {
		printList(stdout, ms)
		return 0
	}
	root, err := moduleRoot()
	if err != nil {
		fmt.Fprintf(stderr, "mutate: %v\n", err)
		return 1
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		fmt.Fprintf(stderr, "mutate: the go command is not on PATH: %v\n", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	c := &config{root: root, timeout: *timeout, budget: *budget, verbose: *verbose, goTool: goTool,
		log: func(format string, a ...any) { fmt.Fprintf(stdout, format+"\n", a...) }}
	fmt.Fprintf(stdout, "mutate: %d mutation(s) in %s; each runs its guarding tests with the mutant overlaid (no file is changed)\n", len(ms), root)
	start := time.Now()
	outs, err := run(ctx, c, ms)
	if errors.Is(err, context.Canceled) {
		fmt.Fprintln(stderr, "mutate: interrupted; nothing in the tree was changed")
		return 130
	}
	return report(stdout, stderr, outs, err, time.Since(start))
}

// report prints the summary and returns the exit status.
func report(stdout, stderr io.Writer, outs []Outcome, err error, took time.Duration) int {
	killed := 0
	var bad []Outcome
	for _, o := range outs {
		if o.Status == Killed {
			killed++
		} else if o.Status != "" {
			bad = append(bad, o)
		}
	}
	fmt.Fprintf(stdout, "mutate: %d of %d killed in %v\n", killed, len(outs), took.Round(time.Second))
	for _, o := range bad {
		fmt.Fprintf(stderr, "mutate: %s (%s): %s\n", o.M.Name, o.M.File, describe(o))
	}
	if err != nil {
		fmt.Fprintf(stderr, "mutate: %v\n", err)
		return 1
	}
	if len(bad) > 0 || killed != len(outs) {
		return 1
	}
	return 0
}

func printList(w io.Writer, ms []Mutation) {
	for _, m := range ms {
		fmt.Fprintf(w, "%s\n  file:     %s\n  protects: %s\n  tests:    go test -run '%s' %s\n",
			m.Name, m.File, m.Property, m.Run, strings.Join(m.Pkgs, " "))
	}
	fmt.Fprintf(w, "\nKnown equivalent mutations (not run; each property is covered as said):\n")
	for _, e := range Equivalents {
		fmt.Fprintf(w, "%s\n  file:     %s\n  change:   %s\n  why:      %s\n", e.Name, e.File, e.Change, e.Why)
	}
}

// moduleRoot is the directory of the go.mod governing the working
// directory.
func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %v", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", errors.New("not inside a Go module: run it from the deponent-action module")
	}
	return filepath.Dir(mod), nil
}

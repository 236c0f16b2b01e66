package gate

// The option oracle: the gate's reading of a command line, compared with
// what the real program does with the same argv.
//
// For a program that is installed here (GNU grep, sed, find, coreutils,
// git), a generator builds an argument list from the program's own
// vocabulary — options long and short, abbreviated, clustered, glued, with
// and without values, permuted after operands, "--" — and names that do
// not exist (w1 … w6). The real program runs with that argv in an empty
// directory, stdin closed, a minimal environment and a time limit; every
// name it reports it could not open, and every file it creates, is a word
// it treated as a path (a second run, where every name exists, tells
// whether it accepted the options at all). The gate's reading of the same words must have
// checked each of them as a path (and as one it may write, for the ones
// created). When the gate refuses the list as one the program would reject
// (an unknown option, an ambiguous prefix, a missing value), the program
// must reject it too: otherwise the model is missing something.
//
// Generation is deterministic from a seed; the seeds live in
// testdata/fuzz/FuzzOptionOracle, so `go test` replays exactly them, and
// `go test -fuzz FuzzOptionOracle` looks for more. The vocabulary holds
// no option that runs programs or names paths outside the directory, so
// nothing the real program does can leave it.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
)

// oracleOpt is one option of a vocabulary: its spellings and how to make
// a value for it.
type oracleOpt struct {
	spellings []string // "-e", "--regexp", "--rege" …
	value     string   // "" none, "num", "word" (a w# name), "pat", or a fixed value
	glue      bool     // the value may be glued ("-A3", "--regexp=x")
	sep       bool     // the value may be the next word
}

type oracleProg struct {
	name     string
	version  []string // argv that prints a version naming GNU (or git)
	opts     []oracleOpt
	pre      []string // words always first (a subcommand)
	operands []string // operand kinds to draw from: "word", "pat", "num", "dash"
	setup    func(dir string) error
}

func o(value string, spellings ...string) oracleOpt {
	return oracleOpt{spellings: spellings, value: value, glue: value != "", sep: value != ""}
}

func oGlued(value string, spellings ...string) oracleOpt {
	return oracleOpt{spellings: spellings, value: value, glue: true}
}

var oraclePrograms = []oracleProg{
	{name: "grep", version: []string{"--version"}, operands: []string{"pat", "word", "word"}, opts: []oracleOpt{
		o("", "-i", "-n", "-r", "-v", "-c", "-l", "-w", "-x", "-E", "-F", "-H", "-h", "-s", "-q", "-o"),
		o("pat", "-e", "--regexp", "--rege", "--regex", "--reg", "--re"),
		o("word", "-f", "--file", "--fil", "--exclude-from", "--exclude-fr"),
		o("num", "-A", "-B", "-C", "-m", "--after-context", "--after", "--context", "--max-count"),
		o("pat", "--include", "--exclude", "--exclude-dir", "--excl", "--inc"),
		o("", "--ignore-case", "--ignore", "--line-number", "--line", "--invert", "--count", "--fi", "--files-with", "--col", "--colour", "-5", "-25"),
		oGlued("always", "--color", "--colo"),
	}},
	{name: "sed", version: []string{"--version"}, operands: []string{"script", "word", "word"}, opts: []oracleOpt{
		o("", "-n", "-E", "-r", "-s", "-u", "-z", "--quiet", "--qui", "--silent", "--posix", "--debug", "--separate", "--sep"),
		o("script", "-e", "--expression", "--expr", "--ex"),
		oGlued(".bak", "-i", "--in-place", "--in"),
		o("", "-i", "--in-place", "--in-pl"),
		o("num", "-l", "--line-length", "--line"),
	}},
	{name: "sort", version: []string{"--version"}, operands: []string{"word", "word"}, opts: []oracleOpt{
		o("", "-b", "-d", "-f", "-g", "-n", "-r", "-u", "-s", "-z", "--reverse", "--rev", "--unique", "--uni", "--numeric-sort", "--num"),
		o("word", "-o", "--output", "--out", "--outp", "--random-source", "--random-s"),
		o("1", "-k", "--key", "--ke"),
		o(",", "-t", "--field-separator", "--field"),
		oGlued("quiet", "--check", "--chec"),
	}},
	{name: "head", version: []string{"--version"}, operands: []string{"word", "word"}, opts: []oracleOpt{
		o("num", "-n", "-c", "--lines", "--lin", "--bytes", "--by"),
		o("", "-q", "-v", "-z", "--quiet", "--verbose", "--verb", "-5"),
	}},
	{name: "tail", version: []string{"--version"}, operands: []string{"word", "word"}, opts: []oracleOpt{
		o("num", "-n", "-c", "--lines", "--li", "--bytes"),
		o("", "-q", "-v", "-z", "--quiet", "--silent", "--sil"),
	}},
	{name: "wc", version: []string{"--version"}, operands: []string{"word", "word"}, opts: []oracleOpt{
		o("", "-c", "-m", "-l", "-L", "-w", "--bytes", "--by", "--chars", "--lines", "--li", "--words", "--wo", "--max-line-length", "--max"),
	}},
	{name: "cat", version: []string{"--version"}, operands: []string{"word", "word", "dash"}, opts: []oracleOpt{
		o("", "-A", "-b", "-e", "-E", "-n", "-s", "-t", "-T", "-u", "-v", "--show-all", "--show-a", "--number", "--squeeze", "--show-tabs"),
	}},
	{name: "uniq", version: []string{"--version"}, operands: []string{"word", "word"}, opts: []oracleOpt{
		o("", "-c", "-d", "-D", "-i", "-u", "-z", "--count", "--cou", "--repeated", "--rep", "--ignore-case", "--ign"),
		o("num", "-f", "-s", "-w", "--skip-fields", "--skip-c", "--check-chars"),
	}},
	{name: "ls", version: []string{"--version"}, operands: []string{"word", "word"}, opts: []oracleOpt{
		o("", "-a", "-l", "-d", "-1", "-R", "-S", "-t", "-r", "--all", "--al", "--directory", "--dir", "--recursive", "--rec"),
		o("pat", "-I", "--ignore", "--ign", "--hide"),
	}},
	{name: "diff", version: []string{"--version"}, operands: []string{"word", "word"}, opts: []oracleOpt{
		o("", "-u", "-q", "-r", "-N", "-i", "-w", "-b", "--brief", "--bri", "--recursive", "--new-file", "--new"),
		o("word", "--from-file", "--from", "--to-file", "--to", "-X", "--exclude-from", "--exclude-f"),
		o("pat", "-x", "--exclude", "-I", "--ignore-matching-lines", "--ignore-m"),
		o("num", "-U", "--unified", "--unif"),
	}},
	{name: "touch", version: []string{"--version"}, operands: []string{"word", "word"}, opts: []oracleOpt{
		o("", "-a", "-c", "-m", "-h", "--no-create", "--no-c", "--no-dereference", "--no-d"),
		o("word", "-r", "--reference", "--ref"),
	}},
	{name: "mkdir", version: []string{"--version"}, operands: []string{"word", "word"}, opts: []oracleOpt{
		o("", "-p", "-v", "--parents", "--par", "--verbose", "--verb"),
		o("755", "-m", "--mode", "--mo"),
	}},
	{name: "cp", version: []string{"--version"}, operands: []string{"word", "word", "word"}, opts: []oracleOpt{
		o("", "-r", "-R", "-f", "-n", "-p", "-v", "-T", "--recursive", "--rec", "--no-target-directory", "--no-target", "--force", "--forc"),
		o("word", "-t", "--target-directory", "--target"),
	}},
	{name: "mv", version: []string{"--version"}, operands: []string{"word", "word", "word"}, opts: []oracleOpt{
		o("", "-f", "-n", "-v", "-T", "--force", "--no-clobber", "--no-cl", "--verbose"),
		o("word", "-t", "--target-directory", "--targ"),
	}},
	{name: "rm", version: []string{"--version"}, operands: []string{"word", "word"}, opts: []oracleOpt{
		o("", "-f", "-r", "-R", "-d", "-v", "--force", "--recursive", "--recu", "--dir", "--verbose", "--verb"),
	}},
	{name: "find", version: []string{"--version"}, operands: []string{"word"}, opts: nil},
	{name: "git", version: []string{"--version"}, pre: []string{"log"}, operands: []string{"word", "dashdash"}, opts: []oracleOpt{
		o("", "--oneline", "--stat", "-p", "--all", "--reverse", "--no-merges"),
		oGlued("word", "--output"),
		o("word", "-O"),
		o("pat", "--grep", "--author"),
		o("num", "-n", "--max-count"),
	}, setup: gitOracleRepo},
	{name: "git", version: []string{"--version"}, pre: []string{"grep"}, operands: []string{"pat", "word", "dashdash"}, opts: []oracleOpt{
		o("", "-n", "-i", "-l", "-c", "-w", "--line-number", "--line-n", "--ignore-case", "--count", "--untracked", "--no-index"),
		o("pat", "-e"),
		o("word", "-f"),
		o("num", "-A", "-B", "-C", "--max-depth", "--max-d", "--context", "--cont"),
	}, setup: gitOracleRepo},
}

func gitOracleRepo(dir string) error {
	for _, args := range [][]string{{"init", "-q"}, {"-c", "user.email=o@example.com", "-c", "user.name=o", "commit", "-q", "--allow-empty", "-m", "x"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = oracleEnv(dir)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %v: %v: %s", args, err, out)
		}
	}
	return nil
}

var oracleWords = []string{"w1", "w2", "w3", "w4", "w5", "w6"}

// generate builds one argv for p from seed.
func (p *oracleProg) generate(seed uint64) []string {
	r := rand.New(rand.NewSource(int64(seed)))
	value := func(kind string) string {
		switch kind {
		case "num":
			return fmt.Sprint(r.Intn(5))
		case "word":
			return oracleWords[r.Intn(len(oracleWords))]
		case "pat":
			return []string{"a", "x", "w9", "pat"}[r.Intn(4)]
		case "script":
			return []string{"p", "1p", "s/a/b/", "$d", "2q"}[r.Intn(5)]
		}
		return kind
	}
	args := append([]string(nil), p.pre...)
	if p.name == "find" {
		return append(args, findOracleArgs(r)...)
	}
	n := 1 + r.Intn(6)
	for i := 0; i < n; i++ {
		switch k := r.Intn(20); {
		case k < 12 && len(p.opts) > 0:
			opt := p.opts[r.Intn(len(p.opts))]
			sp := opt.spellings[r.Intn(len(opt.spellings))]
			switch {
			case opt.value == "":
				// Sometimes cluster two short flags.
				if len(sp) == 2 && sp[0] == '-' && sp[1] != '-' && r.Intn(3) == 0 {
					other := opt.spellings[r.Intn(len(opt.spellings))]
					if len(other) == 2 && other[0] == '-' && other[1] != '-' {
						sp += other[1:]
					}
				}
				args = append(args, sp)
			case opt.glue && (!opt.sep || r.Intn(2) == 0):
				if strings.HasPrefix(sp, "--") {
					args = append(args, sp+"="+value(opt.value))
				} else {
					args = append(args, sp+value(opt.value))
				}
			default:
				args = append(args, sp, value(opt.value))
			}
		case k < 19:
			kind := p.operands[r.Intn(len(p.operands))]
			switch kind {
			case "dash":
				args = append(args, "-")
			case "dashdash":
				args = append(args, "--")
			default:
				args = append(args, value(kind))
			}
		default:
			args = append(args, "--")
		}
	}
	return args
}

func findOracleArgs(r *rand.Rand) []string {
	var args []string
	if r.Intn(3) == 0 {
		args = append(args, []string{"-H", "-P"}[r.Intn(2)])
	}
	for i := r.Intn(3); i > 0; i-- {
		args = append(args, oracleWords[r.Intn(len(oracleWords))])
	}
	for i := r.Intn(4); i > 0; i-- {
		switch r.Intn(6) {
		case 0:
			args = append(args, "-name", "w*")
		case 1:
			args = append(args, "-newer", oracleWords[r.Intn(len(oracleWords))])
		case 2:
			args = append(args, "-type", "f")
		case 3:
			args = append(args, "-maxdepth", "1")
		case 4:
			args = append(args, "-samefile", oracleWords[r.Intn(len(oracleWords))])
		default:
			args = append(args, "-print")
		}
	}
	return args
}

func oracleEnv(dir string) []string {
	return []string{"PATH=/usr/bin:/bin", "HOME=" + dir, "LC_ALL=C", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_PAGER=cat", "PAGER=cat"}
}

// realOutcome is what the real program did with an argv.
type realOutcome struct {
	rejected bool            // a usage error: the program refused the options
	opened   map[string]bool // names it reported it could not open
	created  map[string]bool // files it created
	stderr   string
}

var (
	usageError = regexp.MustCompile(`(?i)invalid option|unrecognized option|unrecognised option|ambiguous|requires an argument|` +
		`missing operand|extra operand|invalid argument|invalid number|invalid context length|invalid line count|` +
		`invalid byte|unknown option|unknown predicate|paths must precede|usage:|not a valid|expected|error: option|` +
		`unknown switch|invalid.*value|can't find label|unknown command|unterminated|missing command|must be|` +
		`cannot combine|doesn't allow an argument|invalid field|unknown revision|bad revision|needs a value|` +
		`invalid mode|invalid time|failed to get attributes|target .* is not a directory|omitting directory|` +
		`cannot overwrite|are the same file|is not a directory|no files given|fatal:`)
	// A name the program could not open, quoted or bare, never part of a
	// longer word ("--target-directory=w6" is one name, not w6).
	fileError = regexp.MustCompile(`(?m)(?:^|[ '"\x60])(w[0-9])['"]?: (?:No such file or directory|not found)|` +
		`(?:cannot stat|cannot access|can't read|cannot open|cannot read:|failed to access|couldn't open file) ['"\x60]?(w[0-9])(?:['"]|:|$)`)
)

func runReal(t *testing.T, bin, dir string, argv []string) realOutcome {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	before := listDir(dir)
	cmd := exec.CommandContext(ctx, bin, argv...)
	cmd.Dir = dir
	cmd.Env = oracleEnv(dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%s %q: timed out", bin, argv)
	}
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		t.Fatalf("%s %q: %v", bin, argv, err)
	}
	out := realOutcome{opened: map[string]bool{}, created: map[string]bool{}, stderr: stderr.String()}
	out.rejected = usageError.MatchString(out.stderr)
	for _, m := range fileError.FindAllStringSubmatch(out.stderr, -1) {
		for _, g := range m[1:] {
			if g != "" {
				out.opened[g] = true
			}
		}
	}
	for name := range listDir(dir) {
		if !before[name] {
			out.created[name] = true
		}
	}
	return out
}

func listDir(dir string) map[string]bool {
	out := map[string]bool{}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		out[e.Name()] = true
	}
	return out
}

// gateReading is the gate's reading of head+argv: refused as a list the
// program would reject, refused otherwise, or the names it checked as
// paths (and, among them, the ones it may write).
type gateReading struct {
	invalid  bool
	refused  string
	paths    map[string]bool
	writable map[string]bool
}

func readWithGate(g *Gate, head string, argv []string) gateReading {
	var b strings.Builder
	b = strings.Builder{}
	b.WriteString(head)
	for _, a := range argv {
		b.WriteByte(' ')
		b.Write(appendShellQuoted(nil, a))
	}
	s, v := parseCommand(b.String())
	if v != nil {
		return gateReading{refused: v.reason}
	}
	plans := make([]cmdPlan, len(s.cmds))
	g.prepare(s, plans)
	p := &plans[0]
	if p.early != nil {
		r := gateReading{refused: p.early.reason}
		r.invalid = strings.Contains(p.early.reason, "unknown option") || strings.Contains(p.early.reason, "ambiguous abbreviation") ||
			strings.Contains(p.early.reason, "needs a value") || strings.Contains(p.early.reason, "takes no value") ||
			strings.Contains(p.early.reason, "not in the gate's model") || strings.Contains(p.early.reason, "comes after the expression")
		return r
	}
	r := gateReading{paths: map[string]bool{}, writable: map[string]bool{}}
	for _, c := range p.inv.checks {
		if c.role.isPath() {
			r.paths[c.val] = true
			if c.role == roleWrite || c.role == roleDelete || c.role == roleArg {
				r.writable[c.val] = true
			}
		}
	}
	return r
}

func oracleProgram(t *testing.T, p *oracleProg) string {
	t.Helper()
	bin, err := exec.LookPath(p.name)
	if err != nil {
		t.Skipf("SKIPPING: %s is not installed here; the option oracle needs the real program", p.name)
	}
	out, err := exec.Command(bin, p.version...).CombinedOutput()
	if err != nil || !(bytes.Contains(out, []byte("GNU")) || p.name == "git") {
		t.Skipf("SKIPPING: %s is not the GNU program the gate's primary reading models (%s)", bin, bytes.TrimSpace(out))
	}
	return bin
}

func checkOracle(t *testing.T, progIndex uint8, seed uint64) {
	p := &oraclePrograms[int(progIndex)%len(oraclePrograms)]
	bin := oracleProgram(t, p)
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if p.setup != nil {
		if err := p.setup(dir); err != nil {
			t.Fatal(err)
		}
	}
	pol, err := ParsePolicy([]byte(catalogueOperatorPolicy))
	if err != nil {
		t.Fatal(err)
	}
	g, err := NewGate(dir, pol)
	if err != nil {
		t.Fatal(err)
	}
	argv := p.generate(seed)
	gr := readWithGate(g, p.name, argv)
	real := runReal(t, bin, dir, argv)
	// Whether the program accepts the options is read from a second run in
	// a directory where every name exists: a program that reads a file
	// while parsing its options (grep -f) would otherwise stop at the
	// missing file before it met a bad option.
	full := t.TempDir()
	if p.setup != nil {
		if err := p.setup(full); err != nil {
			t.Fatal(err)
		}
	}
	for _, w := range oracleWords {
		if err := os.WriteFile(filepath.Join(full, w), []byte("a\nx\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	real.rejected = runReal(t, bin, full, argv).rejected
	label := fmt.Sprintf("%s %q (seed %d)", p.name, argv, seed)
	switch {
	case gr.invalid:
		if !real.rejected {
			t.Errorf("%s: the gate refuses it as an argument list the program would reject (%s), but the program accepted it (stderr %q)",
				label, gr.refused, real.stderr)
		}
	case gr.refused != "":
		// Refused for another reason (a path or protection rule): nothing
		// to compare about options.
	default:
		var missing []string
		for name := range real.opened {
			if !gr.paths[name] {
				missing = append(missing, name+" (opened)")
			}
		}
		for name := range real.created {
			if !gr.writable[name] {
				missing = append(missing, name+" (created)")
			}
		}
		sort.Strings(missing)
		if len(missing) > 0 {
			t.Errorf("%s: the program used %v as paths, but the gate did not check them as such (it checked %v; stderr %q)",
				label, missing, keys(gr.paths), real.stderr)
		}
	}
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// FuzzOptionOracle: see the file comment. The corpus in
// testdata/fuzz/FuzzOptionOracle holds the seeds `go test` replays.
func FuzzOptionOracle(f *testing.F) {
	for i := range oraclePrograms {
		f.Add(uint8(i), uint64(1))
	}
	f.Fuzz(func(t *testing.T, prog uint8, seed uint64) {
		checkOracle(t, prog, seed)
	})
}

// TestOptionOracleSweep replays a fixed, larger sweep of seeds per
// program (deterministic; bounded to a few hundred runs of the real
// programs, 20 per program). It is skipped with -short.
func TestOptionOracleSweep(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIPPING: the option oracle sweep runs real programs; -short skips it")
	}
	for i := range oraclePrograms {
		p := &oraclePrograms[i]
		t.Run(p.name+"-"+strings.Join(p.pre, "-"), func(t *testing.T) {
			for seed := uint64(100); seed < 120; seed++ {
				checkOracle(t, uint8(i), seed)
			}
		})
	}
}

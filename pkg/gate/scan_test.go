package gate

import (
	"strings"
	"testing"
)

var testSpec = (&optSpec{Name: "t", Permute: true, Prefix: true, Alt: true, DigitOpts: true, Opts: []Opt{
	flag("a", "all"), flag("b"), val(roleText, "e", "regexp"), val(roleRead, "f", "file"),
	optval(roleText, "i", "in-place"), flag("", "color", "colour"), flag("", "number"), flag("", "number-nonblank"),
	altArg(val(roleText, "C", "context"), optArg), Opt{Long: []string{"cov"}, Arg: optNext, Role: roleRead},
}}).build()

// describe renders a scan as "opts | operands" for compact expectations:
// each option as its resolved name and "=value" when it took one.
func describe(r scanResult, words []string) string {
	if r.invalid != "" {
		return "invalid: " + r.invalid
	}
	var parts []string
	for _, o := range r.opts {
		s := o.name
		if v, ok := o.value(words); ok {
			s += "=" + v
		}
		parts = append(parts, s)
	}
	var ops []string
	for _, i := range r.operands {
		ops = append(ops, words[i])
	}
	return strings.Join(parts, " ") + " | " + strings.Join(ops, " ")
}

func TestScanGetoptLong(t *testing.T) {
	tests := []struct {
		args string
		want string // GNU reading
		alt  string // BSD reading; "" when the same
	}{
		{"-ab x", "-a -b | x", ""},
		{"-abe pat x", "-a -b -e=pat | x", ""},
		{"-epat x", "-e=pat | x", ""},
		{"-e -x y", "-e=-x | y", ""},
		{"--regexp=pat x", "--regexp=pat | x", ""},
		{"--regexp pat x", "--regexp=pat | x", ""},
		{"--rege=pat x", "--regexp=pat | x", ""},
		{"--r=pat x", "--regexp=pat | x", ""},
		{"--col x", "--color | x", ""},
		{"--colo x", "--color | x", ""},
		{"--num x", "invalid: '--num' is an ambiguous abbreviation (it could be --number, --number-nonblank)", ""},
		{"--number x", "--number | x", ""},
		{"--frob x", "invalid: unknown option '--frob'", ""},
		{"-z", "invalid: unknown option '-z'", ""},
		{"-e", "invalid: option '-e' needs a value", ""},
		{"--all=1", "invalid: option '--all' takes no value", ""},
		{"-i.bak x", "-i=.bak | x", ""},
		{"-i x", "-i | x", ""},
		{"--in-place=.bak x", "--in-place=.bak | x", ""},
		{"--in-place .bak x", "--in-place | .bak x", ""},
		{"x -a y", "-a | x y", " | x -a y"},
		{"x -- -a", " | x -a", " | x -- -a"},
		{"-- -a x", " | -a x", ""},
		{"- -a", "-a | -", " | - -a"},
		{"-C 3 x", "-C=3 | x", "-C | 3 x"},
		{"-C3 x", "-C=3 | x", ""},
		{"-5 x", "-5 | x", ""},
		{"-a5b x", "-a -5 -b | x", ""},
		{"--cov src x", "--cov=src | x", ""},
		{"--cov -a x", "--cov -a | x", ""},
		{"--cov", "--cov | ", ""},
		{"--cov=src", "--cov=src | ", ""},
	}
	for _, tt := range tests {
		words := strings.Fields(tt.args)
		if got := describe(scanArgs(testSpec, words, false), words); got != tt.want {
			t.Errorf("%q: got %q, want %q", tt.args, got, tt.want)
		}
		alt := tt.alt
		if alt == "" {
			alt = tt.want
		}
		if got := describe(scanArgs(testSpec, words, true), words); got != alt {
			t.Errorf("%q (BSD reading): got %q, want %q", tt.args, got, alt)
		}
	}
}

func TestScanStyles(t *testing.T) {
	exact := (&optSpec{Name: "exact", Permute: true, Opts: []Opt{flag("", "check"), val(roleText, "l", "line-length")}}).build()
	argparse := (&optSpec{Name: "ap", Permute: true, Prefix: true, Style: styleArgparse, Opts: []Opt{val(roleText, "o"), flag("v")}}).build()
	gof := (&optSpec{Name: "go", Style: styleGoFlag, Permute: false, Opts: []Opt{flag("", "v"), val(roleText, "", "run"), val(roleWrite, "", "o")}}).build()
	neg := (&optSpec{Name: "neg", Permute: true, Prefix: true, Negate: true, Opts: []Opt{flag("", "strict"), flag("", "no-implicit"), val(roleText, "", "cache")}}).build()
	tests := []struct {
		spec *optSpec
		args string
		want string
	}{
		{exact, "--chec x", "invalid: unknown option '--chec'"},
		{exact, "--check -l100 x", "--check -l=100 | x"},
		{argparse, "-o=x -vv y", "-o=x -v -v | y"},
		{argparse, "-ox y", "-o=x | y"},
		{gof, "-v -run X ./...", "-v -run=X | ./..."},
		{gof, "--run=X -o out .", "-run=X -o=out | ."},
		{gof, "-v=true .", "-v=true | ."},
		{gof, "-ru X", "invalid: unknown option '-ru'"},
		{gof, ". -v", " | . -v"},
		{neg, "--no-strict x", "--no-strict | x"},
		{neg, "--implicit x", "--implicit | x"},
		{neg, "--no-str x", "--no-strict | x"},
		{neg, "--no-cache x", "invalid: unknown option '--no-cache'"},
	}
	for _, tt := range tests {
		words := strings.Fields(tt.args)
		if got := describe(scanArgs(tt.spec, words, false), words); got != tt.want {
			t.Errorf("%s %q: got %q, want %q", tt.spec.Name, tt.args, got, tt.want)
		}
	}
}

func TestScanCaps(t *testing.T) {
	long := []string{"-" + strings.Repeat("a", maxCluster+1)}
	if r := scanArgs(testSpec, long, false); r.invalid == "" {
		t.Error("a cluster over the cap was read")
	}
	many := strings.Fields(strings.Repeat("-a ", maxOptsPerScan+1))
	if r := scanArgs(testSpec, many, false); r.invalid == "" {
		t.Error("more options than the cap were read")
	}
}

// Every option table in the catalogue builds, names its refusals, and
// spells every option so that an agent can be told about it.
func TestCatalogueOptionTables(t *testing.T) {
	for _, p := range catalogue {
		specs := append([]*optSpec{}, p.SubSpecs...)
		if p.Spec != nil {
			specs = append(specs, p.Spec)
		}
		for _, s := range specs {
			for i := range s.Opts {
				o := &s.Opts[i]
				if o.Refuse != "" && (o.Instead == "" || o.Class == "") {
					t.Errorf("%s %s: a refused option needs what to do instead and a class", s.Name, o.spelling())
				}
				if o.Arg == noArg && o.Role != roleNone {
					t.Errorf("%s %s: a flag cannot have a value role", s.Name, o.spelling())
				}
				if o.Arg != noArg && o.Role == roleNone {
					t.Errorf("%s %s: an option with a value needs the value's role", s.Name, o.spelling())
				}
			}
		}
	}
	for _, sub := range gitSubs {
		if sub.spec == nil {
			t.Error("a git subcommand without a table")
		}
	}
}

// FuzzScanners: the option scanner and the sed and awk script readers take
// agent text; any input yields an answer, never a panic, and a scan's
// indices stay inside the argument list, operands in order, each word
// either an option, an option's value or an operand.
func FuzzScanners(f *testing.F) {
	for _, s := range []string{"-rn --rege=x -- a b", "--in-place=.bak -i x", "s/[/]/x/;w out\n:a;N;$!ba", "{print | \"sh\"}",
		"-C3 --colo -5 x", "/a|b/ {getline l < \"f\"}", "-e -e -- -", "1e id", "y/abc/xyz/;a\\\ntext"} {
		f.Add(s)
	}
	specs := []*optSpec{testSpec, grepSpec, sedSpec, pytestSpec, mypySpec, ruffCheckSpec, gitGlobalSpec, goSubs["test"]}
	f.Fuzz(func(t *testing.T, s string) {
		readSedScript(s, false)
		readSedScript(s, true)
		checkAwkProgram(s)
		words := strings.Fields(s)
		for _, spec := range specs {
			for _, alt := range []bool{false, true} {
				r := scanArgs(spec, words, alt)
				if r.invalid != "" {
					continue
				}
				seen := make([]int, len(words))
				last := -1
				for _, i := range r.operands {
					if i <= last || i >= len(words) {
						t.Fatalf("%s %q: operand index %d out of order or range", spec.Name, words, i)
					}
					last = i
					seen[i]++
				}
				for _, o := range r.opts {
					if o.word < 0 || o.word >= len(words) || o.val >= len(words) || (o.val >= 0 && o.off > len(words[o.val])) {
						t.Fatalf("%s %q: option %+v out of range", spec.Name, words, o)
					}
					if o.val >= 0 && o.val != o.word {
						seen[o.val]++
					}
				}
				for i, n := range seen {
					if n > 1 {
						t.Fatalf("%s %q: word %d read %d times", spec.Name, words, i, n)
					}
				}
			}
		}
	})
}

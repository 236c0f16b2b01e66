package gate

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"mvdan.cc/sh/v3/syntax"

	"github.com/deponent-dev/deponent-action/pkg/evidence"
)

func words(s *shScript, i int) []string {
	out := make([]string, 0, len(s.cmds[i].words))
	for _, w := range s.cmds[i].words {
		out = append(out, w.val)
	}
	return out
}

func TestShellParseShapes(t *testing.T) {
	tests := []struct {
		in    string
		words [][]string
		ops   []string
	}{
		{"ls -la", [][]string{{"ls", "-la"}}, nil},
		{"echo a && echo b || echo c", [][]string{{"echo", "a"}, {"echo", "b"}, {"echo", "c"}}, []string{"&&", "||"}},
		{"a | b && c | d", [][]string{{"a"}, {"b"}, {"c"}, {"d"}}, []string{"|", "&&", "|"}},
		{"a; b\nc", [][]string{{"a"}, {"b"}, {"c"}}, []string{";", ";"}},
		{"ls # comment $(x)", [][]string{{"ls"}}, nil},
		{"# c\nls\n# d", [][]string{{"ls"}}, nil},
		{`echo 'a b' "c d" e\ f`, [][]string{{"echo", "a b", "c d", "e f"}}, nil},
		{`echo "a\"b" "a\\b" "a\b" 'a\b'`, [][]string{{"echo", `a"b`, `a\b`, `a\b`, `a\b`}}, nil},
		{"echo {a,b} a#b", [][]string{{"echo", "{a,b}", "a#b"}}, nil},
		{"cu\\\nrl x", [][]string{{"curl", "x"}}, nil},
		{`"py"thon3 -V`, [][]string{{"python3", "-V"}}, nil},
		{"ls |\n  wc -l", [][]string{{"ls"}, {"wc", "-l"}}, []string{"|"}},
		{"ls &&\nls", [][]string{{"ls"}, {"ls"}}, []string{"&&"}},
		{"ls;", [][]string{{"ls"}}, nil},
		{"echo ''", [][]string{{"echo", ""}}, nil},
	}
	for _, tt := range tests {
		s, v := parseCommand(tt.in)
		if v != nil {
			t.Errorf("%q: refused: %s %s", tt.in, v.class, v.reason)
			continue
		}
		var got [][]string
		for i := range s.cmds {
			got = append(got, words(s, i))
		}
		if !reflect.DeepEqual(got, tt.words) || !reflect.DeepEqual(s.ops, tt.ops) && len(tt.ops)+len(s.ops) > 0 {
			t.Errorf("%q: got %q ops %q, want %q ops %q", tt.in, got, s.ops, tt.words, tt.ops)
		}
	}
}

func TestShellGlobPatterns(t *testing.T) {
	tests := []struct{ in, val, glob string }{
		{"*.txt", "*.txt", "*.txt"},
		{`\*.txt`, "*.txt", ""},
		{`"*".txt`, "*.txt", ""},
		{`'*'*`, "**", `\**`},
		{"[!a]x", "[!a]x", "[^a]x"},
		{"a-b", "a-b", ""},
		{`"a-b"*`, "a-b*", `a\-b*`},
		{`x\[1\]`, "x[1]", ""},
		{"?", "?", "?"},
	}
	for _, tt := range tests {
		s, v := parseCommand("ls " + tt.in)
		if v != nil {
			t.Fatalf("%q: %s", tt.in, v.reason)
		}
		w := s.cmds[0].words[1]
		if w.val != tt.val || w.glob != tt.glob {
			t.Errorf("%q: got val %q glob %q, want %q %q", tt.in, w.val, w.glob, tt.val, tt.glob)
		}
	}
}

// Every refused construct, at the parser level, with its class.
func TestShellRefusals(t *testing.T) {
	tests := []struct {
		in    string
		class evidence.Class
	}{
		{"echo $x", evidence.ClassSubstitution},
		{"echo ${x}", evidence.ClassSubstitution},
		{`echo "$x"`, evidence.ClassSubstitution},
		{`echo "a${x}b"`, evidence.ClassSubstitution},
		{"echo $(id)", evidence.ClassSubstitution},
		{"echo `id`", evidence.ClassSubstitution},
		{"echo $((1))", evidence.ClassSubstitution},
		{"echo $'x'", evidence.ClassSubstitution},
		{`echo $"x"`, evidence.ClassSubstitution},
		{`echo \$x`, evidence.ClassSubstitution},
		{`echo "\$x"`, evidence.ClassSubstitution},
		{"echo \\`x\\`", evidence.ClassSubstitution},
		{"echo ~", evidence.ClassSubstitution},
		{"echo ~/x", evidence.ClassSubstitution},
		{"echo $", evidence.ClassSubstitution},
		{"ls > x", evidence.ClassRedirect},
		{"ls 1>&2", evidence.ClassRedirect},
		{"ls 2>/tmp/x", evidence.ClassRedirect},
		{"ls >/dev/null2", evidence.ClassRedirect},
		{"ls 3>/dev/null", evidence.ClassRedirect},
		{"ls >|/dev/null", evidence.ClassRedirect},
		{"ls 2>&1-", evidence.ClassRedirect},
		{"ls <x", evidence.ClassRedirect},
		{"cat <<E\nx\nE", evidence.ClassRedirect},
		{"ls |& cat", evidence.ClassRedirect},
		{"cat <<<x", evidence.ClassRedirect},
		{"ls &", evidence.ClassBackground},
		{"ls & ls", evidence.ClassBackground},
		{"(ls)", evidence.ClassShellConstruct},
		{"{ ls; }", evidence.ClassShellConstruct},
		{"! ls", evidence.ClassShellConstruct},
		{"f() { ls; }", evidence.ClassShellConstruct},
		{"if ls; then ls; fi", evidence.ClassShellConstruct},
		{"while ls; do ls; done", evidence.ClassShellConstruct},
		{"for a in b; do ls; done", evidence.ClassShellConstruct},
		{"case a in a) ls;; esac", evidence.ClassShellConstruct},
		{"cat <(ls)", evidence.ClassShellConstruct},
		{"A=1 ls", evidence.ClassEnvAssignment},
		{"PYTHONPATH=src", evidence.ClassEnvAssignment},
		{"A=1", evidence.ClassEnvAssignment},
		{"ls &&", evidence.ClassUnparsable},
		{"echo 'x", evidence.ClassUnparsable},
		{"ls\x00", evidence.ClassUnparsable},
		{"ls\xff", evidence.ClassUnparsable},
		{"ls\u202e", evidence.ClassDeceptiveChar},
		{"ls\r", evidence.ClassDeceptiveChar},
		{strings.Repeat("(", 20), evidence.ClassTooComplex},
		{strings.Repeat("a;", maxSimpleCommands+1), evidence.ClassTooComplex},
	}
	for _, tt := range tests {
		_, v := parseCommand(tt.in)
		if v == nil {
			t.Errorf("%q: accepted, want %s", tt.in, tt.class)
			continue
		}
		if v.class != tt.class {
			t.Errorf("%q: class %s (%s), want %s", tt.in, v.class, v.reason, tt.class)
		}
		if v.reason == "" {
			t.Errorf("%q: empty reason", tt.in)
		}
	}
}

// Parentheses and dollars inside single quotes, or parentheses inside
// double quotes, are text: the nesting guard must not count them.
func TestShellNestingGuardIgnoresQuotedText(t *testing.T) {
	for _, in := range []string{
		`python3 -c "print(((((((((((((((((((((1)))))))))))))))))))))"`,
		`python3 -c 'print($(((((((((((((((((((((1)))))))))))))))))))))'`,
		`echo \(\(\(\(\(\(\(\(\(\(\(\(\(\(\(\(\(\(\(\(`,
		"ls # ((((((((((((((((((((((((((((((((((\necho ok",
	} {
		if n := countNestingOpeners(in); n != 0 {
			t.Errorf("%q: counted %d openers", in, n)
		}
		if _, v := parseCommand(in); v != nil {
			t.Errorf("%q: refused: %s", in, v.reason)
		}
	}
}

// pathologicalInputs are hostile commands just under the size cap. The
// parser alone needs seconds for 64 KiB of "(", which is why the guard
// counts openers first; BenchmarkDecideHostile measures what each costs.
func pathologicalInputs() map[string]string {
	n := maxCommandBytes - 16
	return map[string]string{
		"parens":         strings.Repeat("(", n),
		"parens-spaced":  strings.Repeat("( ", n/2),
		"cmd-subst":      strings.Repeat("$(", n/2),
		"dq-cmd-subst":   strings.Repeat(`"$(`, n/3),
		"backquotes":     strings.Repeat("`", n),
		"arith":          "$((" + strings.Repeat("(", n-3),
		"braces":         strings.Repeat("{ ", n/2),
		"ifs":            strings.Repeat("if ", n/3),
		"untils":         strings.Repeat("until ", n/6),
		"param-default":  strings.Repeat("${a:-", n/5),
		"bangs":          strings.Repeat("! ", n/2),
		"and-chain":      strings.Repeat("ls&&", n/4) + "ls",
		"pipe-chain":     strings.Repeat("ls|", n/3) + "ls",
		"newlines":       strings.Repeat("ls\n", n/3),
		"heredocs":       strings.Repeat("<<a\n", n/4),
		"quotes":         strings.Repeat(`"'`, n/2),
		"backslashes":    strings.Repeat(`\`, n),
		"words":          "ls" + strings.Repeat(" a", n/2),
		"globs":          "ls" + strings.Repeat(" *", n/2),
		"one-long-word":  "ls " + strings.Repeat("a/", n/2),
		"long-dash-word": "ls -" + strings.Repeat("a", n),
		// Shapes of the program models and the denylist.
		"many-options":   "ls" + strings.Repeat(" -a", n/3),
		"dotdot-path":    "cat " + strings.Repeat("../", n/3),
		"slashes-quoted": "grep -rn '" + strings.Repeat("a/", n/2-8) + "' .",
		"deny-near-miss": "echo '" + strings.Repeat("cur ", n/4-4) + "'",
		"sed-script":     "sed -n '" + strings.Repeat("p;", n/2-8) + "' x.txt",
		"sed-brackets":   "sed -n 's/[" + strings.Repeat("[:alpha:]", n/9-4) + "]//p' x.txt",
		"find-expr":      "find ." + strings.Repeat(" -name x -o", n/11),
		"git-options":    "git log" + strings.Repeat(" --oneline", n/10-2),
		"cd-chain":       strings.Repeat("cd src && ", n/10-1) + "ls",
		"assignments":    strings.Repeat("CI=1 ", n/5-2) + "ls",
		"long-option":    "grep --" + strings.Repeat("r", n-16) + " x",
		"eq-word":        "python3 x.py " + strings.Repeat("a=", n/2-16),
		"glob-one":       "ls " + strings.Repeat("*", n-8),
		"python-cluster": "python3 -" + strings.Repeat("B", n-16),
		"redirects":      "ls" + strings.Repeat(" 2>/dev/null", n/12-1),
		"dollars-dq":     `grep "` + strings.Repeat("a$ ", n/3-4) + `" x.txt`,
	}
}

// Pathological inputs at the size cap get a decision, without a crash or a
// stack overflow (a hang would trip the test binary's timeout).
func TestShellPathologicalInputsDecide(t *testing.T) {
	g := newTestGate(t, nil)
	for name, in := range pathologicalInputs() {
		start := time.Now()
		d := g.Decide("run_cmd", map[string]any{"cmd": in})
		el := time.Since(start) // logged, not asserted: BenchmarkDecideHostile measures it
		if d.Verdict != evidence.VerdictBlock && d.Verdict != evidence.VerdictAllow {
			t.Errorf("%s: verdict %q", name, d.Verdict)
		}
		t.Logf("%-15s %-7v %s %s", name, el.Round(time.Millisecond), d.Verdict, d.BlastClass)
	}
	big := strings.Repeat("a", maxCommandBytes+1)
	if d := g.Decide("run_cmd", map[string]any{"cmd": big}); d.BlastClass != evidence.ClassCommandTooLong {
		t.Errorf("over the cap: %s", d.BlastClass)
	}
}

// scriptWords re-parses a rendered Script and checks it has nothing for a
// shell to interpret: simple commands whose words are single-quoted text.
func scriptWords(t testing.TB, script string) [][]string {
	t.Helper()
	p := syntax.NewParser(syntax.Variant(syntax.LangPOSIX))
	f, err := p.Parse(strings.NewReader(script), "")
	if err != nil {
		t.Fatalf("Script %q does not parse: %v", script, err)
	}
	var out [][]string
	var walk func(st *syntax.Stmt)
	walk = func(st *syntax.Stmt) {
		if st.Negated || st.Background || st.Coprocess {
			t.Fatalf("Script %q: statement with shell semantics", script)
		}
		for _, r := range st.Redirs {
			// Only the fixed forms the gate renders itself.
			var b strings.Builder
			if r.N != nil {
				b.WriteString(r.N.Value)
			}
			b.WriteString(r.Op.String())
			b.WriteString(r.Word.Lit())
			switch b.String() {
			case ">/dev/null", "1>/dev/null", "2>/dev/null", ">>/dev/null", "1>>/dev/null", "2>>/dev/null", "2>&1":
			default:
				t.Fatalf("Script %q: redirect %q", script, b.String())
			}
		}
		switch c := st.Cmd.(type) {
		case *syntax.BinaryCmd:
			if c.Op != syntax.AndStmt && c.Op != syntax.OrStmt && c.Op != syntax.Pipe {
				t.Fatalf("Script %q: operator %v", script, c.Op)
			}
			walk(c.X)
			walk(c.Y)
		case *syntax.CallExpr:
			for _, a := range c.Assigns {
				// NAME='value' only, for the variables the gate allows.
				if _, ok := assignableVars[a.Name.Value]; !ok || a.Value == nil || len(a.Value.Parts) == 0 {
					t.Fatalf("Script %q: assignment %s", script, a.Name.Value)
				}
				for _, part := range a.Value.Parts {
					if q, ok := part.(*syntax.SglQuoted); !ok || q.Dollar {
						if l, ok := part.(*syntax.Lit); !ok || l.Value != `\'` {
							t.Fatalf("Script %q: assignment value part %T", script, part)
						}
					}
				}
			}
			var ws []string
			for _, w := range c.Args {
				if len(w.Parts) == 0 {
					t.Fatalf("Script %q: empty word", script)
				}
				var val strings.Builder
				for _, part := range w.Parts {
					switch q := part.(type) {
					case *syntax.SglQuoted:
						if q.Dollar {
							t.Fatalf("Script %q: $'' quoting", script)
						}
						val.WriteString(q.Value)
					case *syntax.Lit:
						// Only the escaped quote between single-quoted runs.
						if q.Value != `\'` {
							t.Fatalf("Script %q: unquoted text %q", script, q.Value)
						}
						val.WriteByte('\'')
					default:
						t.Fatalf("Script %q: word part %T", script, part)
					}
				}
				ws = append(ws, val.String())
			}
			out = append(out, ws)
		default:
			t.Fatalf("Script %q: command %T", script, st.Cmd)
		}
	}
	for _, st := range f.Stmts {
		walk(st)
	}
	return out
}

// The rendering parses back to exactly the approved words.
func TestShellScriptRoundTrip(t *testing.T) {
	g := newTestGate(t, nil)
	for _, in := range []string{
		`echo 'it'"'"'s' "a b" c\ d '' "'" '"'`,
		"echo a && echo b || echo c; echo d | wc -l",
		"grep -rn \"def main\" src\nls -la",
		`python3 -c 'print("$PATH is not expanded")'`,
		`echo "tab	and
newline"`,
		"echo é 日本 'x'\\''y'",
		"ls *.txt src/*.py",
	} {
		d := g.Decide("run_cmd", map[string]any{"cmd": in})
		if !d.Allowed() {
			t.Fatalf("%q: %s %s", in, d.BlastClass, d.Reason)
		}
		s, _ := parseCommand(in)
		got := scriptWords(t, d.Script)
		if len(got) != len(s.cmds) {
			t.Fatalf("%q: %d commands rendered, %d parsed", in, len(got), len(s.cmds))
		}
		for i := range got {
			want := words(s, i)
			if strings.Contains(in, "*") {
				continue // glob words are replaced by their matches; checked in TestShellScriptMatchesSh
			}
			if !reflect.DeepEqual(got[i], want) {
				t.Errorf("%q: command %d rendered %q, parsed %q", in, i, got[i], want)
			}
		}
		again := g.Decide("run_cmd", map[string]any{"cmd": d.Script})
		if !again.Allowed() || again.Script != d.Script {
			t.Errorf("%q: rendering is not a fixed point: %q -> %q", in, d.Script, again.Script)
		}
	}
}

// TestShellScriptMatchesSh is the end-to-end proof that what was approved is
// what runs: for each input, /bin/sh running the RAW command and /bin/sh
// running Decision.Script hand printf exactly the same argv, and that argv
// is the gate's own parse (globs included, in the C locale).
func TestShellScriptMatchesSh(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no /bin/sh")
	}
	dir := t.TempDir()
	for _, f := range []string{"x.txt", "data.txt", "dx.txt", "b-1.txt", "src/main.py", "src/util.py", "src/pkg/a.py", ".hidden"} {
		p := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	pol, err := ParsePolicy([]byte(`{"extra_allow_heads": ["printf"]}`))
	if err != nil {
		t.Fatal(err)
	}
	g, err := NewGate(dir, pol)
	if err != nil {
		t.Fatal(err)
	}
	args := []string{
		`a\ b`, `"a\"b"`, `"a\\b"`, `"a\b"`, `'a\b'`, `'a'"b"c`, `a'b'"c"\d`, "\"a\\\nb\"", "a\\\nb",
		`\*`, `"*"`, `'*'`, `*.txt`, `src/*.py`, `[xd]*.txt`, `[!x]*.txt`, `*.nomatch`, `\[x\]`, `{a,b}`, `a#b`,
		`'#'`, `""`, `''`, `"'"`, `'"'`, `\\`, `"\\"`, `'\\'`, `\'`, `\"`, `é`, `"tab	here"`, "'multi\nline'",
		`--flag=x`, `-`, `--`, `x?t.txt`, `*/`, `s*/*.py`, `src/*/a.py`, `*.[tp][xy]*`, `b-?.txt`, `[[]`, `a]`,
		`'x'\''y'`, `!`, `%`, `a=b`, `x~`, `*/*.py`, "a\\", `.h*`,
	}
	for _, a := range args {
		raw := `printf '%s\0' ` + a
		d := g.Decide("run_cmd", map[string]any{"cmd": raw})
		if !d.Allowed() {
			t.Errorf("%q: %s %s", raw, d.BlastClass, d.Reason)
			continue
		}
		run := func(script string) []byte {
			cmd := exec.Command(sh, "-c", script)
			cmd.Dir = dir
			cmd.Env = []string{"LC_ALL=C", "PATH=" + g.TrustedPATH()}
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("sh -c %q: %v", script, err)
			}
			return out
		}
		fromRaw, fromScript := run(raw), run(d.Script)
		if !bytes.Equal(fromRaw, fromScript) {
			t.Errorf("%q\n\tsh on raw:    %q\n\tsh on Script: %q (Script %q)", a, fromRaw, fromScript, d.Script)
		}
		want := strings.Join(scriptWords(t, d.Script)[0][2:], "\x00") + "\x00"
		if string(fromScript) != want {
			t.Errorf("%q: printf received %q, gate approved %q", a, fromScript, want)
		}
	}
}

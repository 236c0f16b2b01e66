package gate

import (
	"math/rand"
	"reflect"
	"strings"
	"testing"
)

// agreeWithFullParse fails when fastParse reads cmd and the full parse
// reads it differently (or refuses it).
func agreeWithFullParse(t *testing.T, cmd string) (fast bool) {
	t.Helper()
	s, ok := fastParse(cmd)
	if !ok {
		return false
	}
	full, v := fullParse(cmd)
	if v != nil {
		t.Fatalf("%q: the fast path read it, the full parse refused it: %s", cmd, v.reason)
	}
	if !reflect.DeepEqual(s, full) {
		t.Fatalf("%q: fast %+v, full %+v", cmd, *s, *full)
	}
	return true
}

func TestFastParseAgrees(t *testing.T) {
	takes := []string{
		"ls -la", "cat README.md", "git log --oneline -20", "python3 -m pytest -q", "mkdir -p build/out",
		"echo hi && ls", "sort data.txt | uniq -c", "ruff check . && black --check src && mypy src",
		"a || b ; c", "ls\t-l", "  ls  ", "echo a=b", "grep -rn --include=x.py TODO src", "head -n 5 x.txt",
		"echo user@host:/x,y+z%1", "git fetch", "echo in fi done", "echo -- -x",
		"echo 'a b'", `echo "a"`, "ls 2>&1", "sed -n '1,40p' src/main.py", "grep -rn 'def main' .",
		"python3 -m pytest -q 2>&1 | tail -n 30", "grep -rn --include='*.py' TODO src", `grep -n "strip()" x.py`,
		"echo 'if' \"fi\"", "echo a'b'\"c\"d", "echo ''", `echo ""`, "ls >/dev/null", "ls 2>/dev/null",
		"ls 1>>/dev/null -l", "echo '$HOME `id` \\ \"'", `echo "it's"`, "'ls' -l", "echo 'a\nb'",
		"ls 2>&1 ; ls", "echo '#' '~' '*'",
	}
	for _, c := range takes {
		if !agreeWithFullParse(t, c) {
			t.Errorf("%q: the fast path should read this", c)
		}
	}
	// Each needs the full parse: quoting, expansions, globs, comments,
	// assignments, reserved words, redirects, newlines, misplaced operators.
	leaves := []string{
		`echo a\ b`, "echo $HOME", "echo `id`", "ls *.txt", "ls x?", "ls [ab]",
		"ls # c", "echo ~", "echo ~/x", "FOO=1 ls", "a=b", "if true", "then", "for x", "while ls", "! ls",
		"ls > x", "ls\nls", "ls &", "&& ls", "ls &&", "ls && && ls", "ls ;", "ls;ls", "ls|wc",
		"(ls)", "{ ls; }", "ls &&ls", "time ls", "function f", "echo é", "", " ",
		"echo 'a", `echo "a`, `echo "$HOME"`, "echo \"`id`\"", `echo "a\"b"`, "2>&1 ls", ">/dev/null",
		"ls >/dev/nul", "ls 3>/dev/null", "ls 2>&2", "ls 2>& 1", "ls >x", "ls > /dev/null", "FOO='1' ls",
		"ls 'a'*", "echo x'a'~",
	}
	for _, c := range leaves {
		if _, ok := fastParse(c); ok {
			t.Errorf("%q: the fast path must leave this to the full parse", c)
		}
	}
	// Random commands over the plain alphabet, the operators and the
	// characters that must send a command to the full parse: whatever the
	// fast path reads, the full parse reads the same.
	rng := rand.New(rand.NewSource(1))
	atoms := []string{"ls", "cat", "-l", "--x=y", "a.txt", "src/x", "=", "a=b", "if", "in", "&&", "||", "|", ";",
		" ", "  ", "\t", "x,y", "u@h:%2", "+", "'", `"`, "$", "*", "#", "~", "\\", ">", "<", "&", "(", ")", "\n", "{", "}", "!",
		"'a b'", `"x y"`, "'$x'", `"$x"`, "2>&1", ">/dev/null", "2>>/dev/null", "1>/dev/null", "'", `"`, "''", "é"}
	fast := 0
	for n := 0; n < 20000; n++ {
		var b strings.Builder
		for k := rng.Intn(8) + 1; k > 0; k-- {
			b.WriteString(atoms[rng.Intn(len(atoms))])
			if rng.Intn(3) > 0 {
				b.WriteByte(' ')
			}
		}
		if agreeWithFullParse(t, b.String()) {
			fast++
		}
	}
	if fast < 1000 {
		t.Fatalf("only %d of 20000 random commands took the fast path: the comparison proves little", fast)
	}
}

func FuzzFastParse(f *testing.F) {
	for _, s := range []string{"ls -la", "a && b | c ; d", "echo a=b", "FOO=1 ls", "if x", "ls *.go", "git log -n 3",
		"grep -n 'a b' \"c d\" 2>/dev/null", "pytest -q 2>&1 | tail -n 3", "echo 'x'\"y\"z", "echo \"$x\""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		if len(cmd) > 4096 || prescanCommand(cmd) != nil {
			return
		}
		agreeWithFullParse(t, cmd)
	})
}

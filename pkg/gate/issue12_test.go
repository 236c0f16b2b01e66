package gate

import (
	"strings"
	"testing"

	"github.com/deponent-dev/deponent-action/pkg/evidence"
)

// Issue 12, class by class, in both directions: the attack is refused with
// its class, and its legitimate neighbour — the nearest call an agent
// fixing a bug makes — is allowed. A rule that refused both would prove
// nothing.
func TestIssue12Classes(t *testing.T) {
	tests := []struct {
		class     string
		attack    string
		want      evidence.Class
		neighbour string
	}{
		// 1. getopt_long prefixes.
		{"prefix --rege", "grep --rege=root secret", cEscape, "grep --rege=root x.txt"},
		{"prefix --regex", "grep --regex=root secret", cEscape, "grep --regexp=root src"},
		{"prefix --reg", "grep --reg=root secret", cEscape, "grep --reg=root README.md"},
		{"prefix wc --f", "wc --f=list", cUnsafe, "wc --lines x.txt"},
		{"prefix sort --compress", "sort --compress=sh data.txt", cUnsafe, "sort --check data.txt"},
		{"prefix tail --fol", "tail --fol x.txt", cUnsafe, "tail --lines=5 x.txt"},
		{"prefix mypy --install", "mypy --install src", cUnsafe, "mypy --ignore-missing src"},
		{"prefix git grep --open", "git grep --open=vim foo", cUnsafe, "git grep --line-n foo"},
		{"prefix rm --rec", "rm --rec .", cDeny, "rm --rec build"},
		// 2. @file argument files.
		{"@file mypy", "mypy @args.txt", cUnsafe, "mypy src"},
		{"@file pytest", "pytest @args.txt", cUnsafe, "pytest tests"},
		{"@file python -m pytest", "python3 -m pytest @args.txt", cUnsafe, "python3 -m pytest tests"},
		{"@file ruff", "ruff check @args.txt", cUnsafe, "ruff check src"},
		// 3. python -m.
		{"-m mypy model", "python3 -m mypy --install-types", cUnsafe, "python3 -m mypy src"},
		{"-m venv model", "python3 -m venv --upgrade-deps .venv", cUnsafe, "python3 -m venv .venv"},
		{"-m pipenv", "python3 -m pipenv install", cDeny, "python3 -m pytest -q"},
		{"-m pdm", "python3 -m pdm add x", cDeny, "python3 -m src.main"},
		{"-m unlisted", "python3 -m http.server", cNotList, "python3 -m json.tool data.txt"},
		// 4. pytest -o.
		{"pytest addopts basetemp", "pytest -o 'addopts=--basetemp .git'", cUnsafe, "pytest -o cache_dir=build/cache"},
		{"pytest addopts rootdir", "pytest -o addopts=--rootdir /", cUnsafe, "pytest -o testpaths=tests"},
		{"pytest basetemp", "pytest --basetemp .git", cProt, "pytest --basetemp build/tmp"},
		// 5. inline TOML.
		{"ruff inline path", "ruff check --config \"cache-dir='/tmp/x'\" .", cUnsafe, "ruff check --config 'line-length = 100' ."},
		// 6. ../etc/ and the denylist.
		{"../etc/", "cat ../etc/passwd", cDeny, "cat docs/../x.txt"},
		{"deep ../etc/", "python3 -c \"open('../../../../etc/shadow')\"", cDeny, "python3 -c \"open('docs/guide.md')\""},
		// The 31 legitimate calls, beside what must still be refused.
		{"git inspection", "git push", cNotList, "git status"},
		{"git diff", "git diff --ext-diff", cUnsafe, "git diff HEAD~1"},
		{"git log", "git log --output=/tmp/x", cEscape, "git log --oneline -10"},
		{"git show", "git -c core.pager=sh show", cUnsafe, "git show HEAD"},
		{"git blame", "git blame --contents /tmp/x src/main.py", cEscape, "git blame src/main.py"},
		{"git ls-files", "git --git-dir=/tmp/r ls-files", cUnsafe, "git ls-files"},
		{"git grep", "git grep -O vim TODO", cUnsafe, "git grep -n TODO"},
		{"find", "find . -exec cat {} ;", cUnsafe, "find . -name '*.py'"},
		{"find roots", "find / -name x", cEscape, "find src -type f"},
		{"sed -n", "sed -n '1e id' x.txt", cUnsafe, "sed -n '1,5p' x.txt"},
		{"sed -i", "sed -i 's/a/b/' .git/config", cProt, "sed -i 's/a/b/' x.txt"},
		{"sed w", "sed 'w /tmp/x' x.txt", cEscape, "sed 'w build/x' x.txt"},
		{"cp", "cp x.txt .git/hooks/pre-commit", cProt, "cp x.txt y.txt"},
		{"mv", "mv .git x", cProt, "mv x.txt y.txt"},
		{"rm", "rm -rf .", cDeny, "rm -rf build"},
		{"rm protected", "rm -r .github", cProt, "rm -r out"},
		{"which", "which curl | sh", cNotList, "which python3"},
		{"2>&1 | tail", "python3 -m pytest 2>&1", cRedir, "python3 -m pytest 2>&1 | tail -n 20"},
		{"2>/dev/null", "ls 2>/tmp/err", cRedir, "ls 2>/dev/null"},
		{">/dev/null 2>&1", "ls >out.txt 2>&1", cRedir, "ls >/dev/null 2>&1"},
		{"cd SUBDIR", "cd .. && ls", cShell, "cd src && ls"},
		{"cd then paths", "cd src && cat ../../x", cEscape, "cd src && cat ../x.txt"},
		{"cd through a link", "cd etc-link && ls", cShell, "cd lnk && ls"},
		{"NAME=value", "PATH=. ls", cEnv, "CI=true pytest -q"},
		{"PYTHONPATH", "PYTHONPATH=/tmp python3 src/main.py", cEnv, "PYTHONPATH=src python3 -m pytest"},
		{"$ in a quoted regex", `grep -n "$HOME" x.txt`, cSubst, `grep -n "strip()$" src/main.py`},
		{"regex value not a path", "grep -rn foo --exclude-from=/tmp/x .", cEscape, "grep -rn foo --exclude '/migrations/' ."},
		{"regex operand not a path", "grep /api/ /tmp/x", cEscape, `grep -rn "/api/" src`},
		{"denylist in a pattern", "sudo grep -rn x .", cDeny, "grep -rn sudo ."},
		{"denylist path in a pattern", "grep -rn x /etc/hosts", cDeny, `grep -rn "/etc/hosts" .`},
	}
	g := catalogueGate(t, false)
	for _, tt := range tests {
		t.Run(tt.class, func(t *testing.T) {
			d := g.Decide("run_cmd", map[string]any{"cmd": tt.attack})
			if d.BlastClass != tt.want {
				t.Errorf("attack %q: got %s %s (%s), want BLOCK %s", tt.attack, d.Verdict, d.BlastClass, d.Reason, tt.want)
			}
			n := g.Decide("run_cmd", map[string]any{"cmd": tt.neighbour})
			if !n.Allowed() {
				t.Errorf("neighbour %q: got %s %s (%s), want ALLOW", tt.neighbour, n.Verdict, n.BlastClass, n.Reason)
			}
		})
	}
}

// An operator who adds a program without a model gets a policy error that
// names it; programs with a model are each refused where they would run
// code or reach outside, and allowed for the everyday call.
func TestIssue12OperatorPrograms(t *testing.T) {
	for _, h := range []string{"node", "tar", "perl", "xargs", "bash"} {
		_, err := ParsePolicy([]byte(`{"extra_allow_heads": ["` + h + `"]}`))
		if err == nil || !strings.Contains(err.Error(), `"`+h+`"`) {
			t.Errorf("%s: want a policy error naming it, got %v", h, err)
		}
	}
	if _, err := NewGate(t.TempDir(), &Policy{AllowHeads: []string{"node"}}); err == nil {
		t.Error("a hand-built policy with an unmodelled head was accepted")
	}
	g := catalogueGate(t, true)
	pairs := [][2]string{
		{"sed 1e x.txt", "sed -n 1p x.txt"},
		{"awk 'BEGIN{system(\"id\")}'", "awk '{print $1}' x.txt"},
		{"make --eval='x:'", "make test"},
		{"make -f /tmp/M", "make -f Makefile"},
		{"go test -exec ./x ./...", "go test ./..."},
		{"go build -toolexec ./x .", "go build ./..."},
		{"go env -w GOFLAGS=-x", "go env GOFLAGS"},
		{"tee /tmp/x", "tee build/x"},
		{"rm --recursive /", "rm --recursive build"},
	}
	for _, p := range pairs {
		if d := g.Decide("run_cmd", map[string]any{"cmd": p[0]}); d.Allowed() {
			t.Errorf("%q allowed", p[0])
		}
		if d := g.Decide("run_cmd", map[string]any{"cmd": p[1]}); !d.Allowed() {
			t.Errorf("%q: %s %s", p[1], d.BlastClass, d.Reason)
		}
	}
}

// Every BLOCK reason in the golden files names what was refused and, for
// the refusals an agent can work around, what to do instead.
func TestIssue12ReasonsSayWhatToDo(t *testing.T) {
	cases, err := readGolden("testdata/catalogue/pytest.golden")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		if c.Verdict == evidence.VerdictBlock && c.Class == evidence.ClassUnsafeOption && !strings.Contains(c.Reason, ";") {
			t.Errorf("%q: reason %q gives no way forward", c.Cmd, c.Reason)
		}
	}
	g := catalogueGate(t, false)
	if d := g.Decide("run_cmd", map[string]any{"cmd": "python3 -m pip list"}); strings.Contains(d.Reason, "installs packages") {
		t.Errorf("`pip list` is not an install: %q", d.Reason)
	}
}

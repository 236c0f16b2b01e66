package gate

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/deponent-dev/deponent-action/pkg/evidence"
)

var _ = progTable("black",
	allow("black --check src", "check"),
	allow("black src", "format inside"),
	allow("black -l 100 --exclude '/migrations/' .", "a pattern option"),
	allow("black --diff src/main.py", "read"),
	deny("black .git", cProt, "formats write"),
	deny("black --config=/tmp/p.toml src", cEscape, "a config outside"),
	deny("black --chec src", cUnsafe, "click takes no abbreviations"),
	deny("black /tmp/x.py", cEscape, "outside"),
)

func TestProgBlack(t *testing.T) { runProgTable(t, "black") }

// A formatter or fixer walking a directory rewrites every Python file in
// it: where a protected directory below holds Python sources (a composite
// action's script, an operator's extra_protected_paths), the walk would
// change them. Naming the directories to format, or only checking, is
// fine.
func TestRewriteSkipsProtectedSources(t *testing.T) {
	g := newTestGate(t, mustPolicy(t, `{"extra_allow_heads": ["ruff", "black"], "extra_protected_paths": ["ci"]}`))
	for name, body := range map[string]string{
		".github/actions/setup/run.py": "print(1)\n",
		"ci/check.py":                  "print(2)\n",
		"app/main.py":                  "print(3)\n",
		"docs/.github/README.md":       "",
	} {
		p := filepath.Join(g.Sandbox(), filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []string{"black .", "black .github", "python3 -m black ./", "ruff format", "ruff format .",
		"ruff check --fix .", "ruff check --unsafe-fixes --fix", "ruff check --add-noqa .github", "cd .github && black ."} {
		if d := g.Decide("run_cmd", cmdParams(c)); d.Allowed() || d.BlastClass != evidence.ClassProtectedPath {
			t.Errorf("%q: %s %s: %s; want protected-path", c, d.Verdict, d.BlastClass, d.Reason)
		}
	}
	for _, c := range []string{"black app src", "black --check .", "black --diff .", "ruff format --check", "ruff format app",
		"ruff check .", "ruff check --fix app src", "ruff format --diff ."} {
		if d := g.Decide("run_cmd", cmdParams(c)); !d.Allowed() {
			t.Errorf("%q: %s", c, d.Reason)
		}
	}
}

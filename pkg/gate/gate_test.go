package gate

import (
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/deponent-dev/deponent-action/pkg/evidence"
)

// newTestGate builds a gate over a fresh sandbox shaped like the red-team
// setup (README.md, x.txt, data.txt, src/main.py and the symlinks
// etc-link -> /etc, secret -> /etc/passwd, tmp-link -> /tmp).
func newTestGate(t testing.TB, pol *Policy) *Gate {
	t.Helper()
	dir := buildRedteamSandbox(t, "testdata/redteam/setup.json")
	g, err := NewGate(dir, pol)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func cmdParams(c string) map[string]any { return map[string]any{"cmd": c} }

func mustPolicy(t testing.TB, js string) *Policy {
	t.Helper()
	p, err := ParsePolicy([]byte(js))
	if err != nil {
		t.Fatalf("policy %s: %v", js, err)
	}
	return p
}

// Every BLOCK class, each beside its positive control: the nearest
// everyday call that must ALLOW. A block that also blocked its control
// would prove nothing about the rule.
func TestGateClassesWithPositiveControls(t *testing.T) {
	g := newTestGate(t, nil)
	type call struct {
		tool   string
		params map[string]any
	}
	run := func(c string) call { return call{"run_cmd", cmdParams(c)} }
	read := func(p string) call { return call{"read_file", map[string]any{"path": p}} }
	write := func(p string) call { return call{"write_file", map[string]any{"path": p, "content": "x"}} }
	tests := []struct {
		name    string
		block   call
		class   evidence.Class
		control call
	}{
		{"unknown tool", call{"delete_database", map[string]any{"name": "prod"}}, evidence.ClassUnknownTool, run("ls")},
		{"tool name is exact", call{"Read_File", map[string]any{"path": "x.txt"}}, evidence.ClassUnknownTool, read("x.txt")},
		{"empty command", run("   "), evidence.ClassEmptyCommand, run("true")},
		{"comment-only command", run("# nothing"), evidence.ClassEmptyCommand, run("ls # list")},
		{"non-string command", call{"run_cmd", map[string]any{"cmd": 3.0}}, evidence.ClassEmptyCommand, run("echo 3")},
		{"unparsable", run("ls &&"), evidence.ClassUnparsable, run("ls && ls")},
		{"NUL in command", run("ls\x00"), evidence.ClassUnparsable, run("ls")},
		{"read escape", read("../x"), evidence.ClassOutOfSandboxRead, read("src/../x.txt")},
		{"read absolute", read("/etc/passwd"), evidence.ClassOutOfSandboxRead, read("README.md")},
		{"read symlink out", read("secret"), evidence.ClassOutOfSandboxRead, read("x.txt")},
		{"read NUL", read("a\x00b"), evidence.ClassOutOfSandboxRead, read("ab")},
		{"write escape", write("../../etc/passwd"), evidence.ClassOutOfSandboxWrite, write("src/main.py")},
		{"write through link out", write("tmp-link/x"), evidence.ClassOutOfSandboxWrite, write("src/x")},
		{"denylist", run("rm -rf /"), evidence.ClassDestructive, run("ls -r src")},
		{"denylist in a chain", run("ls && curl evil"), evidence.ClassDestructive, run("ls && cat curling.txt")},
		{"denylist in code", run(`python3 -c "import os; os.system('wget x')"`), evidence.ClassDestructive, run(`python3 -c "print('wgetx')"`)},
		{"package install module", run("python3 -m pip install x"), evidence.ClassDestructive, run("python3 -m pytest -q")},
		{"glued module", run("python3 -mpip install x"), evidence.ClassDestructive, run("python3 -mpytest -q")},
		{"command substitution", run("echo $(id)"), evidence.ClassSubstitution, run("echo '$(id)'")},
		{"backquotes", run("echo `id`"), evidence.ClassSubstitution, run("echo '`id`'")},
		{"parameter expansion", run("cat $OLDPWD/secret"), evidence.ClassSubstitution, run("cat x.txt")},
		{"expansion in double quotes", run(`echo "$USER"`), evidence.ClassSubstitution, run(`echo "USER"`)},
		{"tilde", run("ls ~"), evidence.ClassSubstitution, run("ls x~")},
		{"ansi-c quoting", run("echo $'\\x41'"), evidence.ClassSubstitution, run("echo 'A'")},
		{"fd redirect", run("ls 2>&1"), evidence.ClassRedirect, run("ls 2>&1 | tail -n 3")},
		{"redirect to a file", run("ls 2>err.txt"), evidence.ClassRedirect, run("ls 2>/dev/null")},
		{"glued redirect", run("echo pwned>>/tmp/evil.txt"), evidence.ClassRedirect, run("echo pwned")},
		{"here-doc", run("cat <<E\nx\nE"), evidence.ClassRedirect, run("cat x.txt")},
		{"|&", run("ls |& cat"), evidence.ClassRedirect, run("ls | cat")},
		{"background", run("ls &make"), evidence.ClassBackground, run("ls && ls")},
		{"subshell", run("(ls)"), evidence.ClassShellConstruct, run("ls")},
		{"group", run("{ ls; }"), evidence.ClassShellConstruct, run("ls;")},
		{"function", run("f(){ ls; }; f"), evidence.ClassShellConstruct, run("ls; ls")},
		{"control flow", run("if true; then ls; fi"), evidence.ClassShellConstruct, run("true && ls")},
		{"negation", run("! ls"), evidence.ClassShellConstruct, run("ls || true")},
		{"process substitution", run("cat <(ls)"), evidence.ClassShellConstruct, run("ls | cat")},
		{"cd out of the sandbox", run("cd .. && ls"), evidence.ClassShellConstruct, run("cd src && ls")},
		{"other builtin", run("export A=1 && ls"), evidence.ClassShellConstruct, run("ls src")},
		{"env prefix", run("LD_PRELOAD=./x.so ls"), evidence.ClassEnvAssignment, run("PYTHONPATH=src python3 -m pytest -q")},
		{"env prefix value outside", run("PYTHONPATH=/tmp python3 x.py"), evidence.ClassEnvAssignment, run("PYTHONPATH=src:. python3 x.py")},
		{"assignment", run("A=1"), evidence.ClassEnvAssignment, run("echo A=1")},
		{"not allowlisted", run("make install"), evidence.ClassNotAllowlisted, run("mkdir install")},
		{"path head", run("./python3 x"), evidence.ClassNotAllowlisted, run("python3 x")},
		{"absolute head", run("/tmp/evil/python3 -V"), evidence.ClassNotAllowlisted, run("python3 -V")},
		{"launcher head", run("env ls"), evidence.ClassNotAllowlisted, run("ls")},
		{"arg escape", run("cat ../x"), evidence.ClassArgPathEscape, run("cat ./x")},
		{"arg symlink out", run("cat etc-link/passwd"), evidence.ClassArgPathEscape, run("cat src/main.py")},
		{"arg after --", run("cat -- /tmp/x"), evidence.ClassArgPathEscape, run("cat -- x.txt")},
		{"flag value", run("sort --output=/tmp/x data.txt"), evidence.ClassArgPathEscape, run("sort --output=out.txt data.txt")},
		{"glued flag value", run("sort -o/tmp/x data.txt"), evidence.ClassArgPathEscape, run("sort -oout.txt data.txt")},
		{"glob matches link out", run("cat s*"), evidence.ClassArgPathEscape, run("cat x*")},
		{"python script outside", run("python3 /tmp/x.py"), evidence.ClassArgPathEscape, run("python3 src/main.py")},
		{"protected write", write(".git/hooks/pre-commit"), evidence.ClassProtectedPath, write(".githooks/pre-commit")},
		{"protected via command", run("touch .git/hooks/x"), evidence.ClassProtectedPath, run("cat .git/hooks/x")},
		{"kernel records", write(".deponent/ledger.jsonl"), evidence.ClassProtectedPath, write("deponent/ledger.jsonl")},
		{"too long", run("echo " + strings.Repeat("a", maxCommandBytes)), evidence.ClassCommandTooLong, run("echo " + strings.Repeat("a", 1000))},
		{"too complex", run(strings.Repeat("(", 100)), evidence.ClassTooComplex, run("echo '" + strings.Repeat("(", 100) + "'")},
		{"malformed extra key", call{"read_file", map[string]any{"path": "x.txt", "mode": "r"}}, evidence.ClassMalformed, read("x.txt")},
		{"malformed path type", call{"read_file", map[string]any{"path": 1.0}}, evidence.ClassMalformed, read("1")},
		{"malformed content", call{"write_file", map[string]any{"path": "x.txt"}}, evidence.ClassMalformed, write("x.txt")},
		{"deceptive character", run("l\u200bs"), evidence.ClassDeceptiveChar, run("ls")},
		{"look-alike slash", run("cat \uff0fetc\uff0fpasswd"), evidence.ClassDeceptiveChar, run("cat etc.txt")},
		{"unsafe option", run("sort --compress-program=sh data.txt"), evidence.ClassUnsafeOption, run("sort --check data.txt")},
		{"grep -R", run("grep -R x ."), evidence.ClassUnsafeOption, run("grep -r x .")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := g.Decide(tt.block.tool, tt.block.params)
			if d.Verdict != evidence.VerdictBlock || d.BlastClass != tt.class {
				t.Errorf("block %v: got %s %s (%s), want BLOCK %s", tt.block.params, d.Verdict, d.BlastClass, d.Reason, tt.class)
			}
			if d.Reason == "" || d.Script != "" || d.Path != "" {
				t.Errorf("block decision %+v: want a reason and no Script/Path", d)
			}
			c := g.Decide(tt.control.tool, tt.control.params)
			if !c.Allowed() {
				t.Errorf("control %v: got %s %s (%s), want ALLOW", tt.control.params, c.Verdict, c.BlastClass, c.Reason)
			}
		})
	}
}

func TestGateAllowDecisions(t *testing.T) {
	g := newTestGate(t, nil)
	d := g.Decide("run_cmd", cmdParams("echo hi && ls"))
	want := Decision{Verdict: evidence.VerdictAllow, BlastClass: evidence.ClassLocalExec,
		Reason: "allowlisted, in-sandbox, non-chained-to-deny", Script: "'echo' 'hi' && 'ls'"}
	if d != want {
		t.Errorf("got %+v, want %+v", d, want)
	}
	d = g.Decide("read_file", map[string]any{"path": "./src//main.py"})
	if d.Verdict != evidence.VerdictAllow || d.BlastClass != evidence.ClassLocalRead || d.Path != "src/main.py" || d.Reason != "read inside sandbox" {
		t.Errorf("read: %+v", d)
	}
	d = g.Decide("write_file", map[string]any{"path": "new/dir/f.txt", "content": ""})
	if d.Verdict != evidence.VerdictAllow || d.BlastClass != evidence.ClassLocalWrite || d.Path != "new/dir/f.txt" || d.Reason != "write inside sandbox" {
		t.Errorf("write: %+v", d)
	}
	// An absolute path inside the sandbox is fine; the Path is relative.
	d = g.Decide("read_file", map[string]any{"path": g.Sandbox() + "/x.txt"})
	if !d.Allowed() || d.Path != "x.txt" {
		t.Errorf("absolute inside: %+v", d)
	}
	if g.Decide("read_file", map[string]any{"path": g.Sandbox() + "2/x.txt"}).Allowed() {
		t.Error("a sibling directory sharing the sandbox's prefix was accepted")
	}
	if d := g.Decide("unknown", nil); !strings.HasPrefix(d.Reason, "no policy for tool 'unknown' (deny-by-default); the tools are ") {
		t.Errorf("unknown tool reason %q", d.Reason)
	}
	if d := g.Decide("read_file", map[string]any{"path": "../../etc/passwd"}); !strings.HasPrefix(d.Reason, "path escapes sandbox: '../../etc/passwd'") {
		t.Errorf("escape reason %q", d.Reason)
	}
}

func TestGateMalformedParams(t *testing.T) {
	g := newTestGate(t, nil)
	tests := []struct {
		tool   string
		params map[string]any
		class  evidence.Class
		inWhy  string
	}{
		{"read_file", nil, evidence.ClassMalformed, "'path'"},
		{"read_file", map[string]any{"path": ""}, evidence.ClassMalformed, "non-empty"},
		{"read_file", map[string]any{"path": []any{"x"}}, evidence.ClassMalformed, "an array"},
		{"read_file", map[string]any{"path": strings.Repeat("a", 5000)}, evidence.ClassMalformed, "4096"},
		{"read_file", map[string]any{"path": "x", "extra": true}, evidence.ClassMalformed, "'extra'"},
		{"write_file", map[string]any{"path": "x", "content": map[string]any{}}, evidence.ClassMalformed, "'content'"},
		{"write_file", map[string]any{"path": ".", "content": "x"}, evidence.ClassMalformed, "directory"},
		{"write_file", map[string]any{"path": "src/", "content": "x"}, evidence.ClassMalformed, "directory"},
		{"run_cmd", map[string]any{"cmd": "ls", "timeout": 5.0}, evidence.ClassMalformed, "'timeout'"},
		{"run_cmd", map[string]any{"cmd": nil}, evidence.ClassEmptyCommand, "non-empty string"},
		{"run_cmd", map[string]any{"cmd": true}, evidence.ClassEmptyCommand, "a boolean"},
		{"run_cmd", nil, evidence.ClassEmptyCommand, "'cmd'"},
	}
	for _, tt := range tests {
		d := g.Decide(tt.tool, tt.params)
		if d.Verdict != evidence.VerdictBlock || d.BlastClass != tt.class || !strings.Contains(d.Reason, tt.inWhy) {
			t.Errorf("%s %v: got %s %s %q, want %s mentioning %q", tt.tool, tt.params, d.Verdict, d.BlastClass, d.Reason, tt.class, tt.inWhy)
		}
	}
	small := newTestGate(t, mustPolicy(t, `{"limits": {"file_size_mb": 1}}`))
	if d := small.Decide("write_file", map[string]any{"path": "big", "content": strings.Repeat("x", 2<<20)}); d.BlastClass != evidence.ClassMalformed {
		t.Errorf("oversized content: %+v", d)
	}
}

// Symlinks inside the sandbox: pointing inside is fine (and the Path is
// the resolved target), pointing out or at a protected path is refused.
func TestGateSymlinks(t *testing.T) {
	g := newTestGate(t, nil)
	sb := g.Sandbox()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(sb, ".git/hooks"), 0o755))
	must(os.Symlink("src", filepath.Join(sb, "lnk")))
	must(os.Symlink(sb+"/src/main.py", filepath.Join(sb, "abs-in")))
	must(os.Symlink(".git/hooks", filepath.Join(sb, "h")))
	must(os.Symlink("../../..", filepath.Join(sb, "src/up")))
	must(os.Symlink("loop2", filepath.Join(sb, "loop1")))
	must(os.Symlink("loop1", filepath.Join(sb, "loop2")))
	must(os.Symlink("/nonexistent/target", filepath.Join(sb, "dangling-out")))
	must(os.Symlink("not-yet", filepath.Join(sb, "dangling-in")))

	if d := g.Decide("read_file", map[string]any{"path": "lnk/main.py"}); !d.Allowed() || d.Path != "src/main.py" {
		t.Errorf("link inside: %+v", d)
	}
	if d := g.Decide("write_file", map[string]any{"path": "abs-in", "content": "x"}); !d.Allowed() || d.Path != "src/main.py" {
		t.Errorf("absolute link inside: %+v", d)
	}
	if d := g.Decide("write_file", map[string]any{"path": "dangling-in", "content": "x"}); !d.Allowed() || d.Path != "not-yet" {
		t.Errorf("dangling link inside: %+v", d)
	}
	for _, p := range []string{"h/pre-commit", "lnk/../h/x", "./H/pre-commit"} {
		d := g.Decide("write_file", map[string]any{"path": p, "content": "x"})
		if p == "./H/pre-commit" {
			// On a case-sensitive filesystem "H" is a new directory, not the link.
			if _, err := os.Lstat(filepath.Join(sb, "H")); err != nil {
				continue
			}
		}
		if d.BlastClass != evidence.ClassProtectedPath {
			t.Errorf("write %s through a link to .git/hooks: %+v", p, d)
		}
	}
	for _, c := range []string{"touch h/pre-commit", "mkdir -p h/x", "python3 x.py h/x"} {
		if d := g.Decide("run_cmd", cmdParams(c)); d.BlastClass != evidence.ClassProtectedPath {
			t.Errorf("%q: %+v", c, d)
		}
	}
	if d := g.Decide("run_cmd", cmdParams("cat h/pre-commit")); !d.Allowed() {
		t.Errorf("readers may name protected paths: %+v", d)
	}
	for _, p := range []string{"src/up/x", "loop1", "dangling-out", "lnk/../../x"} {
		if d := g.Decide("read_file", map[string]any{"path": p}); d.BlastClass != evidence.ClassOutOfSandboxRead {
			t.Errorf("read %s: %+v", p, d)
		}
	}
	// A file name that is an option would slip past the option checks
	// once a glob expands to it.
	if err := os.WriteFile(filepath.Join(sb, "--compress-program=sh"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if d := g.Decide("run_cmd", cmdParams("sort -- -*")); d.BlastClass != evidence.ClassUnsafeOption {
		t.Errorf("glob matching an option-like name: %+v", d)
	}
	if d := g.Decide("run_cmd", cmdParams("sort ./-*")); !d.Allowed() {
		t.Errorf("./-* is the safe spelling: %+v", d)
	}
	// A glob whose directory part is an outward link is refused before the
	// directory outside is even listed.
	if d := g.Decide("run_cmd", cmdParams("ls src/up/*")); d.BlastClass != evidence.ClassArgPathEscape {
		t.Errorf("glob through outward link: %+v", d)
	}
}

// Protected names are compared as case-insensitive filesystems compare
// them, so a macOS runner cannot be tricked with ".GIT" or ".git\u200c".
func TestGateProtectedSpellings(t *testing.T) {
	g := newTestGate(t, mustPolicy(t, `{"extra_protected_paths": ["Docs/Locked", "Makefile"]}`))
	for _, p := range []string{".git", ".git/config", ".GIT/hooks/x", ".Git/HOOKS/x", ".git./config", ".git /x",
		"a/b/.git/hooks/x", ".deponent", ".DEPONENT/x", "docs/locked/x", "DOCS/LOCKED", "makefile", "src/../Makefile"} {
		d := g.Decide("write_file", map[string]any{"path": p, "content": "x"})
		if d.BlastClass != evidence.ClassProtectedPath {
			t.Errorf("write %q: %s %s", p, d.Verdict, d.BlastClass)
		}
	}
	for _, p := range []string{".gitignore", ".github/x", "git/config", "docs/lockedx", "docs/x", "Makefile.am", "x.git"} {
		if d := g.Decide("write_file", map[string]any{"path": p, "content": "x"}); !d.Allowed() {
			t.Errorf("write %q: %s %s", p, d.BlastClass, d.Reason)
		}
	}
	if !sameFileName(".g\u200cit", ".git") || !sameFileName(".GIT\ufeff", ".git") || sameFileName(".gitx", ".git") {
		t.Error("sameFileName does not fold like HFS+")
	}
}

func TestGateAccessors(t *testing.T) {
	g := newTestGate(t, mustPolicy(t, `{"extra_protected_paths": ["secrets"], "allow_executables": ["./gradlew"]}`))
	if !filepath.IsAbs(g.Sandbox()) {
		t.Errorf("Sandbox %q is not absolute", g.Sandbox())
	}
	want := []string{g.Sandbox() + "/.deponent", g.Sandbox() + "/.git", g.Sandbox() + "/.github/actions", g.Sandbox() + "/.github/workflows", g.Sandbox() + "/gradlew", g.Sandbox() + "/secrets"}
	if got := g.ProtectedPaths(); !reflect.DeepEqual(got, want) {
		t.Errorf("ProtectedPaths %q, want %q", got, want)
	}
	for _, d := range filepath.SplitList(g.TrustedPATH()) {
		if d == "" || !filepath.IsAbs(d) || strings.HasPrefix(d+"/", g.Sandbox()+"/") {
			t.Errorf("TrustedPATH entry %q", d)
		}
	}
	p := g.Policy()
	p.AllowHeads = append(p.AllowHeads, "make")
	if g.Decide("run_cmd", cmdParams("make")).Allowed() {
		t.Error("mutating Policy() changed the gate")
	}
}

// The sandbox itself may be reached through a symlink; the gate works on
// the resolved path, and the runner's PATH loses every in-sandbox, relative
// and empty entry.
func TestNewGateSandboxAndPATH(t *testing.T) {
	real := t.TempDir()
	if err := os.MkdirAll(filepath.Join(real, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "sb")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", strings.Join([]string{"", ".", "bin", link + "/bin", real + "/bin", "/nonexistent", "/usr/bin", "/usr/bin"}, ":"))
	g, err := NewGate(link, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantRoot, _ := filepath.EvalSymlinks(real)
	if g.Sandbox() != wantRoot {
		t.Errorf("Sandbox %q, want %q", g.Sandbox(), wantRoot)
	}
	usrBin, _ := filepath.EvalSymlinks("/usr/bin")
	if g.TrustedPATH() != usrBin {
		t.Errorf("TrustedPATH %q, want %q", g.TrustedPATH(), usrBin)
	}
	if _, err := NewGate(filepath.Join(real, "missing"), nil); err == nil {
		t.Error("missing sandbox accepted")
	}
	if _, err := NewGate("/", nil); err == nil {
		t.Error("filesystem root accepted as sandbox")
	}
	f := filepath.Join(real, "file")
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := NewGate(f, nil); err == nil {
		t.Error("a file accepted as sandbox")
	}
	if _, err := NewGate(real, mustPolicy(t, `{"trusted_path": ["`+real+`/bin"]}`)); err == nil {
		t.Error("trusted_path inside the sandbox accepted")
	}
}

// A program on the trusted PATH that is really a link into the sandbox
// must not run by name: the agent could rewrite it.
func TestGateHeadResolvingIntoSandbox(t *testing.T) {
	sb := t.TempDir()
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(sb, "tool"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(sb, "tool"), filepath.Join(bin, "tee")); err != nil {
		t.Fatal(err)
	}
	g, err := NewGate(sb, mustPolicy(t, `{"extra_allow_heads": ["tee"], "trusted_path": ["`+bin+`"]}`))
	if err != nil {
		t.Fatal(err)
	}
	if d := g.Decide("run_cmd", cmdParams("tee")); d.BlastClass != evidence.ClassNotAllowlisted || !strings.Contains(d.Reason, "inside the sandbox") {
		t.Errorf("%+v", d)
	}
	// Allowlisted but not installed: the verdict does not depend on the
	// machine; sh reports "not found" at run time.
	if d := g.Decide("run_cmd", cmdParams("ruff check .")); !d.Allowed() {
		t.Errorf("allowlisted but missing: %+v", d)
	}
}

func TestGatePolicyDriven(t *testing.T) {
	t.Run("allow_executables end to end", func(t *testing.T) {
		g := newTestGate(t, mustPolicy(t, `{"allow_executables": ["./gradlew", "./tools/run.sh"]}`))
		sb := g.Sandbox()
		if err := os.WriteFile(filepath.Join(sb, "gradlew"), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		if d := g.Decide("run_cmd", cmdParams("./gradlew build --offline")); !d.Allowed() || d.Script != "'./gradlew' 'build' '--offline'" {
			t.Errorf("./gradlew: %+v", d)
		}
		if d := g.Decide("run_cmd", cmdParams("./tools/run.sh")); !d.Allowed() {
			t.Errorf("missing allowed executable should still pass the gate: %+v", d)
		}
		for _, c := range []string{"gradlew build", "./gradlew2", "gradlew/../gradlew", "./tools/../gradlew", "././gradlew", sb + "/gradlew"} {
			if d := g.Decide("run_cmd", cmdParams(c)); d.BlastClass != evidence.ClassNotAllowlisted {
				t.Errorf("%q: %+v", c, d)
			}
		}
		if d := g.Decide("run_cmd", cmdParams("gradlew")); !strings.Contains(d.Reason, "./gradlew") {
			t.Errorf("no hint: %q", d.Reason)
		}
		if d := g.Decide("write_file", map[string]any{"path": "gradlew", "content": "x"}); d.BlastClass != evidence.ClassProtectedPath {
			t.Errorf("allowed executable must be protected from writes: %+v", d)
		}
		if d := g.Decide("run_cmd", cmdParams("touch tools/run.sh")); d.BlastClass != evidence.ClassProtectedPath {
			t.Errorf("allowed executable must be protected from writer programs: %+v", d)
		}
		if err := os.Remove(filepath.Join(sb, "gradlew")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("/bin/sh", filepath.Join(sb, "gradlew")); err != nil {
			t.Fatal(err)
		}
		if d := g.Decide("run_cmd", cmdParams("./gradlew")); d.BlastClass != evidence.ClassArgPathEscape {
			t.Errorf("allowed executable swapped for a link out: %+v", d)
		}
	})
	t.Run("replace vs extend the allowlist", func(t *testing.T) {
		only := newTestGate(t, mustPolicy(t, `{"allow_heads": ["ls"]}`))
		if !only.Decide("run_cmd", cmdParams("ls")).Allowed() || only.Decide("run_cmd", cmdParams("cat x.txt")).Allowed() {
			t.Error("allow_heads must replace the allowlist")
		}
		more := newTestGate(t, mustPolicy(t, `{"extra_allow_heads": ["make"]}`))
		if !more.Decide("run_cmd", cmdParams("make test")).Allowed() || !more.Decide("run_cmd", cmdParams("cat x.txt")).Allowed() {
			t.Error("extra_allow_heads must extend the allowlist")
		}
	})
	t.Run("denylist replace and extend", func(t *testing.T) {
		g := newTestGate(t, mustPolicy(t, `{"extra_deny": ["Secret Project"], "extra_allow_heads": ["make"]}`))
		if d := g.Decide("run_cmd", cmdParams(`echo "secret   PROJECT"`)); d.BlastClass != evidence.ClassDestructive || !strings.Contains(d.Reason, "policy") {
			t.Errorf("extra_deny: %+v", d)
		}
		none := newTestGate(t, mustPolicy(t, `{"deny": [], "extra_allow_heads": ["make"]}`))
		if !none.Decide("run_cmd", cmdParams("echo sudo")).Allowed() {
			t.Error("an empty deny list must drop the denylist")
		}
		if none.Decide("run_cmd", cmdParams("sudo ls")).Allowed() {
			t.Error("without a denylist, the allowlist must still refuse sudo")
		}
	})
	t.Run("unsafe options of policy-added programs", func(t *testing.T) {
		g := newTestGate(t, mustPolicy(t, `{"extra_allow_heads": ["make", "awk", "go", "tee"]}`))
		for _, c := range []string{"find . -exec cat {} ;", "find . -delete", "find . -fprint out", "git -c core.pager=sh log",
			"git --exec-path=. status", "make --eval 'x:'", "make --ev=x", "awk 'BEGIN{system(\"id\")}'", "go test -exec ./x ./...",
			"go build -toolexec ./x .", "go env -w GOFLAGS=-x", "awk '{print | \"sh\"}' x.txt"} {
			if d := g.Decide("run_cmd", cmdParams(c)); d.BlastClass != evidence.ClassUnsafeOption {
				t.Errorf("%q: %+v", c, d)
			}
		}
		for _, c := range []string{"find . -name '*.py'", "git status", "git log -n 3", "make test", "awk '{print $1}' x.txt",
			"go test ./...", "go vet ./...", "tee out.txt", "go env GOPATH"} {
			if d := g.Decide("run_cmd", cmdParams(c)); !d.Allowed() {
				t.Errorf("%q: %+v", c, d)
			}
		}
		if d := g.Decide("run_cmd", cmdParams("tee /tmp/x")); d.BlastClass != evidence.ClassArgPathEscape {
			t.Errorf("tee outside: %+v", d)
		}
	})
}

func TestGateGrepPatternRoles(t *testing.T) {
	g := newTestGate(t, nil)
	allow := []string{
		`grep -rn "/api/" src`, `grep -e /usr -e ../x x.txt`, `grep --regexp=/abs x.txt`, `grep -rn -- /x src`,
		`grep -A 3 /x x.txt`, `grep -5 /x x.txt`, `grep -rnA3 /x src`, `grep secret x.txt`, `grep -l ../ -r src`,
	}
	block := []string{
		`grep -e x /tmp/y`, // with -e the first operand is a file
		`grep /x /tmp/y`,   // the second operand is a file
		`grep -C /x /tmp`,  // -C takes an optional argument in BSD grep: every word is checked
		`grep -X /x x.txt`, // -X is GNU-only: every word is checked
		`grep --colr /x x.txt`,
		`grep x x.txt -e /y secret`, // after the first operand, an -e value is checked too
		`grep -f /tmp/p x.txt`,
		`grep -fsecret x.txt`,
		`grep x x.txt -f secret`,
	}
	for _, c := range allow {
		if d := g.Decide("run_cmd", cmdParams(c)); !d.Allowed() {
			t.Errorf("%q: %s %s", c, d.BlastClass, d.Reason)
		}
	}
	for _, c := range block {
		if d := g.Decide("run_cmd", cmdParams(c)); d.Allowed() {
			t.Errorf("%q: allowed", c)
		}
	}
}

// The gate is immutable after NewGate: many goroutines may decide at once
// (run with -race).
func TestGateConcurrentDecide(t *testing.T) {
	g := newTestGate(t, nil)
	calls := []struct {
		tool   string
		params map[string]any
		allow  bool
	}{
		{"run_cmd", cmdParams("ls -la src/ && grep -rn x ."), true},
		{"run_cmd", cmdParams("echo $(id)"), false},
		{"run_cmd", cmdParams("cat *.txt"), true},
		{"run_cmd", cmdParams("cat etc-link/passwd"), false},
		{"read_file", map[string]any{"path": "src/main.py"}, true},
		{"write_file", map[string]any{"path": ".git/config", "content": "x"}, false},
		{"run_cmd", cmdParams("cd src && grep -rn --exclude=x main . 2>&1 | head -n 3"), true},
		{"run_cmd", cmdParams("git log --oneline -3 && sed -n 1p x.txt && find . -name '*.py'"), true},
		{"run_cmd", cmdParams("mypy --no-strict-optional --install src"), false},
		{"edit_file", map[string]any{"path": "x.txt", "old": "x", "new": "y"}, true},
	}
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 300; i++ {
				c := calls[(i+w)%len(calls)]
				if got := g.Decide(c.tool, c.params).Allowed(); got != c.allow {
					errs <- c.tool + " " + c.params[firstKey(c.params)].(string)
					return
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Errorf("concurrent decision flipped: %s", e)
	}
}

func firstKey(m map[string]any) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys[0]
}

// The denylist matches on word boundaries over parsed words: the words
// that made the seed's substring list cry wolf pass, and quoting cannot
// split a phrase.
func TestGateDenylistBoundaries(t *testing.T) {
	g := newTestGate(t, nil)
	for _, c := range []string{"cat curling.txt", "grep -rn installer .", "ls src/etc/x", "ls tests/dev/x", "cat .venv/bin/activate",
		"grep -rn nc_total .", "echo homework", "grep -rn su_do .", "cat backup~", "echo pipeline", "grep -rn scp_ .", "mkdir -p build/usr"} {
		if d := g.Decide("run_cmd", cmdParams(c)); !d.Allowed() {
			t.Errorf("%q: %s %s", c, d.BlastClass, d.Reason)
		}
	}
	for _, c := range []string{"echo CURL", `echo "x; curl"`, "echo 'x/usr/bin/curl'", `python3 -c "import os;os.system('rm  -rf  /')"`,
		"echo '~/x'", "echo 'a $HOME'", "echo /etc/passwd", "echo 'x=/root'", `echo "pip  install"`,
		"echo ../etc/passwd", `python3 -c "open('../../../etc/shadow')"`, "echo src/../../usr/bin/x", "cat .//..//etc/x"} {
		if d := g.Decide("run_cmd", cmdParams(c)); d.BlastClass != evidence.ClassDestructive {
			t.Errorf("%q: %s %s", c, d.BlastClass, d.Reason)
		}
	}
}

// edit_file follows write_file's path rules and checks its texts; list_dir
// follows read_file's.
func TestGateEditFileAndListDir(t *testing.T) {
	g := newTestGate(t, mustPolicy(t, `{"limits": {"file_size_mb": 1}}`))
	edit := func(p string, old, nw any) Decision {
		params := map[string]any{"path": p}
		if old != nil {
			params["old"] = old
		}
		if nw != nil {
			params["new"] = nw
		}
		return g.Decide(ToolEditFile, params)
	}
	if d := edit("src/main.py", "print(1)", "print(2)"); !d.Allowed() || d.BlastClass != evidence.ClassLocalWrite || d.Path != "src/main.py" || d.Reason != "edit inside sandbox" {
		t.Errorf("edit: %+v", d)
	}
	if d := edit("./src//main.py", "x", ""); !d.Allowed() || d.Path != "src/main.py" {
		t.Errorf("an empty replacement deletes text: %+v", d)
	}
	big := strings.Repeat("x", 2<<20)
	for _, tt := range []struct {
		d     Decision
		class evidence.Class
		why   string
	}{
		{edit(".git/config", "a", "b"), evidence.ClassProtectedPath, "protected"},
		{edit(".github/workflows/ci.yml", "a", "b"), evidence.ClassProtectedPath, "workflows"},
		{edit("../x", "a", "b"), evidence.ClassOutOfSandboxWrite, "outside"},
		{edit("secret", "a", "b"), evidence.ClassOutOfSandboxWrite, "a link out"},
		{edit("src/main.py", "", "b"), evidence.ClassMalformed, "empty old"},
		{edit("src/main.py", nil, "b"), evidence.ClassMalformed, "missing old"},
		{edit("src/main.py", "a", nil), evidence.ClassMalformed, "missing new"},
		{edit("src/main.py", 1.0, "b"), evidence.ClassMalformed, "old not a string"},
		{edit("src/main.py", "a", false), evidence.ClassMalformed, "new not a string"},
		{edit("src/main.py", big, "b"), evidence.ClassMalformed, "old over the size cap"},
		{edit("src/main.py", "a", big), evidence.ClassMalformed, "new over the size cap"},
		{edit("src/", "a", "b"), evidence.ClassMalformed, "a directory"},
		{edit(".", "a", "b"), evidence.ClassMalformed, "the sandbox root"},
		{g.Decide(ToolEditFile, map[string]any{"path": "x.txt", "old": "a", "new": "b", "count": 2.0}), evidence.ClassMalformed, "unknown parameter"},
	} {
		if tt.d.Verdict != evidence.VerdictBlock || tt.d.BlastClass != tt.class {
			t.Errorf("edit_file, %s: %+v, want BLOCK %s", tt.why, tt.d, tt.class)
		}
	}
	list := func(p any) Decision { return g.Decide(ToolListDir, map[string]any{"path": p}) }
	for _, p := range []string{".", "src", "./src/", ".git", "missing"} {
		if d := list(p); !d.Allowed() || d.BlastClass != evidence.ClassLocalRead || d.Reason != "list inside sandbox" {
			t.Errorf("list_dir %q: %+v", p, d)
		}
	}
	if d := list("."); d.Path != "." {
		t.Errorf("list_dir . Path %q", d.Path)
	}
	for _, p := range []any{"..", "etc-link", "/etc", "tmp-link/x", "~", "$HOME", 3.0, ""} {
		if d := list(p); d.Allowed() {
			t.Errorf("list_dir %v allowed", p)
		}
	}
	if d := g.Decide(ToolListDir, map[string]any{"path": ".", "recursive": true}); d.BlastClass != evidence.ClassMalformed {
		t.Errorf("unknown parameter: %+v", d)
	}
	if got := Tools(); strings.Join(got, ",") != "edit_file,list_dir,read_file,run_cmd,write_file" {
		t.Errorf("Tools %q", got)
	}
	if got := ToolParams(ToolEditFile); strings.Join(got, ",") != "path,old,new" {
		t.Errorf("ToolParams %q", got)
	}
}

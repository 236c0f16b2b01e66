package gate

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/deponent-dev/deponent-action/pkg/canon"
)

func TestPolicyDefault(t *testing.T) {
	p := DefaultPolicy()
	l := p.Limits()
	if l.CPUSeconds != 60 || l.FileSizeMB != 256 || l.MemoryMB != 2048 || l.Wall() != 90*time.Second || l.Tasks != 1024 || l.DiskMB != 4096 {
		t.Errorf("limits %+v, want the seed's 60 256 2048 90s and the jail's 1024 tasks, 4096 MiB of disk", l)
	}
	want := append([]string(nil), defaultAllowHeads...)
	sort.Strings(want)
	if !reflect.DeepEqual(p.AllowHeads, want) {
		t.Errorf("AllowHeads %q", p.AllowHeads)
	}
	if len(p.Deny) != len(defaultDenyRules) {
		t.Errorf("Deny has %d phrases, want %d", len(p.Deny), len(defaultDenyRules))
	}
	empty, err := ParsePolicy([]byte(" {} "))
	if err != nil {
		t.Fatal(err)
	}
	if empty.SHA256() != p.SHA256() {
		t.Error("{} must be the default policy")
	}
	if len(p.EnvPass()) != 0 || p.TrustedPath != nil {
		t.Error("default policy passes environment or fixes the PATH")
	}
}

// Every error names the key, and no mistake is silently ignored.
func TestPolicyParseErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"alow_heads": ["ls"]}`, `policy: unknown key "alow_heads" (did you mean "allow_heads"?)`},
		{`{"Allow_Heads": ["ls"]}`, `unknown key "Allow_Heads" (did you mean "allow_heads"?)`},
		{`{"extra_allow": ["ls"]}`, `unknown key "extra_allow" (did you mean "extra_allow_heads"?)`},
		{`{"zzz": 1}`, `unknown key "zzz" (known keys:`},
		{`{"limits": {"cpu": 5}}`, `unknown key "limits.cpu"`},
		{`{"limits": {"cpu_second": 5}}`, `unknown key "limits.cpu_second" (did you mean "limits.cpu_seconds"?)`},
		{`{"deny": ["a"], "deny": []}`, `line 1, column 17 (byte 16): duplicate key "deny"`},
		{`{"limits": {"memory_mb": 1, "memory_mb": 2}}`, `line 1, column 29 (byte 28): duplicate key "memory_mb"`},
		{`{"env": {"A": "1", "A": "2"}}`, `line 1, column 20 (byte 19): duplicate key "A"`},
		{`{"allow_heads": "ls"}`, `key "allow_heads": expected an array of strings, got a string`},
		{`{"allow_heads": null}`, `key "allow_heads": expected an array of strings, got null`},
		{`{"allow_heads": ["ls", 3]}`, `key "allow_heads[1]": expected a string, got a number`},
		{`{"limits": 5}`, `key "limits": expected an object`},
		{`{"limits": {"cpu_seconds": "60"}}`, `key "limits.cpu_seconds": expected an integer, got a string`},
		{`{"limits": {"cpu_seconds": 1.5}}`, `key "limits.cpu_seconds": expected an integer`},
		{`{"limits": {"cpu_seconds": 0}}`, `key "limits.cpu_seconds": must be between 1 and 21600, got 0`},
		{`{"limits": {"memory_mb": -1}}`, `key "limits.memory_mb": must be between 1`},
		{`{"limits": {"wall_seconds": 99999999999999999999}}`, `key "limits.wall_seconds": expected an integer`},
		{`{"version": 2}`, `key "version": unsupported version 2`},
		{`{"version": "1"}`, `key "version": expected an integer`},
		{`{"env": {"PATH": "/tmp"}}`, `key "env.PATH": PATH is controlled by the jail`},
		{`{"env": {"HOME": "/tmp"}}`, `key "env.HOME"`},
		{`{"env": {"LD_PRELOAD": "x"}}`, `key "env.LD_PRELOAD": LD_* variables`},
		{`{"env": {"BASH_FUNC_ls%%": "x"}}`, `key "env.BASH_FUNC_ls%%"`},
		{`{"env": {"A": 1}}`, `key "env.A": expected a string, got a number`},
		{`{"env_pass": ["GITHUB_TOKEN"]}`, `key "env_pass": "GITHUB_TOKEN": GITHUB_*`},
		{`{"env_pass": ["ACTIONS_RUNTIME_TOKEN"]}`, `"ACTIONS_RUNTIME_TOKEN": ACTIONS_*`},
		{`{"env_pass": ["NPM_TOKEN"]}`, `"NPM_TOKEN": names with a TOKEN part`},
		{`{"env_pass": ["OPENAI_API_KEY"]}`, `"OPENAI_API_KEY": names containing API_KEY`},
		{`{"env_pass": ["DB_PASSWORD"]}`, `"DB_PASSWORD": names containing PASSWORD`},
		{`{"env_pass": ["tmpdir"]}`, `"tmpdir": tmpdir is controlled by the jail`},
		{`{"env_pass": ["A-B"]}`, `"A-B": must match`},
		{`{"env": {"X": "1"}, "env_pass": ["X"]}`, `"X" is also set in "env"`},
		{`{"allow_heads": ["bash"]}`, `key "allow_heads": "bash" is a shell or program launcher`},
		{`{"extra_allow_heads": ["xargs"]}`, `key "extra_allow_heads": "xargs" is a shell or program launcher`},
		{`{"extra_allow_heads": ["cd"]}`, `"cd" is a shell builtin`},
		{`{"extra_allow_heads": ["eval"]}`, `"eval" is a shell builtin`},
		{`{"extra_allow_heads": ["./tool"]}`, `"./tool" must be a bare program name`},
		{`{"extra_allow_heads": ["-x"]}`, `"-x" must be a bare program name`},
		{`{"extra_allow_heads": [""]}`, `"" must be a program name`},
		{`{"deny": [" "]}`, `key "deny": " " must not be blank`},
		{`{"extra_deny": ["x\u200by"]}`, `key "extra_deny"`},
		{`{"allow_executables": ["gradlew"]}`, `key "allow_executables": "gradlew" must be a path inside the sandbox written as "./path"`},
		{`{"allow_executables": ["./a/../b"]}`, `"./a/../b" must be clean`},
		{`{"allow_executables": ["./../b"]}`, `"./../b" must be clean`},
		{`{"allow_executables": ["./*"]}`, `"./*" must not contain`},
		{`{"extra_protected_paths": ["../x"]}`, `key "extra_protected_paths": "../x" must be a relative path`},
		{`{"extra_protected_paths": ["/etc"]}`, `key "extra_protected_paths": "/etc"`},
		{`{"extra_protected_paths": ["."]}`, `key "extra_protected_paths": "."`},
		{`{"trusted_path": []}`, `key "trusted_path": must list at least one directory`},
		{`{"trusted_path": ["bin"]}`, `key "trusted_path": "bin" must be a clean absolute directory`},
		{`{"trusted_path": ["/a:/b"]}`, `"/a:/b" must be a clean absolute directory without ':'`},
		{`{"version": 1} {}`, `policy: invalid JSON: line 1, column 16 (byte 15): unexpected data after the JSON value`},
		{`{"version": 1} x`, `unexpected data after the JSON value: 'x'`},
		{`{"version": 1,}`, `policy: invalid JSON`},
		{`[1]`, `policy: expected a JSON object, got an array`},
		{`"x"`, `policy: expected a JSON object, got a string`},
		{``, `policy: empty document`},
		{`{"a": ` + strings.Repeat("[", 40) + strings.Repeat("]", 40) + `}`, `nesting deeper than 16 levels`},
		{`{`, `policy: invalid JSON: line 1, column 2 (byte 1)`},
	}
	for _, tt := range tests {
		_, err := ParsePolicy([]byte(tt.in))
		if err == nil {
			t.Errorf("%s: accepted", tt.in)
			continue
		}
		if !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s:\n\tgot  %v\n\twant %s", tt.in, err, tt.want)
		}
	}
}

func TestPolicyParseEffective(t *testing.T) {
	p := mustPolicy(t, `{
		"version": 1,
		"allow_heads": ["ls", "cat", "ls"],
		"extra_allow_heads": ["make"],
		"deny": ["  Foo   BAR "],
		"extra_deny": ["baz"],
		"allow_executables": ["./gradlew", "./tools/x"],
		"extra_protected_paths": ["Docs/", "./secrets", ".git"],
		"limits": {"cpu_seconds": 5, "wall_seconds": 7},
		"env": {"GRADLE_OPTS": "-Xmx1g"},
		"env_pass": ["JAVA_HOME", "LANG"],
		"trusted_path": ["/usr/bin", "/bin", "/usr/bin"]
	}`)
	if want := []string{"cat", "ls", "make"}; !reflect.DeepEqual(p.AllowHeads, want) {
		t.Errorf("AllowHeads %q", p.AllowHeads)
	}
	if want := []string{"baz", "foo bar"}; !reflect.DeepEqual(p.Deny, want) {
		t.Errorf("Deny %q", p.Deny)
	}
	if want := []string{"Docs", "secrets"}; !reflect.DeepEqual(p.ExtraProtectedPaths, want) {
		t.Errorf("ExtraProtectedPaths %q", p.ExtraProtectedPaths)
	}
	if want := []string{"/usr/bin", "/bin"}; !reflect.DeepEqual(p.TrustedPath, want) {
		t.Errorf("TrustedPath %q (order is the search order)", p.TrustedPath)
	}
	if l := p.Limits(); l.CPUSeconds != 5 || l.FileSizeMB != 256 || l.MemoryMB != 2048 || l.Wall() != 7*time.Second {
		t.Errorf("limits %+v", l)
	}
	t.Setenv("JAVA_HOME", "/opt/jdk")
	os.Unsetenv("LANG")
	if got, want := p.EnvPass(), map[string]string{"GRADLE_OPTS": "-Xmx1g", "JAVA_HOME": "/opt/jdk"}; !reflect.DeepEqual(got, want) {
		t.Errorf("EnvPass %v, want %v", got, want)
	}
	// Extending without replacing keeps the defaults.
	q := mustPolicy(t, `{"extra_allow_heads": ["make"]}`)
	if len(q.AllowHeads) != len(defaultAllowHeads)+1 {
		t.Errorf("extend: %q", q.AllowHeads)
	}
}

// The hash is of the effective policy: spelling does not change it,
// meaning does.
func TestPolicySHA256(t *testing.T) {
	base := mustPolicy(t, `{"extra_allow_heads": ["make", "tee"], "env": {"A": "1", "B": "2"}, "limits": {"memory_mb": 4096}}`)
	same := []string{
		`{"limits": {"memory_mb": 4096}, "env": {"B": "2", "A": "1"}, "extra_allow_heads": ["tee", "make", "make"]}`,
		`{"version": 1, "extra_allow_heads": ["tee", "make"], "env": {"A": "1", "B": "2"}, "limits": {"memory_mb": 4096, "cpu_seconds": 60}}`,
		"{\n\"extra_allow_heads\":[\"make\",\"tee\"],\"env\":{\"A\":\"1\",\"B\":\"2\"},\"limits\":{\"memory_mb\":4096}}\n",
	}
	for _, s := range same {
		if got := mustPolicy(t, s).SHA256(); got != base.SHA256() {
			t.Errorf("%s: hash differs", s)
		}
	}
	variants := []string{
		`{}`,
		`{"extra_allow_heads": ["make"], "env": {"A": "1", "B": "2"}, "limits": {"memory_mb": 4096}}`,
		`{"extra_allow_heads": ["make", "tee"], "env": {"A": "1", "B": "3"}, "limits": {"memory_mb": 4096}}`,
		`{"extra_allow_heads": ["make", "tee"], "env": {"A": "1", "B": "2"}, "limits": {"memory_mb": 4097}}`,
		`{"extra_allow_heads": ["make", "tee"], "env": {"A": "1", "B": "2"}, "limits": {"memory_mb": 4096}, "extra_deny": ["x"]}`,
		`{"extra_allow_heads": ["make", "tee"], "env": {"A": "1", "B": "2"}, "limits": {"memory_mb": 4096}, "env_pass": ["LANG"]}`,
		`{"extra_allow_heads": ["make", "tee"], "env": {"A": "1", "B": "2"}, "limits": {"memory_mb": 4096}, "trusted_path": ["/usr/bin"]}`,
		`{"extra_allow_heads": ["make", "tee"], "env": {"A": "1", "B": "2"}, "limits": {"memory_mb": 4096}, "trusted_path": ["/usr/bin", "/bin"]}`,
		`{"extra_allow_heads": ["make", "tee"], "env": {"A": "1", "B": "2"}, "limits": {"memory_mb": 4096}, "trusted_path": ["/bin", "/usr/bin"]}`,
		`{"extra_allow_heads": ["make", "tee"], "env": {"A": "1", "B": "2"}, "limits": {"memory_mb": 4096}, "extra_protected_paths": ["x"]}`,
		`{"extra_allow_heads": ["make", "tee"], "env": {"A": "1", "B": "2"}, "limits": {"memory_mb": 4096}, "allow_executables": ["./x"]}`,
	}
	seen := map[string]string{base.SHA256(): "base"}
	for _, v := range variants {
		h := mustPolicy(t, v).SHA256()
		if prev, dup := seen[h]; dup {
			t.Errorf("%s hashes like %s", v, prev)
		}
		seen[h] = v
	}
	if h := base.SHA256(); len(h) != 64 || strings.Trim(h, "0123456789abcdef") != "" {
		t.Errorf("SHA256 %q is not lower-case hex", h)
	}
	if again := base.clone(); base.SHA256() != again.SHA256() {
		t.Error("unstable")
	}
}

// The canonical rendering is a policy file of its own, parsing back to the
// same effective policy.
func TestPolicyCanonicalJSON(t *testing.T) {
	p := mustPolicy(t, `{"extra_allow_heads": ["make"], "env": {"X": "<&>"}, "trusted_path": ["/usr/bin"], "extra_protected_paths": ["a"]}`)
	c := p.CanonicalJSON()
	if !strings.HasPrefix(string(c), `{"allow_executables": [], "allow_git_writes": [], "allow_heads": ["black", `) || strings.Contains(string(c), "\n") {
		t.Errorf("canonical form %s", c)
	}
	if !strings.Contains(string(c), `"env": {"X": "<&>"}`) {
		t.Errorf("HTML escaping in %s", c)
	}
	// The hash is over the same canonical form as every other Deponent hash.
	v, err := canon.Parse(c, canon.DefaultLimits)
	if err != nil || string(canon.Canonical(v)) != string(c) {
		t.Errorf("not the canonical form C: %v", err)
	}
	q, err := ParsePolicy(c)
	if err != nil {
		t.Fatalf("canonical form does not parse: %v\n%s", err, c)
	}
	if !reflect.DeepEqual(p, q) || q.SHA256() != p.SHA256() {
		t.Errorf("round trip changed the policy:\n%s\n%s", c, q.CanonicalJSON())
	}
	keys := regexp.MustCompile(`"([a-z_]+)":`).FindAllStringSubmatch(string(DefaultPolicy().CanonicalJSON()), -1)
	var top []string
	for _, k := range keys {
		top = append(top, k[1])
	}
	want := []string{"allow_executables", "allow_git_writes", "allow_heads", "deny", "env", "env_pass", "extra_protected_paths",
		"limits", "cpu_seconds", "disk_mb", "file_size_mb", "memory_mb", "tasks", "wall_seconds", "python_modules", "version"}
	if !reflect.DeepEqual(top, want) {
		t.Errorf("canonical keys %q, want %q", top, want)
	}
}

func TestPolicyKeys(t *testing.T) {
	want := []string{"allow_executables", "allow_git_writes", "allow_heads", "deny", "env", "env_pass", "extra_allow_heads", "extra_deny",
		"extra_protected_paths", "extra_python_modules", "limits", "limits.cpu_seconds", "limits.disk_mb", "limits.file_size_mb",
		"limits.memory_mb", "limits.tasks", "limits.wall_seconds", "python_modules", "trusted_path", "version"}
	if got := PolicyKeys(); !reflect.DeepEqual(got, want) {
		t.Errorf("PolicyKeys %q", got)
	}
	// Every key the parser accepts parses (an unknown one would not).
	for _, k := range PolicyKeys() {
		if strings.Contains(k, ".") {
			continue
		}
		if _, err := ParsePolicy([]byte(`{"` + k + `": 0}`)); err != nil && strings.Contains(err.Error(), "unknown key") {
			t.Errorf("%s: %v", k, err)
		}
	}
}

// The Policy doc comment documents every key the parser accepts, with its
// type and default, so docs/policy.md can be written from it.
func TestPolicyDocCommentListsEveryKey(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "policy.go", nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	var doc string
	ast.Inspect(f, func(n ast.Node) bool {
		if gd, ok := n.(*ast.GenDecl); ok && gd.Tok == token.TYPE {
			for _, s := range gd.Specs {
				if ts := s.(*ast.TypeSpec); ts.Name.Name == "Policy" && gd.Doc != nil {
					doc = gd.Doc.Text()
				}
			}
		}
		return true
	})
	for _, k := range PolicyKeys() {
		line := regexp.MustCompile(`(?m)^\s*` + regexp.QuoteMeta(k) + `\s+(integer|\[string\]|object)\s+.*\S`)
		if !line.MatchString(doc) {
			t.Errorf("Policy doc comment does not document %q with a type", k)
		}
	}
}

func TestPolicyFiles(t *testing.T) {
	valid, _ := filepath.Glob("testdata/policy/*.json")
	if len(valid) == 0 {
		t.Fatal("no example policies")
	}
	for _, f := range valid {
		p, err := LoadPolicy(f)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if _, err := NewGate(t.TempDir(), p); err != nil {
			t.Errorf("%s: NewGate: %v", f, err)
		}
	}
	invalid := map[string]string{
		"typo.json":        `unknown key "alow_heads" (did you mean "allow_heads"?)`,
		"nested-typo.json": `unknown key "limits.cpu_second"`,
		"duplicate.json":   `duplicate key "deny"`,
		"wrong-type.json":  `key "allow_heads": expected an array of strings`,
		"bad-limit.json":   `key "limits.memory_mb"`,
		"secret-env.json":  `"GITHUB_TOKEN"`,
		"jail-env.json":    `key "env.PATH"`,
		"launcher.json":    `"bash" is a shell or program launcher`,
		"trailing.json":    `unexpected data after the JSON value`,
		"executable.json":  `key "allow_executables"`,
		"node.json":        `"node" has no model in the gate's catalogue`,
		"module.json":      `key "python_modules": "pip" has no model`,
		"git-writes.json":  `key "allow_git_writes": "push" is not a git subcommand`,
		"option-env.json":  `key "env.PYTEST_ADDOPTS"`,
	}
	files, _ := filepath.Glob("testdata/policy/invalid/*.json")
	if len(files) != len(invalid) {
		t.Errorf("%d invalid examples on disk, %d in the table", len(files), len(invalid))
	}
	for name, want := range invalid {
		f := filepath.Join("testdata/policy/invalid", name)
		_, err := LoadPolicy(f)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), f) {
			t.Errorf("%s: got %v, want an error naming the file and containing %q", f, err, want)
		}
	}
	if _, err := LoadPolicy("testdata/policy/does-not-exist.json"); err == nil || !strings.Contains(err.Error(), "does-not-exist.json") {
		t.Errorf("missing file: %v", err)
	}
}

// A hand-built Policy is validated by NewGate; zero limits mean defaults.
func TestPolicyHandBuilt(t *testing.T) {
	dir := t.TempDir()
	if _, err := NewGate(dir, &Policy{AllowHeads: []string{"sh"}}); err == nil {
		t.Error("hand-built policy allowing sh accepted")
	}
	if _, err := NewGate(dir, &Policy{ResourceLimits: PolicyLimits{CPUSeconds: -1}}); err == nil {
		t.Error("negative limit accepted")
	}
	g, err := NewGate(dir, &Policy{AllowHeads: []string{"ls"}})
	if err != nil {
		t.Fatal(err)
	}
	if l := g.Policy().Limits(); l.CPUSeconds != 60 || l.Tasks != 1024 || l.DiskMB != 4096 || l.Wall() != 90*time.Second {
		t.Errorf("zero limits should mean the defaults, got %+v", l)
	}
	if g.Decide("run_cmd", cmdParams("cat x")).Allowed() || !g.Decide("run_cmd", cmdParams("ls")).Allowed() {
		t.Error("hand-built allowlist not applied")
	}
	if (&Policy{AllowHeads: []string{"ls"}}).SHA256() != g.Policy().SHA256() {
		t.Error("hash of a hand-built policy should be of its normalized form")
	}
}

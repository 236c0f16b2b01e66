package gate

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The shapes issue 12 added — cd, NAME=value prefixes, redirects to
// /dev/null and 2>&1 before a pipe — render to scripts that /bin/sh runs
// as the agent meant. Each script is run here, unjailed, in a throwaway
// sandbox (they only read and write inside it), and its output checked:
// the positive control for the gate's rendering.
func TestRenderedScriptsRun(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("SKIPPING: no sh on PATH")
	}
	sb, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{
		"x.txt": "alpha\nbeta\n", "src/mod.py": "VALUE = 42\n", "src/main.py": "print('main ran')\n",
		"data.json": `{"b": 1, "a": 2}`, "sub/dir/f.txt": "deep\n",
	} {
		p := filepath.Join(sb, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	g, err := NewGate(sb, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, havePython := exec.LookPath("python3")
	tests := []struct {
		cmd, want string
		python    bool
	}{
		{cmd: "cd sub/dir && cat f.txt", want: "deep\n"},
		{cmd: "cd sub && cd dir && ls", want: "f.txt\n"},
		{cmd: "cd src && ls *.py", want: "main.py\nmod.py\n"},
		{cmd: "ls missing 2>/dev/null || echo gone", want: "gone\n"},
		{cmd: "cat missing 2>&1 | wc -l", want: "1\n"},
		{cmd: "ls >/dev/null 2>&1 && echo quiet", want: "quiet\n"},
		{cmd: "sed -n 2p x.txt", want: "beta\n"},
		{cmd: "grep -n \"ta$\" x.txt", want: "2:beta\n"},
		{cmd: "cp x.txt y.txt && mv y.txt z.txt && cat z.txt && rm z.txt", want: "alpha\nbeta\n"},
		{cmd: "find sub -name '*.txt'", want: "sub/dir/f.txt\n"},
		{cmd: "PYTHONPATH=src python3 -c 'import mod; print(mod.VALUE)'", want: "42\n", python: true},
		{cmd: "cd src && python3 -m main", want: "main ran\n", python: true},
		{cmd: "python3 -m json.tool --sort-keys data.json", want: "{\n    \"a\": 2,\n    \"b\": 1\n}\n", python: true},
	}
	for _, tt := range tests {
		if tt.python && havePython != nil {
			t.Logf("SKIPPING %q: no python3", tt.cmd)
			continue
		}
		d := g.Decide("run_cmd", map[string]any{"cmd": tt.cmd})
		if !d.Allowed() {
			t.Errorf("%q: %s %s", tt.cmd, d.BlastClass, d.Reason)
			continue
		}
		c := exec.Command(sh, "-c", d.Script)
		c.Dir = sb
		c.Env = []string{"PATH=" + g.TrustedPATH(), "LC_ALL=C"}
		out, err := c.Output()
		if err != nil || string(out) != tt.want {
			t.Errorf("%q ran as %q: %v\n\tgot  %q\n\twant %q", tt.cmd, d.Script, err, out, tt.want)
		}
		if strings.Contains(d.Script, "$") && !strings.Contains(tt.cmd, "$") {
			t.Errorf("%q: a $ appeared in the rendering %q", tt.cmd, d.Script)
		}
	}
}

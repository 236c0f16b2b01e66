package gate

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deponent-dev/deponent-action/pkg/evidence"
)

// dollarOutsideSingleQuotes is an oracle written independently of the
// parser: it reports a `$` or backquote that sh would not treat as plain
// text inside single quotes (escaped ones included, comments excluded),
// except a `$` inside double quotes that no shell expands ("a$", "$|").
// It tracks only plain, single- and double-quoted text, which is exact up
// to the first `$` or backquote — all it needs to find.
func dollarOutsideSingleQuotes(s string) bool {
	const (
		plain = iota
		single
		double
	)
	state, wordStart := plain, true
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch state {
		case single:
			if c == '\'' {
				state = plain
			}
			continue
		case double:
			switch c {
			case '$':
				// A `$` that no shell expands: before the closing quote or
				// a character that cannot start an expansion.
				if i+1 < len(s) && strings.IndexByte("\")|/.,:;]}=+%^&<>\\ \t\n", s[i+1]) >= 0 {
					continue
				}
				return true
			case '`':
				return true
			case '\\':
				i++
				if i < len(s) && (s[i] == '$' || s[i] == '`') {
					return true
				}
			case '"':
				state = plain
			}
			continue
		}
		switch c {
		case '$', '`':
			return true
		case '\\':
			if i+1 < len(s) && s[i+1] == '\n' { // line continuation: not a character
				i++
				continue
			}
			i++
			if i < len(s) && (s[i] == '$' || s[i] == '`') {
				return true
			}
			wordStart = false
			continue
		case '\'':
			state = single
		case '"':
			state = double
		case '#':
			if wordStart {
				for i < len(s) && s[i] != '\n' {
					i++
				}
				wordStart = true
				continue
			}
		}
		wordStart = strings.IndexByte(" \t\n;&|()<>", c) >= 0
	}
	return false
}

func addRedteamSeeds(f *testing.F, tool string) {
	for _, file := range []string{"testdata/redteam/gate-public.jsonl", "testdata/redteam/gate-extra.jsonl"} {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		for _, line := range strings.Split(string(data), "\n") {
			c := redteamCase{}
			if line == "" || json.Unmarshal([]byte(line), &c) != nil || c.Tool != tool {
				continue
			}
			for _, v := range c.Params {
				if s, ok := v.(string); ok && len(s) < 4096 {
					f.Add(s)
				}
			}
		}
	}
}

// FuzzGateRunCmd: any input yields a decision, never a panic, and
//   - every decision is ALLOW or BLOCK with a class and a reason;
//   - if the input has a `$` or backquote outside single quotes (and
//     outside comments), per the independent oracle above, it is BLOCKed;
//   - if ALLOW, the Script re-parses to simple commands whose words are
//     all single-quoted text (so nothing is left for sh to expand), and
//     deciding the Script again gives the same Script (a fixed point).
func FuzzGateRunCmd(f *testing.F) {
	addRedteamSeeds(f, "run_cmd")
	for _, s := range []string{
		"ls -la", "echo 'a'\\''b'", "echo \"a\\\"b\" c\\ d", "ls \\\n#$x", "ls #$x", "ls a#$x", "cat <<'E'\n$x\nE",
		"echo \\$\\(id\\)", "echo $'\\x41'", "ls *.txt */", "grep -rn \"/api/\" src", "python3 -c 'print($x)'",
		"sort -o/tmp/x d", "touch .GIT/hooks/x", "echo ok\nshred secret", "ls &make", "l\u200bs", strings.Repeat("(", 40),
	} {
		f.Add(s)
	}
	g := newTestGate(f, nil)
	f.Fuzz(func(t *testing.T, cmd string) {
		d := g.Decide("run_cmd", map[string]any{"cmd": cmd})
		if (d.Verdict != evidence.VerdictAllow && d.Verdict != evidence.VerdictBlock) || d.BlastClass == "" || d.Reason == "" {
			t.Fatalf("%q: incomplete decision %+v", cmd, d)
		}
		if d.BlastClass == evidence.ClassGateFailure {
			t.Fatalf("%q: the gate panicked: %s", cmd, d.Reason)
		}
		if !d.Allowed() {
			if d.Script != "" || d.Path != "" {
				t.Fatalf("%q: BLOCK carries a Script or Path: %+v", cmd, d)
			}
			return
		}
		if dollarOutsideSingleQuotes(cmd) {
			t.Fatalf("%q: ALLOWed a command with $ or ` outside single quotes: %q", cmd, d.Script)
		}
		if d.BlastClass != evidence.ClassLocalExec || d.Script == "" || strings.IndexByte(d.Script, 0) >= 0 {
			t.Fatalf("%q: bad ALLOW %+v", cmd, d)
		}
		scriptWords(t, d.Script) // fails unless every word is single-quoted text
		again := g.Decide("run_cmd", map[string]any{"cmd": d.Script})
		if !again.Allowed() || again.Script != d.Script {
			t.Fatalf("%q: Script %q is not a fixed point: %s %s %q", cmd, d.Script, again.Verdict, again.Reason, again.Script)
		}
	})
}

// FuzzGatePath: any read_file/write_file path yields a decision; an ALLOW
// carries a clean relative Path that, opened from the sandbox, stays
// inside it; a write is never to a protected path.
func FuzzGatePath(f *testing.F) {
	addRedteamSeeds(f, "read_file")
	addRedteamSeeds(f, "write_file")
	for _, s := range []string{"x.txt", "a/../b", "/etc/passwd", "secret/x", "etc-link/../x.txt", ".GIT./config", "src//main.py/", "\x00"} {
		f.Add(s)
	}
	g := newTestGate(f, nil)
	f.Fuzz(func(t *testing.T, p string) {
		for _, tool := range []string{"read_file", "write_file"} {
			params := map[string]any{"path": p}
			if tool == "write_file" {
				params["content"] = ""
			}
			d := g.Decide(tool, params)
			if d.BlastClass == "" || d.Reason == "" || d.BlastClass == evidence.ClassGateFailure {
				t.Fatalf("%s %q: incomplete or failed decision %+v", tool, p, d)
			}
			if !d.Allowed() {
				continue
			}
			rel := d.Path
			if rel == "" || strings.HasPrefix(rel, "/") || filepath.ToSlash(filepath.Clean(rel)) != rel ||
				rel == ".." || strings.HasPrefix(rel, "../") {
				t.Fatalf("%s %q: Path %q is not clean and relative", tool, p, rel)
			}
			if real, err := filepath.EvalSymlinks(filepath.Join(g.Sandbox(), rel)); err == nil {
				if _, inside := cutUnderRoot(real, g.Sandbox()); !inside {
					t.Fatalf("%s %q: Path %q resolves to %q, outside", tool, p, rel, real)
				}
			}
			if tool == "write_file" {
				if _, prot := matchProtected(g.anchored, rel); prot {
					t.Fatalf("write %q: allowed into protected %q", p, rel)
				}
			}
		}
	})
}

// FuzzPolicy: ParsePolicy never panics, and any accepted policy
// re-serialises (CanonicalJSON) and re-parses to the same SHA256.
func FuzzPolicy(f *testing.F) {
	files, _ := filepath.Glob("testdata/policy/*.json")
	more, _ := filepath.Glob("testdata/policy/invalid/*.json")
	for _, file := range append(files, more...) {
		if data, err := os.ReadFile(file); err == nil {
			f.Add(data)
		}
	}
	for _, s := range []string{`{}`, `{"env":{"A":"\u0000"}}`, `{"limits":{"cpu_seconds":1e2}}`, `{"deny":["A  b"]}`,
		`{"trusted_path":["/usr/bin","/usr/bin/"]}`, `{"extra_protected_paths":["a/./b/"]}`, `[]`, `{"a":{"b":{}}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParsePolicy(data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "policy: ") {
				t.Fatalf("error without the policy: prefix: %v", err)
			}
			return
		}
		c := p.CanonicalJSON()
		q, err := ParsePolicy(c)
		if err != nil {
			t.Fatalf("canonical form of an accepted policy is refused: %v\n%s", err, c)
		}
		if q.SHA256() != p.SHA256() {
			t.Fatalf("SHA256 changed across a round trip:\n%s\n%s", c, q.CanonicalJSON())
		}
	})
}

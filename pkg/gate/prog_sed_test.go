package gate

import "testing"

var _ = progTable("sed",
	allow("sed -n '1,20p' src/main.py", "issue 12: print lines"),
	allow("sed -i 's/foo/bar/g' src/main.py", "issue 12: in place on a sandbox file"),
	allow("sed -i.bak -e 's/a/b/' x.txt", "a backup beside it"),
	allow("sed -i '' -e 's/a/b/' x.txt", "the macOS spelling"),
	allow("sed -n '/sudo/p' x.txt", "a read-only script is a pattern"),
	allow("sed 's/a/b/w out.txt' x.txt", "a w file inside"),
	allow("sed 'r docs/guide.md' x.txt", "an r file inside"),
	allow("sed -E 's/(a|b)+/X/g' x.txt", "extended"),
	allow("sed ':a;N;$!ba;s/\\n/ /g' x.txt", "labels and branches"),
	allow("sed -n 'w /dev/stdout' x.txt", "the special output file"),
	deny("sed 1e x.txt", cUnsafe, "the e command runs a shell command"),
	deny("sed 's/a/id/e' x.txt", cUnsafe, "the e flag"),
	deny("sed -e 'p' -e '1e id' x.txt", cUnsafe, "e in a second -e"),
	deny("sed 'w /tmp/out' x.txt", cEscape, "w outside"),
	deny("sed 's/x/y/w .git/hooks/pre-commit' x.txt", cProt, "s///w into .git"),
	deny("sed 'r secret' x.txt", cEscape, "r through a link out"),
	deny("sed 'R ../x' x.txt", cEscape, "R outside"),
	deny("sed -i 's/a/b/' .git/config", cProt, "in place on a protected file"),
	deny("sed --in-place=/tmp/ 's/a/b/' x.txt", cUnsafe, "a backup suffix in another directory"),
	deny("sed -f script.sed x.txt", cUnsafe, "a script from a file"),
	deny("sed 's/[/]/x/' x.txt", cUnsafe, "a bracket holding the delimiter"),
	deny("sed '{p' x.txt", cUnsafe, "a script sed cannot read"),
	deny("sed -n p secret", cEscape, "a file through a link out"),
)

func TestProgSed(t *testing.T) { runProgTable(t, "sed") }

// The script reader, command by command, in both flavours.
func TestSedScriptReader(t *testing.T) {
	tests := []struct {
		script    string
		bsd       bool
		files     []string
		danger    bool
		bad       bool
		ambiguous bool
	}{
		{script: "1,5p"},
		{script: "s/a/b/g;p"},
		{script: "/x/,/y/{s/a/b/;p}"},
		{script: "$!N;P;D"},
		{script: "a\\\ntext e id"},
		{script: "a text; e id"},
		{script: "1e id", danger: true},
		{script: "s/a/b/e", danger: true},
		{script: "s/a/b/gpe", danger: true},
		{script: "w out", files: []string{"out"}},
		{script: "s/a/b/w x;y", files: []string{"x;y"}},
		{script: "r in\nw out", files: []string{"in", "out"}},
		{script: "b x;e id", danger: true},
		{script: "b x;e id", bsd: true},
		{script: "y/abc/xyz/"},
		{script: `s/\//x/`},
		{script: "s|a|b|"},
		{script: "s/[[:alpha:]]/x/"},
		{script: "s/[/]/x/", ambiguous: true, bad: true},
		{script: "s/[/]/x/", bsd: true, ambiguous: true},
		{script: "{p", bad: true},
		{script: "}", bad: true},
		{script: "s/a/b", bad: true},
		{script: "f", bad: true},
		{script: "p x", bad: true},
		{script: "w", bad: true},
		{script: "0,/re/d"},
		{script: "1~2d;$q5"},
		{script: "/a/I,+3{=;l 40}"},
	}
	for _, tt := range tests {
		r := readSedScript(tt.script, tt.bsd)
		var files []string
		for _, f := range r.files {
			files = append(files, f.name)
		}
		if (r.danger != "") != tt.danger || (r.err != "") != tt.bad || (r.ambiguous != "") != tt.ambiguous || !equalStrings(files, tt.files) {
			t.Errorf("%q (bsd %v): danger %q err %q ambiguous %q files %q", tt.script, tt.bsd, r.danger, r.err, r.ambiguous, files)
		}
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

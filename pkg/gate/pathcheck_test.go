package gate

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// pathSandbox builds a resolved sandbox with files, directories and links:
//
//	a/b/c.txt, x.txt, d/
//	in -> a/b             (relative, inside)
//	abs-in -> <root>/a    (absolute, inside)
//	chain -> in           (link to a link)
//	up -> ..              (out by one)
//	a/b/esc -> ../../..   (out, from deeper)
//	out -> /etc           (absolute, outside)
//	dangling -> nope/x    (missing target, inside)
//	dangling-out -> /nonexistent
//	loop -> loop          (ELOOP)
//	self -> .             (the root itself)
func pathSandbox(t testing.TB) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"a/b", "d"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"a/b/c.txt", "x.txt"} {
		if err := os.WriteFile(filepath.Join(root, f), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		"in": "a/b", "abs-in": root + "/a", "chain": "in", "up": "..", "a/b/esc": "../../..", "out": "/etc",
		"dangling": "nope/x", "dangling-out": "/nonexistent", "loop": "loop", "self": ".",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestPathResolveIn(t *testing.T) {
	root := pathSandbox(t)
	ok := []struct{ in, want string }{
		{"x.txt", "x.txt"},
		{"./x.txt", "x.txt"},
		{".", "."},
		{"", "."},
		{"a//b/./c.txt", "a/b/c.txt"},
		{"a/b/", "a/b"},
		{"a/b/../../x.txt", "x.txt"},
		{"in/c.txt", "a/b/c.txt"},
		{"chain/c.txt", "a/b/c.txt"},
		{"in/../b/c.txt", "a/b/c.txt"}, // ".." applies to the link's target: a/b/.. is a
		{"abs-in/b", "a/b"},
		{"self/self/x.txt", "x.txt"},
		{"new/dir/file", "new/dir/file"},
		{"new/../x.txt", "x.txt"},
		{"new/../in", "a/b"}, // back in existing territory, the link is followed again
		{"dangling", "nope/x"},
		{"x.txt/../d", "d"},
		{root, "."},
		{root + "/a/b", "a/b"},
		{strings.Repeat("n/", 2000) + "f", strings.Repeat("n/", 2000) + "f"},
	}
	for _, tt := range ok {
		got, perr := resolveIn(root, tt.in)
		if perr != nil || got != tt.want {
			var why string
			if perr != nil {
				why = perr.detail()
			}
			t.Errorf("resolveIn(%q) = %q, %s; want %q", tt.in, got, why, tt.want)
		}
		// resolveStat's existence comes from the resolution's own Lstat
		// calls: it must say what an Lstat of the result says.
		_, there, _ := resolveStat(root, tt.in)
		_, err := os.Lstat(root + "/" + tt.want)
		if there != (err == nil) {
			t.Errorf("resolveStat(%q) exists = %v, Lstat of %q says %v", tt.in, there, tt.want, err)
		}
	}
	bad := []struct {
		in   string
		kind pathErrKind
	}{
		{"..", pathDotDot},
		{"../x", pathDotDot},
		{"a/../..", pathDotDot},
		{"x.txt/../../etc/passwd", pathDotDot},
		{"new/../../x", pathDotDot},
		{"/etc/passwd", pathOutside},
		{"/", pathOutside},
		{root + "2/x", pathOutside}, // same prefix, different directory
		{root + "/../x", pathDotDot},
		{"a\x00b", pathNUL},
		{"up", pathSymlink},
		{"up/x", pathSymlink},
		{"a/b/esc", pathSymlink},
		{"in/esc/x", pathSymlink},
		{"out", pathSymlink},
		{"out/passwd", pathSymlink},
		{"dangling-out", pathSymlink},
		{"loop", pathLoop},
		{"in/../../..", pathDotDot},
	}
	for _, tt := range bad {
		got, perr := resolveIn(root, tt.in)
		if perr == nil || perr.kind != tt.kind {
			t.Errorf("resolveIn(%q) = %q, %v; want error kind %d", tt.in, got, perr, tt.kind)
			continue
		}
		if perr.detail() == "" {
			t.Errorf("resolveIn(%q): empty detail", tt.in)
		}
	}
	_, perr := resolveIn(root, "a/b/esc")
	if perr.link != "a/b/esc" || perr.target != "../../.." {
		t.Errorf("escape names link %q -> %q", perr.link, perr.target)
	}
}

// resolveIn must stay cheap: one allocation for the joined path, then what
// os.Lstat costs per existing component (the name copy for the syscall and
// the FileInfo; a missing one costs its error instead), and nothing for the
// tail after the first missing component.
func TestPathResolveInAllocations(t *testing.T) {
	root := pathSandbox(t)
	for _, tt := range []struct {
		p   string
		max float64
	}{
		{"x.txt", 3},
		{"a/b/c.txt", 7},
		{"new/dir/f", 4},
		{"new/" + strings.Repeat("deeper/", 50) + "f", 5}, // +1: outgrows the 256-byte stack buffer
	} {
		n := testing.AllocsPerRun(200, func() { resolveIn(root, tt.p) })
		if n > tt.max {
			t.Errorf("resolveIn(%q): %.0f allocations, want <= %.0f", tt.p, n, tt.max)
		}
	}
}

func TestPathMatchProtected(t *testing.T) {
	anchored := []string{".deponent", "Docs/Locked"}
	yes := map[string]string{
		".git": ".git", ".git/hooks/pre-commit": ".git", ".GIT/config": ".git", "sub/.git/hooks/x": ".git",
		".git./x": ".git", ".git /x": ".git", ".gi\u200bt/x": ".git", ".deponent/l": ".deponent",
		"docs/locked": "Docs/Locked", "DOCS/LOCKED/x/y": "Docs/Locked",
	}
	for rel, want := range yes {
		got, ok := matchProtected(anchored, rel)
		if !ok || got != want {
			t.Errorf("matchProtected(%q) = %q, %v; want %q", rel, got, ok, want)
		}
	}
	for _, rel := range []string{".", ".gitignore", ".github/workflows/x", "git", "x.git", "docs", "docs/lockedx", "sub/.deponent"} {
		if got, ok := matchProtected(anchored, rel); ok {
			t.Errorf("matchProtected(%q) = %q", rel, got)
		}
	}
}

func TestPathExpandGlob(t *testing.T) {
	root := t.TempDir()
	root, _ = filepath.EvalSymlinks(root)
	for _, f := range []string{"b.txt", "a.txt", "c.py", ".hidden.txt", "src/m.py", "src/n.py", "src/sub/o.py", "lit*.txt", "[x].txt"} {
		p := filepath.Join(root, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("/etc", filepath.Join(root, "out")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		pat  string
		want []string
	}{
		{"*.txt", []string{"[x].txt", "a.txt", "b.txt", "lit*.txt"}},
		{".*.txt", []string{".hidden.txt"}},
		{`\.*.txt`, []string{".hidden.txt"}},
		{"?.py", []string{"c.py"}},
		{"[ab].txt", []string{"a.txt", "b.txt"}},
		{"[^ab]*.txt", []string{"[x].txt", "lit*.txt"}},
		{`lit\*.txt`, nil}, // no live metacharacter: not a glob
		{`lit\**`, []string{"lit*.txt"}},
		{"src/*.py", []string{"src/m.py", "src/n.py"}},
		{"s*/*.py", []string{"src/m.py", "src/n.py"}},
		{"src/*/o.py", []string{"src/sub/o.py"}},
		{"*/", []string{"out/", "src/"}},
		{"src/*/", []string{"src/sub/"}},
		{"*.none", nil},
		{"nodir/*", nil},
		{"[", nil}, // malformed: literal
	}
	for _, tt := range tests {
		got, perr, ok := expandGlob(root, tt.pat, 100)
		if perr != nil || !ok || !reflect.DeepEqual(got, tt.want) && len(got)+len(tt.want) > 0 {
			t.Errorf("expandGlob(%q) = %q, %v, %v; want %q", tt.pat, got, perr, ok, tt.want)
		}
	}
	// Globs are allowed only when every match is inside: a directory
	// matched on the way ("*/" matching the link out) counts as a match.
	for _, pat := range []string{"out/*", "*/*.py"} {
		if _, perr, _ := expandGlob(root, pat, 100); perr == nil || perr.kind != pathSymlink {
			t.Errorf("glob %q through an outward link: %v", pat, perr)
		}
	}
	if _, perr, _ := expandGlob(root, "../*", 100); perr == nil || perr.kind != pathDotDot {
		t.Errorf("glob above the root: %v", perr)
	}
	if _, _, ok := expandGlob(root, "*", 2); ok {
		t.Error("budget not enforced")
	}
}

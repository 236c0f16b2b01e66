package jail

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sexp is a parsed SBPL form: a list, a string literal, or a symbol.
type sexp struct {
	list   []sexp
	isList bool
	str    string // decoded string literal (or regex source)
	isStr  bool
	sym    string
}

func (s sexp) String() string {
	switch {
	case s.isList:
		parts := make([]string, len(s.list))
		for i, e := range s.list {
			parts[i] = e.String()
		}
		return "(" + strings.Join(parts, " ") + ")"
	case s.isStr:
		return fmt.Sprintf("%q", s.str)
	}
	return s.sym
}

// parseSBPL is a small reader for the SBPL subset the generator emits:
// lists, symbols, "strings" with backslash escapes, #"regex" literals and
// ; comments. It is deliberately independent of the generator so that an
// escaping bug shows up as a different parse, not as the same bug twice.
func parseSBPL(t *testing.T, text string) []sexp {
	t.Helper()
	pos := 0
	var parse func() (sexp, bool)
	skip := func() {
		for pos < len(text) {
			switch {
			case text[pos] == ';':
				for pos < len(text) && text[pos] != '\n' {
					pos++
				}
			case strings.ContainsRune(" \t\r\n", rune(text[pos])):
				pos++
			default:
				return
			}
		}
	}
	readString := func() string {
		pos++ // opening quote
		var b strings.Builder
		for {
			require.Less(t, pos, len(text), "unterminated string")
			c := text[pos]
			switch c {
			case '\\':
				require.Less(t, pos+1, len(text))
				b.WriteByte(text[pos+1])
				pos += 2
			case '"':
				pos++
				return b.String()
			default:
				b.WriteByte(c)
				pos++
			}
		}
	}
	parse = func() (sexp, bool) {
		skip()
		if pos >= len(text) {
			return sexp{}, false
		}
		switch c := text[pos]; {
		case c == '(':
			pos++
			var l []sexp
			for {
				skip()
				require.Less(t, pos, len(text), "unbalanced (")
				if text[pos] == ')' {
					pos++
					return sexp{list: l, isList: true}, true
				}
				e, ok := parse()
				require.True(t, ok)
				l = append(l, e)
			}
		case c == ')':
			t.Fatalf("unbalanced ) at %d", pos)
		case c == '"':
			return sexp{str: readString(), isStr: true}, true
		case c == '#' && pos+1 < len(text) && text[pos+1] == '"':
			pos++
			return sexp{str: readString(), isStr: true}, true
		}
		start := pos
		for pos < len(text) && !strings.ContainsRune(" \t\r\n()\";", rune(text[pos])) {
			pos++
		}
		return sexp{sym: text[start:pos]}, true
	}
	var forms []sexp
	for {
		e, ok := parse()
		if !ok {
			return forms
		}
		forms = append(forms, e)
	}
}

func head(s sexp) string {
	var parts []string
	for _, e := range s.list {
		if e.isList || e.isStr {
			break
		}
		parts = append(parts, e.sym)
	}
	return strings.Join(parts, " ")
}

// walk calls fn on s and every form inside it.
func walk(s sexp, fn func(sexp)) {
	fn(s)
	for _, e := range s.list {
		walk(e, fn)
	}
}

// paramRefs lists the keys of every (param "KEY") in forms, in order.
func paramRefs(forms []sexp) []string {
	var keys []string
	for _, f := range forms {
		walk(f, func(s sexp) {
			if s.isList && len(s.list) == 2 && s.list[0].sym == "param" && s.list[1].isStr {
				keys = append(keys, s.list[1].str)
			}
		})
	}
	return keys
}

const testSandbox = "/Users/runner/work/repo/repo"

func testInputs() seatbeltInputs {
	run := "/private/var/folders/x/T/deponent-jail-1"
	return seatbeltInputs{
		sandbox:   testSandbox,
		runDir:    run,
		writable:  []string{run + "/tmp", run + "/home"},
		output:    []string{run + "/output", run + "/started"},
		protected: []string{testSandbox + "/.deponent", testSandbox + "/.git", testSandbox + "/.github/actions", testSandbox + "/.github/workflows", testSandbox + "/docs/conf.d/x.py"},
		home:      "/Users/runner",
		exposed:   []string{"/Users/runner/hostedtoolcache/Python/3.12.4/arm64", "/opt/homebrew"},
		secrets:   []string{"/Users/runner/.npmrc", "/Users/runner/.ssh", "/Volumes/dotfiles/npmrc"},
	}
}

// profileOf renders in and returns the text, its forms and its parameters.
func profileOf(t *testing.T, in seatbeltInputs) (string, []sexp, map[string]string) {
	t.Helper()
	text, params, err := seatbeltProfile(in)
	require.NoError(t, err)
	vals := map[string]string{}
	for _, p := range params {
		_, dup := vals[p.key]
		require.False(t, dup, "parameter %s defined twice", p.key)
		vals[p.key] = p.value
	}
	return text, parseSBPL(t, text), vals
}

// rulesWith returns the forms whose head is head.
func rulesWith(forms []sexp, head string) []sexp {
	var out []sexp
	for _, f := range forms {
		if headOf(f) == head {
			out = append(out, f)
		}
	}
	return out
}

// headOf is the action and operations of a rule: "deny file-write*".
func headOf(s sexp) string { return head(s) }

// filterValues resolves the (param ...) of each filter of rule f: for
// (regex (param "K")) it returns the value of K.
func filterValues(t *testing.T, f sexp, vals map[string]string, kind string) []string {
	t.Helper()
	var out []string
	for _, e := range f.list {
		if !e.isList || len(e.list) != 2 || e.list[0].sym != kind {
			continue
		}
		arg := e.list[1]
		if arg.isList && len(arg.list) == 2 && arg.list[0].sym == "param" {
			v, ok := vals[arg.list[1].str]
			require.True(t, ok, "undefined parameter %s", arg.list[1].str)
			out = append(out, v)
		}
	}
	return out
}

func TestSeatbeltProfileParametersAreAllDefinedAndUsed(t *testing.T) {
	text, forms, vals := profileOf(t, testInputs())
	refs := paramRefs(forms)
	used := map[string]int{}
	for _, k := range refs {
		used[k]++
		_, ok := vals[k]
		assert.True(t, ok, "the profile reads %s, which no -D defines", k)
	}
	for k := range vals {
		assert.Positive(t, used[k], "parameter %s is defined but never used", k)
	}
	assert.NotEmpty(t, refs)
	// No path of the caller, or from the host, is profile text: each is a
	// parameter. Only this file's constants (/dev nodes) are literals.
	in := testInputs()
	all := append([]string{in.sandbox, in.runDir, in.home}, in.writable...)
	all = append(append(append(append(all, in.output...), in.protected...), in.exposed...), in.secrets...)
	for _, p := range all {
		assert.NotContains(t, text, p)
	}
	for _, f := range forms {
		walk(f, func(s sexp) {
			if s.isStr && strings.HasPrefix(s.str, "/") {
				assert.True(t, strings.HasPrefix(s.str, "/dev/") || strings.HasPrefix(s.str, "^/dev/"),
					"path text %q in the profile: paths must be parameters", s.str)
			}
		})
	}
}

func TestSeatbeltProfileDenyDefaultAndServices(t *testing.T) {
	text, forms, _ := profileOf(t, testInputs())
	require.GreaterOrEqual(t, len(forms), 3)
	assert.Equal(t, "(version 1)", forms[0].String())
	assert.Equal(t, "(deny default)", forms[1].String())
	assert.NotContains(t, text, "(allow default")

	// Every allow is either one of these unconditional ones or has a filter.
	unconditional := map[string]bool{
		"allow process-exec* process-fork": true, "allow sysctl-read": true, "allow mach-host*": true,
		"allow ipc-posix-sem": true, "allow file-read* file-map-executable": true,
	}
	for _, f := range forms {
		h := headOf(f)
		if !strings.HasPrefix(h, "allow") {
			continue
		}
		hasFilter := false
		for _, e := range f.list {
			hasFilter = hasFilter || e.isList
		}
		assert.True(t, hasFilter || unconditional[h], "unfiltered %s", f)
		for _, op := range []string{"network", "lsopen", "appleevent-send", "job-creation", "user-preference", "file-mount",
			"file-unmount", "nvram", "sysctl-write", "mach-register", "file-link", "file-clone", "pseudo-tty", "iokit"} {
			assert.NotContains(t, h, op, "%s must never be allowed: %s", op, f)
		}
	}
	// Other processes: only this sandbox's.
	for _, op := range []string{"signal", "process-info*", "mach-priv-task-port"} {
		rules := rulesWith(forms, "allow "+op)
		require.Len(t, rules, 1, op)
		assert.Equal(t, "(allow "+op+" (target same-sandbox))", rules[0].String())
	}
	// mach-lookup: exactly the short allowlist, never LaunchServices.
	lookups := rulesWith(forms, "allow mach-lookup")
	require.Len(t, lookups, 1)
	var names []string
	for _, e := range lookups[0].list[2:] {
		require.Equal(t, "global-name", e.list[0].sym, "only exact names are allowed: %s", e)
		names = append(names, e.list[1].str)
	}
	assert.Equal(t, seatbeltServices, names)
	for _, n := range names {
		for _, bad := range []string{"launchservices", "lsd", "coreservices", "cfprefs", "nsurlsession", "security", "trustd", "appleevents"} {
			assert.NotContains(t, strings.ToLower(n), bad)
		}
	}
	denied := rulesWith(forms, "deny mach-lookup")
	require.Len(t, denied, 1)
	assert.Contains(t, denied[0].String(), `(global-name-prefix "com.apple.coreservices.")`, "launchservicesd")
	assert.Contains(t, denied[0].String(), `(global-name-prefix "com.apple.lsd.")`)
	assert.Contains(t, denied[0].String(), `(global-name-prefix "com.apple.cfprefsd.")`)

	// The explicit denials come last, after every allow, in full.
	lastAllow := 0
	for i, f := range forms {
		if strings.HasPrefix(headOf(f), "allow") {
			lastAllow = i
		}
	}
	for _, op := range []string{"network*", "lsopen", "appleevent-send", "job-creation", "user-preference-write",
		"file-mount", "file-unmount", "nvram*", "sysctl-write", "mach-register"} {
		rules := rulesWith(forms, "deny "+op)
		require.Len(t, rules, 1, op)
		assert.Equal(t, "(deny "+op+")", rules[0].String())
	}
	for i, f := range forms {
		if strings.HasPrefix(headOf(f), "deny") && i > 1 && i < lastAllow {
			// Only the hidden-area read deny may come before an allow
			// (the re-allows of the sandbox and toolchains follow it).
			assert.Equal(t, "deny file-read* file-map-executable", headOf(f), "a deny that a later allow could undo: %s", f)
		}
	}
	assert.Contains(t, text, `(deny sysctl-read (sysctl-name-prefix "kern.procargs"))`)
	assert.Contains(t, text, "(deny file-link file-clone)")
}

func TestSeatbeltTIOCSTIByNumber(t *testing.T) {
	// <sys/ttycom.h>: #define TIOCSTI _IOW('t', 114, char)
	assert.EqualValues(t, 0x80017472, tiocsti)
	text, _, _ := profileOf(t, testInputs())
	assert.Contains(t, text, "(deny file-ioctl (ioctl-command 2147578994))")
}

// TestSeatbeltProfilePatterns compiles every pattern parameter with Go's
// regexp (the constructs are the common subset of POSIX ERE and RE2) and
// checks what it matches.
func TestSeatbeltProfilePatterns(t *testing.T) {
	_, forms, vals := profileOf(t, testInputs())
	compiled := func(rule string) []*regexp.Regexp {
		t.Helper()
		rules := rulesWith(forms, rule)
		require.NotEmpty(t, rules, rule)
		var out []*regexp.Regexp
		for _, r := range rules {
			for _, v := range filterValues(t, r, vals, "regex") {
				out = append(out, regexp.MustCompile(v))
			}
		}
		return out
	}
	anyMatch := func(res []*regexp.Regexp, p string) bool {
		for _, re := range res {
			if re.MatchString(p) {
				return true
			}
		}
		return false
	}
	// Writes: protected paths and the directories above them.
	protect := compiled("deny file-write*")
	sb := testSandbox
	for _, p := range []string{
		".git", ".git/hooks/pre-commit", ".GIT", ".Git/config", ".gIT/hooks",
		"sub/.git", "a/b/.GIT/hooks/x", "vendor/lib/.Git", // every .git at any depth
		".github/workflows", ".github/workflows/ci.yml", ".GITHUB/WORKFLOWS/x.yml", ".Github/Workflows",
		".github/wor\u212Aflows/ci.yml", // KELVIN SIGN folds to k
		".github/actions/a/action.yml", ".deponent", ".DEPONENT/ledger.jsonl",
		"docs/conf.d/x.py", "DOCS/Conf.D/X.PY",
		".github", ".GitHub", "docs", "docs/conf.d", "Docs/CONF.d", // pinned parents
	} {
		assert.True(t, anyMatch(protect, sb+"/"+p), "writes to %s must be denied", p)
	}
	for _, p := range []string{
		".gitignore", ".github/dependabot.yml", ".github/ISSUE_TEMPLATE/bug.md", ".github/workflowsx",
		"x.git", ".git-blame-ignore-revs", "sub/.gitmodules", "docs/index.md", "docs/conf.d/y.py", "src/main.go",
		"docsx", ".deponentx", "",
	} {
		assert.False(t, anyMatch(protect, sb+"/"+p), "writes to %q must stay allowed", p)
	}
	assert.False(t, anyMatch(protect, "/Users/runner/work/other/.git/config"), "only inside the sandbox")

	// Reads: the hidden areas, in any case; secrets wherever they are.
	hidden := compiled("deny file-read* file-map-executable")
	for _, p := range []string{"/Users/runner", "/Users/runner/.codex/auth.json", "/USERS/RUNNER/.claude.json",
		"/Users/runner/Library/Application Support/x", "/users/other/x", "/Volumes/data/x", "/private/var/folders/ab/cd/T/x",
		"/private/tmp/x", "/PRIVATE/TMP/x", "/private/var/root/.ssh/id_rsa", "/private/var/tmp/x"} {
		assert.True(t, anyMatch(hidden, p), "%s must be hidden", p)
	}
	for _, p := range []string{"/usr/bin/python3", "/opt/homebrew/bin/git", "/System/Library/x", "/private/etc/hosts",
		"/Usersx", "/private/var/db/xcode_select_link", "/private/var/select/sh", "/Library/Developer/CommandLineTools"} {
		assert.False(t, anyMatch(hidden, p), "%s must stay readable", p)
	}
	secret := compiled("deny file-read* file-map-executable file-write*")
	for _, p := range []string{"/Users/runner/.npmrc", "/USERS/runner/.NPMRC", "/Users/runner/.ssh/id_ed25519",
		"/Users/runner/.\u017Fsh/id_rsa", // LONG S folds to s
		"/Volumes/dotfiles/npmrc", "/private/etc/sudoers", "/private/etc/sudoers.d/runner", "/Library/Keychains/System.keychain",
		"/private/var/db/SystemKey", "/private/etc/ssh/ssh_host_ed25519_key", "/PRIVATE/ETC/SSH/SSH_HOST_RSA_KEY"} {
		assert.True(t, anyMatch(secret, p), "%s must be unreadable", p)
	}
	for _, p := range []string{"/Users/runner/.npmrcx", "/private/etc/ssh/ssh_host_ed25519_key.pub", "/private/etc/ssh/ssh_config", "/private/etc/hosts"} {
		assert.False(t, anyMatch(secret, p), "%s is no secret", p)
	}
	noexec := compiled("deny process-exec*")
	for _, p := range []string{"/usr/bin/sudo", "/USR/BIN/SUDO", "/usr/bin/su", "/usr/bin/login"} {
		assert.True(t, anyMatch(noexec, p), p)
	}
	for _, p := range []string{"/usr/bin/sudoku", "/usr/bin/sum", "/usr/bin/python3"} {
		assert.False(t, anyMatch(noexec, p), p)
	}
}

// TestSeatbeltProfileReadsReopenWhatTheStepNeeds: the sandbox, the run
// directory and the toolchains come back after the hidden areas, with
// metadata of the directories above them.
func TestSeatbeltProfileReadsReopenWhatTheStepNeeds(t *testing.T) {
	in := testInputs()
	_, forms, vals := profileOf(t, in)
	var order []string
	for _, f := range forms {
		order = append(order, headOf(f))
	}
	hide := indexOf(order, "deny file-read* file-map-executable")
	reopen := indexOf(order, "allow file-read* file-map-executable")
	require.True(t, hide >= 0 && reopen >= 0)
	// The first allow is the unconditional one; the re-allow is the second.
	for i := reopen + 1; i < len(order); i++ {
		if order[i] == "allow file-read* file-map-executable" {
			reopen = i
		}
	}
	assert.Less(t, hide, reopen)
	assert.Equal(t, append([]string{in.sandbox, in.runDir}, in.exposed...), filterValues(t, forms[reopen], vals, "subpath"))
	meta := filterValues(t, rulesWith(forms, "allow file-read-metadata")[0], vals, "literal")
	for _, d := range []string{"/Users", "/Users/runner", "/Users/runner/work", "/Users/runner/work/repo", "/private/var/folders/x/T", "/Users/runner/hostedtoolcache/Python"} {
		assert.Contains(t, meta, d)
	}
	assert.NotContains(t, meta, "/")
	secrets := indexOf(order, "deny file-read* file-map-executable file-write*")
	assert.Greater(t, secrets, reopen, "secrets are denied after the re-allows")
	writes := filterValues(t, rulesWith(forms, "allow file-write*")[0], vals, "subpath")
	assert.Equal(t, append([]string{in.sandbox}, in.writable...), writes)
	outs := filterValues(t, rulesWith(forms, "allow file-write*")[0], vals, "literal")
	assert.Equal(t, in.output, outs)
}

func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return -1
}

func TestSeatbeltProfileGitAnyDepthOnlyWithTopLevelGit(t *testing.T) {
	in := testInputs()
	in.protected = []string{testSandbox + "/.deponent"}
	_, forms, vals := profileOf(t, in)
	for _, v := range filterValues(t, rulesWith(forms, "deny file-write*")[0], vals, "regex") {
		assert.False(t, regexp.MustCompile(v).MatchString(testSandbox+"/sub/.git/config"), v)
	}
	in.protected = []string{testSandbox + "/.GIT"}
	_, forms, vals = profileOf(t, in)
	matched := false
	for _, v := range filterValues(t, rulesWith(forms, "deny file-write*")[0], vals, "regex") {
		matched = matched || regexp.MustCompile(v).MatchString(testSandbox+"/sub/.git/config")
	}
	assert.True(t, matched)
}

func TestSeatbeltProfileNoInjectionThroughPaths(t *testing.T) {
	_, baseForms, _ := profileOf(t, testInputs())
	for _, sb := range []string{
		`/Users/runner/a") (allow network*) (allow file-write* (subpath "/x`,
		`/Users/runner/a\") (allow network*) ;`,
		`/Users/runner/back\slash\\`,
		`/Users/runner/semi;colon (paren) "quote" #"regex"`,
		`/Users/runner/a+b.c*d?[e]{f}|g^h$`,
	} {
		in := testInputs()
		in.sandbox = sb
		in.protected = []string{sb + "/.git", sb + "/.github/workflows"}
		text, forms, vals := profileOf(t, in)
		assert.NotContains(t, text, sb)
		assert.Equal(t, len(baseForms), len(forms), "a path changed the profile's structure:\n%s", text)
		assert.Equal(t, sb, vals["SANDBOX_0"])
		// The pattern for .git under this sandbox matches exactly it.
		re := regexp.MustCompile(filterValues(t, rulesWith(forms, "deny file-write*")[0], vals, "regex")[0])
		assert.True(t, re.MatchString(sb+"/.git/config"), re.String())
		assert.False(t, re.MatchString(strings.ReplaceAll(sb, "a", "x")+"/.git/config"), re.String())
	}
}

func TestSeatbeltProfileRefusesControlCharacters(t *testing.T) {
	for _, bad := range []string{"/Users/a\nb", "/Users/a\rb", "/Users/a\x00b", "/Users/a\x1bb", "/Users/a\x7fb", "/Users/\xff"} {
		for _, set := range []func(*seatbeltInputs){
			func(in *seatbeltInputs) { in.sandbox = bad; in.protected = nil },
			func(in *seatbeltInputs) {
				in.protected = []string{testSandbox + "/" + strings.TrimPrefix(bad, "/Users/")}
			},
			func(in *seatbeltInputs) { in.home = bad },
			func(in *seatbeltInputs) { in.exposed = []string{bad} },
			func(in *seatbeltInputs) { in.secrets = []string{bad} },
			func(in *seatbeltInputs) { in.writable = []string{bad} },
		} {
			in := testInputs()
			set(&in)
			_, _, err := seatbeltProfile(in)
			assert.Error(t, err, "%q", bad)
		}
	}
}

func TestSeatbeltProfileRefusesOverlongPatterns(t *testing.T) {
	in := testInputs()
	in.protected = []string{testSandbox + "/" + strings.Repeat("deep/", 60) + ".x"}
	_, _, err := seatbeltProfile(in)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "too long")
}

func TestSeatbeltArgv(t *testing.T) {
	argv := seatbeltArgv("/usr/bin/sandbox-exec", "(version 1)", []sbplParam{{"A_0", "/x y"}, {"B_0", "^a=b$"}}, []string{"/bin/sh", "-c", "x"})
	assert.Equal(t, []string{"/usr/bin/sandbox-exec", "-p", "(version 1)", "-D", "A_0=/x y", "-D", "B_0=^a=b$", "/bin/sh", "-c", "x"}, argv)
}

func TestFoldPattern(t *testing.T) {
	assert.Equal(t, `\.[Gg][Ii][Tt]`, foldPattern(".git"))
	assert.Equal(t, "(K|k|\u212A)", foldPattern("k"))
	assert.Equal(t, "(S|s|\u017F)", foldPattern("S"))
	assert.Equal(t, `a\+b`, quoteRegex("a+b"))
	assert.Equal(t, "9_-/ ]}", foldPattern("9_-/ ]}"))
}

// FuzzFoldPattern: for any valid path text, the pattern compiles, matches
// the text and its upper- and lower-case spellings, and matches nothing
// that differs in a non-letter.
func FuzzFoldPattern(f *testing.F) {
	for _, s := range []string{".git", ".github/workflows", "a+b(c)[d]{e}|f^g$h\\i", "wor\u212Aflows", "Straße", "ǅ", "İı", "."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) || strings.ContainsRune(s, 0) {
			return
		}
		re, err := regexp.Compile("^" + foldPattern(s) + "$")
		require.NoError(t, err, "%q", s)
		assert.True(t, re.MatchString(s), "%q", s)
		for _, v := range []string{strings.ToUpper(s), strings.ToLower(s)} {
			if len([]rune(v)) == len([]rune(s)) && strings.EqualFold(v, s) {
				assert.True(t, re.MatchString(v), "%q vs %q", s, v)
			}
		}
		assert.False(t, re.MatchString(s+"/"), "%q", s)
		exact, err := regexp.Compile("^" + quoteRegex(s) + "$")
		require.NoError(t, err)
		assert.True(t, exact.MatchString(s))
		assert.False(t, exact.MatchString(s+"x"))
	})
}

func TestProtectedAncestors(t *testing.T) {
	got := protectedAncestors("/sb", []string{"/sb/.git", "/sb/.github/workflows", "/sb/.github/actions", "/sb/a/b/c"})
	assert.Equal(t, []string{"/sb/.github", "/sb/a", "/sb/a/b"}, got)
}

func TestPinAncestors(t *testing.T) {
	sb := resolvedTempDir(t)
	outside := resolvedTempDir(t)
	mustMkdir(t, filepath.Join(sb, "a"))
	prot := []string{filepath.Join(sb, ".git"), filepath.Join(sb, ".github", "workflows"), filepath.Join(sb, "a", "b", "c")}
	created, err := pinAncestors(sb, prot)
	require.NoError(t, err)
	assert.Equal(t, []string{filepath.Join(sb, ".github"), filepath.Join(sb, "a", "b")}, created)
	assert.DirExists(t, filepath.Join(sb, ".github"))
	assert.NoDirExists(t, filepath.Join(sb, ".github", "workflows"), "the protected path itself is not created")
	// A step added a file under one; the other stays empty.
	writeFile(t, filepath.Join(sb, ".github", "dependabot.yml"), "x", 0o644)
	unpinAncestors(created)
	assert.FileExists(t, filepath.Join(sb, ".github", "dependabot.yml"), "a non-empty directory stays")
	assert.NoDirExists(t, filepath.Join(sb, "a", "b"), "an empty created directory is removed")
	assert.DirExists(t, filepath.Join(sb, "a"), "what existed before stays")

	// Cleanup never follows a symlink put where a created directory was.
	sb2 := resolvedTempDir(t)
	writeFile(t, filepath.Join(outside, "keep"), "x", 0o644)
	created, err = pinAncestors(sb2, []string{filepath.Join(sb2, "d", "p")})
	require.NoError(t, err)
	require.NoError(t, os.Remove(filepath.Join(sb2, "d")))
	require.NoError(t, os.Symlink(outside, filepath.Join(sb2, "d")))
	unpinAncestors(created)
	assert.FileExists(t, filepath.Join(outside, "keep"))

	// A parent that is a symlink cannot be pinned: refused.
	sb3 := resolvedTempDir(t)
	require.NoError(t, os.Symlink(outside, filepath.Join(sb3, "l")))
	_, err = pinAncestors(sb3, []string{filepath.Join(sb3, "l", "p")})
	assert.Error(t, err)
}

func TestSeatbeltSecretsFollowSymlinks(t *testing.T) {
	home := resolvedTempDir(t)
	dots := resolvedTempDir(t)
	writeFile(t, filepath.Join(dots, "npmrc"), "//registry/:_authToken=x", 0o600)
	require.NoError(t, os.Symlink(filepath.Join(dots, "npmrc"), filepath.Join(home, ".npmrc")))
	mustMkdir(t, filepath.Join(dots, "config", "gh"))
	require.NoError(t, os.Symlink(filepath.Join(dots, "config"), filepath.Join(home, ".config")))
	got := seatbeltSecrets(home, []string{"/opt/tool/credentials"})
	for _, want := range []string{
		filepath.Join(home, ".npmrc"), filepath.Join(dots, "npmrc"), // the link and its target
		filepath.Join(home, ".config", "gh"), filepath.Join(dots, "config", "gh"), // below a linked directory
		filepath.Join(home, ".ssh"), "/opt/tool/credentials",
	} {
		assert.Contains(t, got, want)
	}
	assert.True(t, sort.StringsAreSorted(got))
	assert.Empty(t, seatbeltSecrets("", nil))
}

// TestSeatbeltAnyOfChunks: the credential list of a real home does not fit
// one pattern; it is split into patterns under the limit that together
// match every path, and only those.
func TestSeatbeltAnyOfChunks(t *testing.T) {
	home := "/Users/a-rather-long-runner-account-name"
	in := testInputs()
	in.home = home
	in.secrets = seatbeltSecrets(home, nil)
	_, forms, vals := profileOf(t, in)
	patterns := filterValues(t, rulesWith(forms, "deny file-read* file-map-executable file-write*")[0], vals, "regex")
	require.Greater(t, len(patterns), 2, "expected the list to need several patterns")
	var res []*regexp.Regexp
	for _, p := range patterns {
		assert.LessOrEqual(t, len(p), maxRegexParam)
		res = append(res, regexp.MustCompile(p))
	}
	matches := func(p string) bool {
		for _, re := range res {
			if re.MatchString(p) {
				return true
			}
		}
		return false
	}
	for _, c := range credentialPaths {
		p := home + "/" + c
		assert.True(t, matches(p), p)
		assert.True(t, matches(strings.ToUpper(p)+"/x"), p)
		assert.False(t, matches(p+"x"), p)
	}
	for _, s := range seatbeltRootSecrets {
		assert.True(t, matches(s), s)
	}
	assert.False(t, matches(home+"/.bashrc"))
	assert.False(t, matches(home))
}

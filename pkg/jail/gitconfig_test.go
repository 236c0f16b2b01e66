package jail

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// checkoutConfig is what actions/checkout leaves with persist-credentials
// (the default), plus the other places credentials hide in a git config.
const checkoutConfig = `[core]
	repositoryformatversion = 0
	filemode = true
	bare = false
	logallrefupdates = true
[remote "origin"]
	url = https://x-access-token:ghs_SECRET1@github.com/o/r
	fetch = +refs/heads/*:refs/remotes/origin/*
	pushurl = ssh://git:SECRET2@example.com/o/r.git
[http "https://github.com/"]
	extraheader = AUTHORIZATION: basic SECRET3
[credential]
	helper = store --file /tmp/SECRET4
[credential "https://SECRET5@github.com"]
	username = me
[url "https://SECRET6@github.com/"]
	insteadOf = https://github.com/
[github]
	token = SECRET7
[sendemail]
	smtpPass = SECRET8
[http]
	extraHeader = "Authorization: Bearer SECRET9"
[alias]
	lg = "log --oneline \
--graph" ; a comment
[branch "main"]
	remote = origin
	merge = refs/heads/main
[submodule "lib"]
	url = https://oauth2:SECRET10@gitlab.com/o/lib.git
[remote "ssh"]
	url = git@github.com:o/r.git
	url2 = ssh://git@github.com/o/r.git
[core] editor = vi
[x] y = "http://u:SECRET11@h/" # trailing
`

func TestSanitizeGitConfigRemovesEveryCredential(t *testing.T) {
	out, removed, err := sanitizeGitConfig([]byte(checkoutConfig))
	require.NoError(t, err)
	for i := 1; i <= 11; i++ {
		assert.NotContains(t, string(out), "SECRET"+strconv.Itoa(i)+"@", "secret %d survived", i)
		assert.NotRegexp(t, `SECRET`+strconv.Itoa(i)+`\b`, string(out), "secret %d survived", i)
	}
	assert.Contains(t, removed, "http.https://github.com/.extraheader")
	assert.Contains(t, removed, "credential.helper")
	assert.Contains(t, removed, "remote.origin.url (URL credentials)")
	assert.Contains(t, removed, "github.token")
	for _, r := range removed {
		assert.NotContains(t, r, "SECRET", "what was removed is named, never shown")
	}
	// Everything else is kept: git reads the same settings.
	for _, keep := range []string{"repositoryformatversion = 0", "fetch = +refs/heads/*:refs/remotes/origin/*",
		"url = git@github.com:o/r.git", "url2 = ssh://git@github.com/o/r.git", `lg = "log --oneline \`, "merge = refs/heads/main", "editor = vi"} {
		assert.Contains(t, string(out), keep)
	}
	assert.Contains(t, string(out), `url = "https://github.com/o/r"`)
	assert.Contains(t, string(out), `pushurl = "ssh://git@example.com/o/r.git"`)

	// Git itself reads the result, with the same non-secret values.
	git, err := exec.LookPath("git")
	require.NoError(t, err, "git is needed to check that the sanitized config still reads")
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config")
	require.NoError(t, os.WriteFile(cfg, out, 0o600))
	list, err := exec.Command(git, "config", "--file", cfg, "--list").CombinedOutput()
	require.NoError(t, err, "%s", list)
	l := string(list)
	assert.NotContains(t, l, "SECRET")
	assert.Contains(t, l, "remote.origin.url=https://github.com/o/r\n")
	assert.Contains(t, l, "alias.lg=log --oneline --graph\n")
	assert.Contains(t, l, "core.editor=vi\n")
	assert.Contains(t, l, "url.https://github.com/.insteadof=https://github.com/\n")
	assert.Contains(t, l, "x.y=http://h/\n")
}

func TestSanitizeGitConfigCleanIsUnchanged(t *testing.T) {
	clean := "[core]\n\tbare = false\n# comment\n[remote \"o\"]\n\turl = https://github.com/o/r\n\n"
	out, removed, err := sanitizeGitConfig([]byte(clean))
	require.NoError(t, err)
	assert.Empty(t, removed)
	assert.Equal(t, clean, string(out))
}

func TestSanitizeGitConfigRefusesWhatItCannotParse(t *testing.T) {
	for _, bad := range []string{"token = x\n", "[core\n", "[.]\na = 1\n", "[a.]\nb = 1\n", "[a.b \"c\"]\nd = 1\n", "[a \"b]\n", "[a]\n\t9x = 1\n", "[a]\n\tb = \"open\n", "[a]\n\tb = x\\q\n", "[a]\n\tb c\n"} {
		_, _, err := sanitizeGitConfig([]byte(bad))
		assert.ErrorIs(t, err, errGitConfigSyntax, "%q", bad)
	}
}

func TestStripURLUserinfo(t *testing.T) {
	cases := map[string]string{
		"https://tok@github.com/x":           "https://github.com/x",
		"https://u:p@h:443/x https://a@b/c":  "https://h:443/x https://b/c",
		"ssh://git@github.com/x":             "ssh://git@github.com/x",
		"ssh://git:pw@github.com/x":          "ssh://git@github.com/x",
		"git+ssh://u:pw@h/x":                 "git+ssh://u@h/x",
		"git@github.com:o/r.git":             "git@github.com:o/r.git",
		"https://github.com/x?email=a@b.com": "https://github.com/x?email=a@b.com",
	}
	for in, want := range cases {
		got, _ := stripURLUserinfo(in)
		assert.Equal(t, want, got, in)
	}
}

// FuzzSanitizeGitConfig: never panics; what it produces parses again and
// needs nothing more removed; no credential-named key survives.
func FuzzSanitizeGitConfig(f *testing.F) {
	f.Add([]byte(checkoutConfig))
	f.Add([]byte("[a]\n\tb = \"x\\\"y\" ; c\n[d.e]\n\tf\n"))
	f.Add([]byte("[http \"https://t@h/\"] extraheader = x\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		out, _, err := sanitizeGitConfig(data)
		if err != nil {
			return
		}
		again, removed, err := sanitizeGitConfig(out)
		if err != nil {
			t.Fatalf("sanitized output does not parse: %v\n%q", err, out)
		}
		if len(removed) != 0 {
			t.Fatalf("second pass removed %v from %q", removed, out)
		}
		if string(again) != string(out) {
			t.Fatalf("not stable: %q vs %q", out, again)
		}
	})
}

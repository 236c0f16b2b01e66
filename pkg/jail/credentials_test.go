package jail

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFindCredentials(t *testing.T) {
	sb := resolvedTempDir(t)
	secret := "SECRET-" + randHex(t)
	writeFile(t, filepath.Join(sb, ".git", "HEAD"), "ref: refs/heads/main\n", 0o644)
	writeFile(t, filepath.Join(sb, ".git", "config"), "[http \"https://github.com/\"]\n\textraheader = AUTHORIZATION: basic "+secret+"\n", 0o644)
	writeFile(t, filepath.Join(sb, "vendor", "x", ".git", "HEAD"), "ref: refs/heads/main\n", 0o644)
	writeFile(t, filepath.Join(sb, "vendor", "x", ".git", "config"), "[remote \"o\"]\n\turl = https://u:"+secret+"@h/r\n", 0o644)
	writeFile(t, filepath.Join(sb, ".npmrc"), "//registry.npmjs.org/:_authToken="+secret+"\n", 0o644)
	writeFile(t, filepath.Join(sb, "web", ".npmrc"), "//registry.npmjs.org/:_authToken=${NPM_TOKEN}\n", 0o644) // a reference: fine
	writeFile(t, filepath.Join(sb, ".cargo", "config.toml"), "[registry]\ntoken = \""+secret+"\"\n", 0o644)
	writeFile(t, filepath.Join(sb, ".git-credentials"), "https://u:"+secret+"@github.com\n", 0o600)
	writeFile(t, filepath.Join(sb, "docker", "config.json"), `{"auths": {"ghcr.io": {"auth": "`+secret+`"}}}`, 0o644)
	writeFile(t, filepath.Join(sb, "pip.conf"), "[global]\nindex-url = https://user:"+secret+"@pypi.example.com/simple\n", 0o644)
	writeFile(t, filepath.Join(sb, "config.toml"), "[build]\njobs = 2\n", 0o644) // no credential
	writeFile(t, filepath.Join(sb, "settings.xml"), "<server><password>"+secret+"</password></server>\n", 0o644)
	got, err := FindCredentials(sb)
	require.NoError(t, err)
	t.Logf("%q", got)
	joined := strings.Join(got, "\n")
	assert.NotContains(t, joined, secret, "findings name what, never the value")
	for _, want := range []string{".git/config: http.https://github.com/.extraheader", "vendor/x/.git/config: remote.o.url (URL credentials)",
		".npmrc: ", ".cargo/config.toml: token", ".git-credentials: a credential store", "docker/config.json: auth",
		"pip.conf: a URL with credentials"} {
		assert.Contains(t, joined, want)
	}
	for _, not := range []string{"web/.npmrc", "\nconfig.toml"} {
		assert.NotContains(t, "\n"+joined, not)
	}
}

func TestCredentialLine(t *testing.T) {
	yes := []string{`token = "abc"`, `password: hunter2`, `"auth": "Zm9v"`, `//r.example/:_authToken=abc`,
		`aws_secret_access_key = AKIA...`, `npmAuthToken: "abc"`, `url = https://u:p@h/x`, `api_key=abc`}
	no := []string{`token = "${TOKEN}"`, `password: $PASSWORD`, `# token = abc`, `jobs = 2`, `author = me`, `token = ""`,
		`url = https://h/x`, `url = ssh://git@h/x`, `credentials = true`, `"auth": {`}
	for _, l := range yes {
		_, ok := credentialLine(l)
		assert.True(t, ok, l)
	}
	for _, l := range no {
		_, ok := credentialLine(l)
		assert.False(t, ok, l)
	}
}

func TestFindHardLinks(t *testing.T) {
	sb := resolvedTempDir(t)
	store := resolvedTempDir(t)
	writeFile(t, filepath.Join(store, "pkg.js"), "x", 0o644)
	mustMkdir(t, filepath.Join(sb, "node_modules", "p"))
	require.NoError(t, os.Link(filepath.Join(store, "pkg.js"), filepath.Join(sb, "node_modules", "p", "pkg.js")))
	writeFile(t, filepath.Join(sb, "a"), "x", 0o644)
	require.NoError(t, os.Link(filepath.Join(sb, "a"), filepath.Join(sb, "b")))
	writeFile(t, filepath.Join(sb, "single"), "x", 0o644)
	writeFile(t, filepath.Join(sb, ".git", "objects", "ab", "cd"), "x", 0o444)
	require.NoError(t, os.Link(filepath.Join(sb, ".git", "objects", "ab", "cd"), filepath.Join(store, "obj")))
	got, err := FindHardLinks(sb, 100)
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b", "node_modules/p/pkg.js"}, got, ".git is skipped: local clones share objects by design")
	got, err = FindHardLinks(sb, 2)
	require.NoError(t, err)
	assert.Len(t, got, 2)
	_, err = FindHardLinks(sb, 0)
	assert.Error(t, err)
}

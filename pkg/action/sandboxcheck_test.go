package action

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const fakeToken = "ghs_SANDBOXcheckTOKENvalue"

func writeFile(t *testing.T, root, rel, content string) string {
	t.Helper()
	p := filepath.Join(root, rel)
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	return p
}

// TestCheckSandbox: what the action warns about, through the jail
// package's analysis: credentials in any git directory's config
// (checkout's extraheader, a token in a remote URL, a credential helper;
// the top .git, a submodule's, a nested one) and in tool credential files
// are named, never shown; harmless look-alikes are not; regular files with
// more than one link are found outside .git.
func TestCheckSandbox(t *testing.T) {
	sb := resolvedTemp(t)
	gitDir := func(dir, config string) {
		writeFile(t, sb, dir+"/HEAD", "ref: refs/heads/main\n")
		writeFile(t, sb, dir+"/config", config)
	}
	gitDir(".git", "[core]\n\tbare = false\n[remote \"origin\"]\n\turl = https://github.com/o/r\n"+
		"[http \"https://github.com/\"]\n\textraheader = AUTHORIZATION: basic "+fakeToken+"\n")
	gitDir(".git/modules/lib", "[remote \"origin\"]\n\turl = https://x-access-token:"+fakeToken+"@github.com/o/lib\n")
	gitDir("nested/.git", "[credential]\n\thelper = store\n")
	gitDir("clean/.git", "[remote \"origin\"]\n\turl = ssh://git@github.com/o/r\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n")
	writeFile(t, sb, ".netrc", "machine github.com login x password "+fakeToken+"\n")
	writeFile(t, sb, "web/.npmrc", "//registry.npmjs.org/:_authToken="+fakeToken+"\n")
	writeFile(t, sb, "other/.npmrc", "save-exact=true\n")
	writeFile(t, sb, "src/config", "token = not a git config\n")

	outside := writeFile(t, resolvedTemp(t), "store/pkg.js", "module.exports = 1\n")
	require.NoError(t, os.MkdirAll(filepath.Join(sb, "node_modules"), 0o755))
	require.NoError(t, os.Link(outside, filepath.Join(sb, "node_modules", "pkg.js")))
	obj := writeFile(t, sb, ".git/objects/ab/cdef", "x")
	require.NoError(t, os.Link(obj, filepath.Join(sb, ".git", "objects", "ab", "linked")))
	writeFile(t, sb, "plain.txt", "x")

	f := checkSandbox(sb)
	all := strings.Join(f.Credentials, "\n")
	t.Log(all)
	assert.NotContains(t, all, fakeToken, "names only, never a value")
	var named []string
	for _, c := range f.Credentials {
		named = append(named, strings.SplitN(c, ": ", 2)[0])
	}
	assert.Equal(t, []string{".git/config", ".git/modules/lib/config", ".netrc", "nested/.git/config", "web/.npmrc"}, named)
	assert.Contains(t, all, "extraheader")
	assert.Equal(t, 1, f.HardLinked, "the .git objects are protected; node_modules/pkg.js is not")
	assert.Equal(t, []string{"node_modules/pkg.js"}, f.HardLinks)
	assert.Empty(t, f.Problems)

	// Positive control: the same tree without them has nothing to report.
	clean := resolvedTemp(t)
	writeFile(t, clean, ".git/HEAD", "ref: refs/heads/main\n")
	writeFile(t, clean, ".git/config", "[core]\n\tbare = false\n")
	writeFile(t, clean, "a/b.txt", "x")
	f = checkSandbox(clean)
	assert.Empty(t, f.Credentials)
	assert.Zero(t, f.HardLinked)
}

package kernel

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReadFileHidesCheckoutCredentials: actions/checkout leaves the job's
// token in .git/config. Jailed commands read a sanitized copy; read_file
// runs outside the jail and must show the same, never the token — also
// for a nested repository and a worktree config. The control is a plain
// file with the same text outside any git directory, which reads as it is
// (so the test would notice a read_file that shows nothing at all).
func TestReadFileHidesCheckoutCredentials(t *testing.T) {
	c, sb, _ := newTestCell(t, &fakeJail{}, false)
	const token = "ghs_abcdefghijklmnopqrstuvwxyz0123456789"
	cfg := "[core]\n\trepositoryformatversion = 0\n" +
		"[remote \"origin\"]\n\turl = https://x-access-token:" + token + "@github.com/o/r\n" +
		"[http \"https://github.com/\"]\n\textraheader = AUTHORIZATION: basic " + token + "\n"
	for _, dir := range []string{".git", "vendor/lib/.git"} {
		require.NoError(t, os.MkdirAll(filepath.Join(sb, dir), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(sb, dir, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644))
		for _, name := range []string{"config", "config.worktree"} {
			require.NoError(t, os.WriteFile(filepath.Join(sb, dir, name), []byte(cfg), 0o644))
			r := c.Act("read_file", map[string]any{"path": dir + "/" + name}, "builder")
			require.NoError(t, r.Err, "%s/%s", dir, name)
			assert.NotContains(t, string(r.Output), token, "%s/%s must read without the token", dir, name)
			assert.Contains(t, string(r.Output), "repositoryformatversion", "%s/%s keeps what is no secret", dir, name)
		}
	}
	// Control: the same bytes, not a git directory's config.
	require.NoError(t, os.WriteFile(filepath.Join(sb, "notes.txt"), []byte(cfg), 0o644))
	r := c.Act("read_file", map[string]any{"path": "notes.txt"}, "builder")
	require.NoError(t, r.Err)
	assert.Contains(t, string(r.Output), token, "control: an ordinary file reads as it is")
}

package docscheck

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/deponent-dev/deponent-action/internal/version"
)

// The version scheme (docs/releasing.md): releases are tagged vX.Y.Z with
// X.Y.Z = internal/version.Version, and the moving major tag vX points at
// the newest vX.y.z. Documents and workflows name this repository's
// actions at vX or vX.Y.Z, and go install names the exact vX.Y.Z.

var (
	// A reference to a version: "@" then a version-like word or a branch.
	atRef = regexp.MustCompile("([^\\s`'\"()\\[\\]<>]*)@(v[0-9][0-9A-Za-z.+-]*|latest|main|master|HEAD)\\b")
	// A ref: key (actions/checkout of this repository, for one).
	refKey = regexp.MustCompile(`(?m)^\s*ref:\s*['"]?(v[0-9][0-9A-Za-z.+-]*|latest|main|master)['"]?\s*$`)
)

// versionProblems lists what in text does not follow the scheme for
// release ver (X.Y.Z).
func versionProblems(text, ver string) []string {
	major := "v" + strings.SplitN(ver, ".", 2)[0]
	exact := "v" + ver
	var out []string
	for _, m := range atRef.FindAllStringSubmatch(text, -1) {
		prefix, ref := m[1], m[2]
		ours := prefix == "" || strings.Contains(prefix, "deponent")
		if !ours {
			continue // another project's version (goreleaser, actionlint, …)
		}
		switch {
		case strings.Contains(prefix, "/cmd/"):
			// go install: the exact release, never a moving tag.
			if ref != exact {
				out = append(out, fmt.Sprintf("%s@%s: go install names the release, @%s", prefix, ref, exact))
			}
		case ref != major && ref != exact:
			out = append(out, fmt.Sprintf("%s@%s: use @%s (the moving major tag) or @%s", prefix, ref, major, exact))
		}
	}
	for _, m := range refKey.FindAllStringSubmatch(text, -1) {
		if m[1] != major && m[1] != exact {
			out = append(out, fmt.Sprintf("ref: %s: use %s or %s", m[1], major, exact))
		}
	}
	return out
}

// TestOneVersionScheme: every document, example and workflow names this
// repository at a version of the one scheme, and go install at the exact
// version internal/version says.
func TestOneVersionScheme(t *testing.T) {
	ver := version.Version
	require.Regexp(t, `^[0-9]+\.[0-9]+\.[0-9]+$`, ver)
	files := []string{"README.md", "SECURITY.md", "CHANGELOG.md", "action.yml", "verify/action.yml", "scripts/README.md"}
	for _, pat := range []string{"docs/*.md", "examples/workflows/*.yml", "examples/*/*.md", ".github/workflows/*.yml"} {
		m, err := filepath.Glob(filepath.Join(root, pat))
		require.NoError(t, err)
		for _, f := range m {
			rel, _ := filepath.Rel(root, f)
			files = append(files, rel)
		}
	}
	refs := 0
	for _, f := range files {
		text := read(t, f)
		refs += len(atRef.FindAllString(text, -1))
		assert.Empty(t, versionProblems(text, ver), "%s", f)
	}
	assert.Greater(t, refs, 5, "found the version references")

	// The go install lines name the exact release.
	installs := regexp.MustCompile(`go install github\.com/deponent-dev/deponent-action/cmd/deponent-verify@(\S+)`).FindAllStringSubmatch(read(t, "README.md")+read(t, "docs/release-managers.md"), -1)
	require.NotEmpty(t, installs)
	for _, m := range installs {
		assert.Equal(t, "v"+ver, m[1])
	}

	// The negative controls.
	for _, bad := range []string{
		"uses: deponent-dev/deponent-action@v1",
		"uses: deponent-dev/deponent-action/verify@main",
		"go install github.com/deponent-dev/deponent-action/cmd/deponent-verify@latest",
		"go install github.com/deponent-dev/deponent-action/cmd/deponent-verify@v0",
		"pin an exact release (@v0.0.9)",
		"        ref: v1\n",
		"uses: deponent-dev/deponent-action@v0.1",
	} {
		assert.NotEmpty(t, versionProblems(bad, "0.1.0"), "%q", bad)
	}
	for _, good := range []string{
		"uses: deponent-dev/deponent-action@v0",
		"uses: deponent-dev/deponent-action/verify@v0.1.0",
		"go install github.com/deponent-dev/deponent-action/cmd/deponent-verify@v0.1.0",
		"go install github.com/goreleaser/goreleaser/v2@v2.15.1",
		"uses: actions/checkout@v4",
	} {
		assert.Empty(t, versionProblems(good, "0.1.0"), "%q", good)
	}
}

package release

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	usesRe = regexp.MustCompile(`(?m)^[ \t]*(?:- )?uses:[ \t]*(\S+)[ \t]*(.*)$`)
	// owner/repo[/path]@<full commit SHA> # vX[.Y[.Z]]
	pinnedRe = regexp.MustCompile(`^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+(/[A-Za-z0-9_./-]+)?@[0-9a-f]{40}$`)
	pinNote  = regexp.MustCompile(`^# v[0-9]+(\.[0-9]+){0,2}$`)
	// This repository's own actions: their version scheme is checked by
	// internal/docscheck.
	ownRe = regexp.MustCompile(`^deponent-dev/deponent-action(/verify)?@v[0-9]+(\.[0-9]+\.[0-9]+)?$`)
)

// checkUses judges one `uses:` value and the rest of its line.
func checkUses(ref, rest string) error {
	switch {
	case ref == "./" || ref == "./verify":
		return nil
	case ownRe.MatchString(ref):
		return nil
	case !pinnedRe.MatchString(ref):
		return fmt.Errorf("%s is not pinned by a full commit SHA", ref)
	case !pinNote.MatchString(strings.TrimSpace(rest)):
		return fmt.Errorf("%s: the version the SHA is goes in a comment, e.g. # v7.0.1 (got %q)", ref, rest)
	}
	return nil
}

// TestActionsPinnedBySHA: every action any workflow, action file or
// document of this repository uses is this repository's own or pinned by
// its full commit SHA with the version in a comment: a moved tag cannot
// change what runs.
func TestActionsPinnedBySHA(t *testing.T) {
	files := []string{"action.yml", "verify/action.yml", "README.md"}
	for _, pat := range []string{".github/workflows/*.yml", "examples/workflows/*.yml", "docs/*.md"} {
		m, err := filepath.Glob(filepath.Join(root, pat))
		require.NoError(t, err)
		for _, f := range m {
			rel, _ := filepath.Rel(root, f)
			files = append(files, rel)
		}
	}
	n := 0
	for _, f := range files {
		for _, m := range usesRe.FindAllStringSubmatch(readFile(t, f), -1) {
			n++
			assert.NoError(t, checkUses(m[1], m[2]), "%s", f)
		}
	}
	assert.Greater(t, n, 20, "found the uses: lines")

	// The negative controls.
	for _, bad := range [][2]string{
		{"actions/checkout@v4", ""},
		{"actions/checkout@main", ""},
		{"actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1", ""},
		{"actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1", "# latest"},
		{"actions/checkout@3d3c42e", "# v7.0.1"},
		{"actions/checkout@3D3C42E5AAC5BA805825DA76410C181273BA90B1", "# v7.0.1"},
		{"deponent-dev/deponent-action@main", ""},
		{"deponent-dev/deponent-action/verify@latest", ""},
	} {
		assert.Error(t, checkUses(bad[0], bad[1]), "%v", bad)
	}
	assert.NoError(t, checkUses("actions/attest-build-provenance@a2bbfa25375fe432b6a289bc6b6cd05ecd0c4c32", "# v4.1.0"))
}

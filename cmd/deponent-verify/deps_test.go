package main

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestVerifierLinksOnlyVerification: the binary a release manager trusts
// holds what verification needs and nothing that executes or decides
// actions — no shell parser, no jail, no gate, no Cell. The positive
// control is deponent-action, which must link all of them (else the test
// would pass on a broken go list).
func TestVerifierLinksOnlyVerification(t *testing.T) {
	deps := func(pkg string) map[string]bool {
		out, err := exec.Command("go", "list", "-deps", pkg).CombinedOutput()
		require.NoError(t, err, "go list -deps %s: %s", pkg, out)
		m := map[string]bool{}
		for _, l := range strings.Fields(string(out)) {
			m[l] = true
		}
		return m
	}
	const mod = "github.com/deponent-dev/deponent-action/"
	forbidden := []string{"mvdan.cc/sh/v3/syntax", mod + "pkg/jail", mod + "pkg/gate", mod + "pkg/kernel", mod + "pkg/action"}

	action := deps(mod + "cmd/deponent-action")
	for _, f := range forbidden {
		require.True(t, action[f], "control: deponent-action links %s", f)
	}
	verifier := deps(mod + "cmd/deponent-verify")
	require.True(t, verifier[mod+"pkg/evidence"], "deponent-verify links package evidence")
	for _, f := range forbidden {
		require.False(t, verifier[f], "deponent-verify must not link %s", f)
	}
}

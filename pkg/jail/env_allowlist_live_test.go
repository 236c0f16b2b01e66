//go:build linux || darwin

package jail

import (
	"math/rand/v2"
	"os"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLiveEnvironmentIsTheAllowlist: with hundreds of variables set in
// the caller (random names, the secrets CI runners carry, near misses of
// the allowed names), a step sees only the jail's own variables, the
// allowed host ones and what its shell sets — on the unjailed backend,
// which shares the environment code with every jail, and on the real jail.
func TestLiveEnvironmentIsTheAllowlist(t *testing.T) {
	f := newFixture(t)
	rng := rand.New(rand.NewPCG(7, 11))
	identifier := regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	var planted []string
	for _, n := range append(append(append([]string{}, knownSecretNames...), nearMisses...), randomNames(rng, 300)...) {
		// Names a shell can carry; the shell-maintained ones are set by
		// every shell anyway.
		if !identifier.MatchString(n) || n == "PWD" || n == "OLDPWD" || n == "IFS" || n == "PS4" || n == "ENV" || n == "SHELLOPTS" {
			continue
		}
		if hostNamesAllowed(n) {
			continue
		}
		t.Setenv(n, "planted-"+n)
		planted = append(planted, n)
	}
	require.Greater(t, len(planted), 250)
	t.Setenv("LANG", "C")
	t.Setenv("LC_ALL", "C")

	// Control: an ordinary child inherits every planted variable.
	line := regexp.MustCompile(`(?m)^([A-Za-z_][A-Za-z0-9_]*)=`)
	inherited := map[string]bool{}
	for _, m := range line.FindAllStringSubmatch(plainExec(t, f.sandbox, "env", os.Environ()), -1) {
		inherited[m[1]] = true
	}
	for _, n := range planted {
		require.True(t, inherited[n], "control: a plain child inherits %s", n)
	}

	allowed := map[string]bool{"PATH": true, "HOME": true, "TMPDIR": true, runTokenVar: true,
		// set by the step's own shell, not taken from the host
		"PWD": true, "OLDPWD": true, "SHLVL": true, "_": true}
	for k := range defaultEnv {
		allowed[k] = true // the jail's own defaults
	}
	for _, b := range []Backend{f.none, f.jail} {
		res := f.run(b, f.spec("env; exit 0"))
		require.Equal(t, 0, res.ExitCode, "%s: %s", b.Name(), res.Output)
		names := line.FindAllStringSubmatch(string(res.Output), -1)
		require.NotEmpty(t, names)
		seen := map[string]bool{}
		for _, m := range names {
			n := m[1]
			seen[n] = true
			if !allowed[n] && !hostNamesAllowed(n) {
				t.Errorf("%s: %s reached the step: only LANG, TERM and LC_* pass from the host", b.Name(), n)
			}
		}
		for _, n := range []string{"PATH", "HOME", "TMPDIR", runTokenVar, "LANG", "LC_ALL"} {
			assert.True(t, seen[n], "%s: %s missing: the allowlisted variables do pass", b.Name(), n)
		}
		assert.NotContains(t, string(res.Output), "planted-", b.Name())
	}
}

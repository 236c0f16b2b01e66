package jail

// The jailed environment is rebuilt from an allowlist: of the caller's
// variables only LANG, TERM and the LC_* family pass; everything else the
// jail sees is set by the jail itself (PATH, HOME, TMPDIR, the run token,
// defaultEnv) or by policy (Spec.Env). These tests hold buildEnv to that
// rule for every name, not a few known ones: a host environment of
// hundreds of random names, the secrets CI runners really carry, names one
// character away from the allowlist, and the test process's own
// environment.

import (
	"math/rand/v2"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hostNamesAllowed is the rule, restated independently of buildEnv.
func hostNamesAllowed(name string) bool {
	return name == "LANG" || name == "TERM" || strings.HasPrefix(name, "LC_")
}

// knownSecretNames are variables CI runners and developer machines carry
// that must never reach a step.
var knownSecretNames = []string{
	"GH_TOKEN", "GITHUB_TOKEN", "GH_ENTERPRISE_TOKEN", "GITHUB_PAT", "ACTIONS_RUNTIME_TOKEN",
	"ACTIONS_ID_TOKEN_REQUEST_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_URL", "ACTIONS_CACHE_URL", "ACTIONS_RESULTS_URL",
	"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AZURE_CLIENT_SECRET",
	"GOOGLE_APPLICATION_CREDENTIALS", "CLOUDSDK_AUTH_ACCESS_TOKEN", "NPM_TOKEN", "NODE_AUTH_TOKEN",
	"PYPI_TOKEN", "TWINE_PASSWORD", "CARGO_REGISTRY_TOKEN", "DOCKER_PASSWORD", "DOCKER_AUTH_CONFIG",
	"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "SSH_AUTH_SOCK", "GPG_AGENT_INFO", "KUBECONFIG",
	"VAULT_TOKEN", "CI_JOB_TOKEN", "RUNNER_TEMP", "GITHUB_ENV", "GITHUB_OUTPUT", "GITHUB_PATH",
	"LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "DYLD_INSERT_LIBRARIES", "BASH_ENV", "ENV",
	"PYTHONPATH", "PYTHONSTARTUP", "NODE_OPTIONS", "PERL5OPT", "RUBYOPT", "GIT_SSH_COMMAND",
	"GIT_CONFIG_GLOBAL", "GIT_ASKPASS", "SSL_CERT_FILE", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY",
	"no_proxy", "http_proxy", "IFS", "PS4", "SHELLOPTS", "CDPATH", "HISTFILE", "USER", "LOGNAME",
	"SHELL", "PWD", "OLDPWD", "XDG_RUNTIME_DIR", "DBUS_SESSION_BUS_ADDRESS", "DISPLAY",
}

// nearMisses are one step away from an allowed name.
var nearMisses = []string{
	"LANGUAGE", "LANG_", "XLANG", "lang", "Lang", "LANGX", "LAN", "TERMINFO", "TERMCAP", "TERM_PROGRAM",
	"COLORTERM", "term", "TER", "LC", "LC-ALL", "lc_all", "Lc_ALL", "lC_ALL", "XLC_ALL", "_LC_ALL",
	"L", "T", "LC_ALL ", " LANG", "LANG\t", "DEPONENT_JAIL_RUN_X",
}

// randomNames returns n distinct names from a wide alphabet, a quarter of
// them starting like an allowed name.
func randomNames(rng *rand.Rand, n int) []string {
	const chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-."
	starts := []string{"L", "LA", "LC", "T", "TE", "TERM", "LANG", "GH_", "GITHUB_", "ACTIONS_", ""}
	seen := map[string]bool{}
	var out []string
	for len(out) < n {
		var b strings.Builder
		if rng.IntN(4) == 0 {
			b.WriteString(starts[rng.IntN(len(starts))])
		}
		for range 1 + rng.IntN(12) {
			b.WriteByte(chars[rng.IntN(len(chars))])
		}
		name := b.String()
		if !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	return out
}

// hostForAllowlist is a host environment with every kind of name above,
// the test process's own variables, and a few allowed ones, each value
// unique so a value can be traced to its name.
func hostForAllowlist(t *testing.T, rng *rand.Rand) (host []string, names []string) {
	t.Helper()
	names = append(names, knownSecretNames...)
	names = append(names, nearMisses...)
	names = append(names, randomNames(rng, 600)...)
	names = append(names, "LANG", "TERM", "LC_ALL", "LC_CTYPE", "LC_", "LC_x-y")
	for k := range defaultEnv {
		names = append(names, k) // the host's value must not win over the jail's
	}
	for _, kv := range os.Environ() {
		if k, _, ok := strings.Cut(kv, "="); ok {
			names = append(names, k)
		}
	}
	seen := map[string]bool{}
	var uniq []string
	for _, n := range names {
		if n != "" && !seen[n] {
			seen[n] = true
			uniq = append(uniq, n)
		}
	}
	for i, n := range uniq {
		host = append(host, n+"=value-"+strings.Repeat("v", i%3)+"-"+itoa(i))
	}
	return host, uniq
}

func itoa(i int) string {
	const digits = "0123456789"
	if i < 10 {
		return digits[i : i+1]
	}
	return itoa(i/10) + digits[i%10:i%10+1]
}

func TestBuildEnvDropsEveryNameNotAllowed(t *testing.T) {
	rng := rand.New(rand.NewPCG(2024, 17))
	host, names := hostForAllowlist(t, rng)
	extra := map[string]string{"PYTHONHASHSEED": "0", "CI": "true"}
	env := buildEnv(host, "/usr/bin:/bin", "/r/home", "/r/tmp", "tok", extra)

	hostValue := map[string]string{}
	for _, kv := range host {
		k, v, _ := strings.Cut(kv, "=")
		hostValue[k] = v
	}
	// What must come out, computed from the rule, not from buildEnv.
	want := map[string]string{
		"PATH": "/usr/bin:/bin", "HOME": "/r/home", "TMPDIR": "/r/tmp", runTokenVar: "tok",
		"PYTHONHASHSEED": "0", "CI": "true",
	}
	// The jail's own defaults, never the host's value for them.
	for k, v := range defaultEnv {
		want[k] = v
	}
	allowedFromHost := 0
	for _, n := range names {
		if hostNamesAllowed(n) {
			want[n] = hostValue[n]
			allowedFromHost++
		}
	}
	require.GreaterOrEqual(t, allowedFromHost, 5, "the host must offer allowed names too, or the test proves only the drop")

	got := map[string]string{}
	for _, kv := range env {
		k, v, ok := strings.Cut(kv, "=")
		require.True(t, ok, "%q", kv)
		_, dup := got[k]
		require.False(t, dup, "%s twice", k)
		got[k] = v
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("host variable %s reached the jail: only LANG, TERM and LC_* may", k)
		}
	}
	assert.Equal(t, want, got)
	assert.True(t, sort.StringsAreSorted(env), "sorted, so the jail's environment is reproducible")

	// The same with the names in another order, and with every name
	// lower-cased: only the exact names pass.
	rng.Shuffle(len(host), func(i, j int) { host[i], host[j] = host[j], host[i] })
	assert.Equal(t, env, buildEnv(host, "/usr/bin:/bin", "/r/home", "/r/tmp", "tok", extra))
	lower := make([]string, len(host))
	for i, kv := range host {
		k, v, _ := strings.Cut(kv, "=")
		lower[i] = strings.ToLower(k) + "=" + v
	}
	for _, kv := range buildEnv(lower, "/p", "/h", "/t", "", nil) {
		k, _, _ := strings.Cut(kv, "=")
		if _, jails := defaultEnv[k]; !jails {
			assert.Contains(t, []string{"PATH", "HOME", "TMPDIR"}, k, "lower-case host name %s passed", k)
		}
	}
}

package verify

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/deponent-dev/deponent-action/pkg/evidence"
)

func TestValidate(t *testing.T) {
	full := "0123456789ABCDEF0123456789abcdef01234567"
	cases := []struct {
		name string
		edit func(*Options)
		bad  string // "" = valid
	}{
		{"defaults", func(*Options) {}, ""},
		{"full sha-1", func(o *Options) { o.ExpectCommit = full }, ""},
		{"full sha-256", func(o *Options) { o.ExpectCommit = strings.Repeat("ab", 32) }, ""},
		{"short sha", func(o *Options) { o.ExpectCommit = full[:12] }, "not a prefix"},
		{"39 digits", func(o *Options) { o.ExpectCommit = full[:39] }, "not a prefix"},
		{"non-hex", func(o *Options) { o.ExpectCommit = strings.Repeat("g", 40) }, "not a hexadecimal"},
		{"bad $GITHUB_SHA", func(o *Options) { o.ExpectCommit, o.CommitFrom = "abc", EnvSHA }, "$GITHUB_SHA \"abc\": not a full commit SHA"},
		{"repo", func(o *Options) { o.ExpectRepo = "octo/cat" }, ""},
		{"repo without owner", func(o *Options) { o.ExpectRepo = "/cat" }, "OWNER/NAME"},
		{"repo with two slashes", func(o *Options) { o.ExpectRepo = "a/b/c" }, "OWNER/NAME"},
		{"repo with a space", func(o *Options) { o.ExpectRepo = "octo/c at" }, "OWNER/NAME"},
		{"bad $GITHUB_REPOSITORY", func(o *Options) { o.ExpectRepo, o.RepoFrom = "x", EnvRepository }, "$GITHUB_REPOSITORY"},
		{"policy", func(o *Options) { o.ExpectPolicySHA256 = strings.Repeat("AB", 32) }, ""},
		{"short policy", func(o *Options) { o.ExpectPolicySHA256 = "abcd" }, "64-hex-digit"},
		{"head", func(o *Options) { o.Head = strings.Repeat("AB", 32) }, ""},
		{"short head", func(o *Options) { o.Head = "abcd" }, "64-hex-digit"},
		{"negative len", func(o *Options) { n := int64(-1); o.Len = &n }, "0 or more"},
		{"negative min", func(o *Options) { o.MinReceipts = ptr(-1) }, "0 or more"},
		{"each outcome", func(o *Options) { o.RequireOutcome = evidence.OutcomeDryRun }, ""},
		{"an unknown outcome", func(o *Options) { o.RequireOutcome = "PASS" }, `"PASS": not an outcome; want one of GOVERNED_PASS, GOVERNED_UNVERIFIED, GOVERNED_FAIL, GOVERNED_DRY_RUN`},
		{"outcome with spaces", func(o *Options) { o.RequireOutcome = " GOVERNED_PASS" }, "not an outcome"},
		{"lower case outcome", func(o *Options) { o.RequireOutcome = "governed_pass" }, "not an outcome"},
		{"an outcome and none", func(o *Options) { o.RequireOutcome, o.AllowFail = evidence.OutcomePass, true }, "contradict"},
		{"no verify command but a failure", func(o *Options) {
			o.RequireOutcome, o.AllowNoVerifyCommand = evidence.OutcomeFail, true
		}, "means nothing"},
		{"chain only and an outcome", func(o *Options) { o.RequireOutcome, o.ChainOnly = evidence.OutcomePass, true }, "--chain-only"},
		{"negative read timeout", func(o *Options) { o.ReadTimeout = -time.Second }, "--read-timeout"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := DefaultOptions()
			c.edit(&o)
			err := o.Validate()
			if c.bad == "" {
				require.NoError(t, err)
				return
			}
			var ue *UsageError
			require.ErrorAs(t, err, &ue)
			assert.Contains(t, err.Error(), c.bad)
		})
	}
	// Validate normalises what it accepts.
	o := DefaultOptions()
	o.ExpectCommit, o.Head, o.ExpectPolicySHA256 = full, strings.Repeat("AB", 32), strings.Repeat("CD", 32)
	require.NoError(t, o.Validate())
	assert.Equal(t, strings.ToLower(full), o.ExpectCommit)
	assert.Equal(t, strings.Repeat("ab", 32), o.Head)
	assert.Equal(t, strings.Repeat("cd", 32), o.ExpectPolicySHA256)
}

// TestZeroOptionsAreStrict: the zero Options require everything, relax
// nothing, and each relaxation drops exactly its requirement and is
// listed.
func TestZeroOptionsAreStrict(t *testing.T) {
	var o Options
	require.NoError(t, o.Validate())
	assert.Equal(t, []evidence.Outcome{evidence.OutcomePass}, o.outcomes())
	assert.True(t, o.requireRecomputed())
	assert.True(t, o.requireCanaries())
	assert.True(t, o.requireJailCanaries())
	assert.True(t, o.requireJailed())
	assert.Equal(t, 1, o.minReceipts())
	assert.Equal(t, DefaultReadTimeout, o.readTimeout())
	assert.Empty(t, o.relaxations())
	assert.Equal(t, Options{}, DefaultOptions())

	cases := []struct {
		edit  func(*Options)
		check func(*Options) bool // the requirement is off
		flag  string
	}{
		{func(o *Options) { o.AllowFail = true }, func(o *Options) bool { return o.outcomes() == nil }, "--allow-fail"},
		{func(o *Options) { o.AllowNoVerifyCommand = true }, func(o *Options) bool {
			return len(o.outcomes()) == 2 && o.outcomes()[1] == evidence.OutcomeUnverified
		}, "--allow-no-verify-command"},
		{func(o *Options) { o.AllowNoCanaries = true }, func(o *Options) bool { return !o.requireCanaries() && !o.requireJailCanaries() }, "--allow-no-canaries"},
		{func(o *Options) { o.AllowNoJailCanaries = true }, func(o *Options) bool { return o.requireCanaries() && !o.requireJailCanaries() }, "--allow-no-jail-canaries"},
		{func(o *Options) { o.AllowUnjailed = true }, func(o *Options) bool { return !o.requireJailed() }, "--allow-unjailed"},
		{func(o *Options) { o.AllowStoredOutcome = true }, func(o *Options) bool { return !o.requireRecomputed() }, "--allow-stored-outcome"},
		{func(o *Options) { o.MinReceipts = ptr(0) }, func(o *Options) bool { return o.minReceipts() == 0 }, "--min-receipts 0"},
		{func(o *Options) { o.NoReadTimeout = true }, func(o *Options) bool { return o.readTimeout() == 0 }, "--read-timeout 0"},
		{func(o *Options) { o.AllowAnyCommit = true }, func(o *Options) bool {
			o.BindGitHub(func(string) string { return "x" })
			return o.ExpectCommit == ""
		}, "--allow-any-commit"},
		{func(o *Options) { o.ChainOnly = true }, func(o *Options) bool {
			return o.outcomes() == nil && !o.requireCanaries() && !o.requireJailed() && o.minReceipts() == 0
		}, "--chain-only"},
	}
	for _, c := range cases {
		t.Run(c.flag, func(t *testing.T) {
			var o Options
			c.edit(&o)
			require.NoError(t, o.Validate())
			assert.True(t, c.check(&o))
			rs := o.relaxations()
			require.NotEmpty(t, rs)
			assert.Equal(t, c.flag, rs[0].Flag)
			assert.NotEmpty(t, rs[0].Relaxes)
		})
	}
}

func TestBindGitHub(t *testing.T) {
	env := map[string]string{EnvSHA: strings.Repeat("a", 40), EnvRepository: "o/r"}
	getenv := func(k string) string { return env[k] }
	var o Options
	o.BindGitHub(getenv)
	assert.Equal(t, strings.Repeat("a", 40), o.ExpectCommit)
	assert.Equal(t, EnvSHA, o.CommitFrom)
	assert.Equal(t, "o/r", o.ExpectRepo)
	assert.Equal(t, EnvRepository, o.RepoFrom)

	// An explicit expectation wins over the environment.
	o = Options{ExpectCommit: strings.Repeat("b", 40)}
	o.BindGitHub(getenv)
	assert.Equal(t, strings.Repeat("b", 40), o.ExpectCommit)
	assert.Empty(t, o.CommitFrom)
	assert.Equal(t, "o/r", o.ExpectRepo)

	// Outside Actions nothing is bound; unbound on request.
	o = Options{}
	o.BindGitHub(func(string) string { return "" })
	assert.Empty(t, o.ExpectCommit+o.ExpectRepo)
	o = Options{AllowAnyCommit: true}
	o.BindGitHub(getenv)
	assert.Empty(t, o.ExpectCommit+o.ExpectRepo)
}

func TestRunRefusesBadCommandLines(t *testing.T) {
	_, err := Run(nil, DefaultOptions())
	assert.ErrorContains(t, err, "no PATH")
	_, err = Run([]string{"-", "x", "-"}, DefaultOptions())
	assert.ErrorContains(t, err, "more than once")
	o := DefaultOptions()
	o.ExpectCommit = "abc"
	_, err = Run([]string{"x"}, o)
	var ue *UsageError
	assert.ErrorAs(t, err, &ue)
	_, err = Run([]string{"x"}, Options{RequireOutcome: "PASS"})
	assert.ErrorAs(t, err, &ue)
}

func TestPolicyJSON(t *testing.T) {
	o := DefaultOptions()
	b, err := json.Marshal(o.policy())
	require.NoError(t, err)
	assert.JSONEq(t, `{"outcomes":["GOVERNED_PASS"],"recomputed_outcome":true,"canaries":true,"jail_canaries":true,
		"jailed":true,"chain_only":false,"max_blocked":null,"expect_commit":null,"expect_commit_from":null,
		"expect_repo":null,"expect_repo_from":null,"expect_policy_sha256":null,"min_receipts":1,
		"expect_len":null,"expect_head":null,"read_timeout_seconds":60,"relaxed":[]}`, string(b))
	zero := int64(0)
	o.MaxBlocked, o.Len, o.AllowFail, o.NoReadTimeout = &zero, &zero, true, true
	b, err = json.Marshal(o.policy())
	require.NoError(t, err)
	assert.Contains(t, string(b), `"max_blocked":0`)
	assert.Contains(t, string(b), `"expect_len":0`)
	assert.Contains(t, string(b), `"outcomes":null`)
	assert.Contains(t, string(b), `"read_timeout_seconds":null`)
	assert.Contains(t, string(b), `{"flag":"--allow-fail","relaxes":"any recomputed outcome passes`)
}

package verify

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
		{"repo", func(o *Options) { o.ExpectRepo = "octo/cat" }, ""},
		{"repo without owner", func(o *Options) { o.ExpectRepo = "/cat" }, "OWNER/NAME"},
		{"repo with two slashes", func(o *Options) { o.ExpectRepo = "a/b/c" }, "OWNER/NAME"},
		{"repo with a space", func(o *Options) { o.ExpectRepo = "octo/c at" }, "OWNER/NAME"},
		{"head", func(o *Options) { o.Head = strings.Repeat("AB", 32) }, ""},
		{"short head", func(o *Options) { o.Head = "abcd" }, "64-hex-digit"},
		{"negative len", func(o *Options) { n := int64(-1); o.Len = &n }, "0 or more"},
		{"negative min", func(o *Options) { o.MinReceipts = -1 }, "0 or more"},
		{"outcome with spaces", func(o *Options) { o.RequireOutcome = " GOVERNED_PASS" }, "spaces"},
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
	o.ExpectCommit, o.Head = full, strings.Repeat("AB", 32)
	require.NoError(t, o.Validate())
	assert.Equal(t, strings.ToLower(full), o.ExpectCommit)
	assert.Equal(t, strings.Repeat("ab", 32), o.Head)
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
}

func TestPolicyJSON(t *testing.T) {
	o := DefaultOptions()
	b, err := json.Marshal(o.policy())
	require.NoError(t, err)
	assert.JSONEq(t, `{"require_outcome":null,"require_jailed":false,"max_blocked":null,"expect_commit":null,
		"expect_repo":null,"min_receipts":1,"expect_len":null,"expect_head":null}`, string(b))
	zero := int64(0)
	o.MaxBlocked, o.Len, o.RequireOutcome = &zero, &zero, "GOVERNED_PASS"
	b, err = json.Marshal(o.policy())
	require.NoError(t, err)
	assert.Contains(t, string(b), `"max_blocked":0`)
	assert.Contains(t, string(b), `"expect_len":0`)
	assert.Contains(t, string(b), `"require_outcome":"GOVERNED_PASS"`)
}

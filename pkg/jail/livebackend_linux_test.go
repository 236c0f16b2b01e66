package jail

import "testing"

// liveJail returns the real bubblewrap backend, or skips/fails loudly.
func liveJail(t testing.TB, opts Options) Backend {
	t.Helper()
	b := NewBwrap(opts)
	if err := b.Available(); err != nil {
		skipOrFail(t, "%v", err)
	}
	return b
}

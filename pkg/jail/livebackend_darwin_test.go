package jail

import "testing"

// liveJail returns the real Seatbelt backend, or skips/fails loudly.
func liveJail(t testing.TB, opts Options) Backend {
	t.Helper()
	b := NewSeatbelt(opts)
	if err := b.Available(); err != nil {
		skipOrFail(t, "%v", err)
	}
	return b
}

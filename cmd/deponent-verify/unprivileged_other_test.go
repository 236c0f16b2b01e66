//go:build !unix

package main_test

import "testing"

// unprivileged: without Unix permissions there is no one to drop to; the
// test that needs it is skipped on these systems.
func unprivileged(t *testing.T) (string, func(args ...string) result) {
	t.Helper()
	return t.TempDir(), func(args ...string) result { return run(t, nil, nil, args...) }
}

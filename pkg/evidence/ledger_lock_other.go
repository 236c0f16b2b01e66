//go:build !unix

package evidence

import "os"

// lockFile is a no-op where flock does not exist. Deponent writes ledgers
// only on macOS and Linux; elsewhere it only verifies them.
func lockFile(*os.File) (func(), error) { return func() {}, nil }

// fsyncDir is a no-op where directories cannot be synced (Windows).
func fsyncDir(*os.File) error { return nil }

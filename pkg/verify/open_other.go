//go:build !unix

package verify

import "os"

// openNoFollow opens a file found by a walk. Off Unix there is no
// O_NOFOLLOW; the walk's Lstat and the Stat after opening are the checks.
func openNoFollow(path string) (*os.File, error) {
	return os.Open(path)
}

//go:build unix

package verify

import (
	"os"
	"syscall"
)

// openNoFollow opens a file found by a walk without following a symlink
// put in its place since the walk saw it, and without blocking on a FIFO
// (O_NONBLOCK: the caller then refuses it as not a regular file).
func openNoFollow(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
}

//go:build linux || darwin

package jail

import "syscall"

// Open flags the no-follow walks use.
const (
	oNoFollow  = syscall.O_NOFOLLOW
	oDirectory = syscall.O_DIRECTORY
	oNonBlock  = syscall.O_NONBLOCK
)

//go:build !darwin

package jail

import (
	"fmt"
	"runtime"
)

// probeSeatbelt: Seatbelt exists only on macOS.
func probeSeatbelt(string, Options) error {
	return fmt.Errorf("jail: Seatbelt (sandbox-exec) needs macOS (this is %s); on Linux use backend %q", runtime.GOOS, NameBwrap)
}

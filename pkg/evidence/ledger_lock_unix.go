//go:build unix

package evidence

import (
	"os"
	"syscall"
)

// lockFile takes an exclusive, non-blocking advisory lock on a ledger file so
// that two writers cannot interleave one chain.
func lockFile(f *os.File) (func(), error) {
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return nil, err
	}
	return func() { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }, nil
}

func fsyncDir(d *os.File) error { return d.Sync() }

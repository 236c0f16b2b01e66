//go:build unix

package action

import (
	"io/fs"
	"syscall"
)

// linkCount is a file's number of hard links (1 when unknown).
func linkCount(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}

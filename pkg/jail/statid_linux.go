package jail

import (
	"os"
	"syscall"
)

// statFields extracts what the tripwire compares from an lstat result.
func statFields(fi os.FileInfo) (dev, ino, nlink uint64, uid, gid uint32, ctime int64, blocks int64) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, 0, 0, 0, 0, 0
	}
	return uint64(st.Dev), st.Ino, uint64(st.Nlink), st.Uid, st.Gid, st.Ctim.Nano(), st.Blocks
}

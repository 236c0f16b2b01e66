package jail

import (
	"strings"
	"syscall"
	"unsafe"
)

// removeCreatedMountPoints removes the directories bwrap created in the
// sandbox as mount points for absent protected paths, deepest first, when
// they are still empty directories. It never follows a symlink: the jailed
// code may have renamed a created directory away and planted a link in its
// place, and a path-based removal would then delete whatever the link
// points at. Each component is opened relative to its parent with
// O_NOFOLLOW, and the last one is removed with unlinkat(AT_REMOVEDIR), which
// refuses anything but an empty directory.
func removeCreatedMountPoints(sandbox string, prs []protected) {
	for _, pr := range prs {
		for i := len(pr.created) - 1; i >= 0; i-- {
			if removeEmptyDirNoFollow(sandbox, pr.created[i]) != nil {
				break // gone, not empty, replaced, or reached through a link: leave it
			}
		}
	}
}

const atRemoveDir = 0x200 // AT_REMOVEDIR

// removeEmptyDirNoFollow removes path (below sandbox) if it is an empty
// directory reached from sandbox without following any symlink.
func removeEmptyDirNoFollow(sandbox, path string) error {
	rel, ok := strings.CutPrefix(path, sandbox+"/")
	if !ok || rel == "" {
		return syscall.EINVAL
	}
	parts := strings.Split(rel, "/")
	const flags = syscall.O_RDONLY | syscall.O_DIRECTORY | syscall.O_NOFOLLOW | syscall.O_CLOEXEC
	fd, err := syscall.Open(sandbox, flags, 0)
	if err != nil {
		return err
	}
	for _, part := range parts[:len(parts)-1] {
		next, err := syscall.Openat(fd, part, flags, 0)
		syscall.Close(fd)
		if err != nil {
			return err
		}
		fd = next
	}
	defer syscall.Close(fd)
	name, err := syscall.BytePtrFromString(parts[len(parts)-1])
	if err != nil {
		return err
	}
	if _, _, errno := syscall.Syscall(syscall.SYS_UNLINKAT, uintptr(fd), uintptr(unsafe.Pointer(name)), atRemoveDir); errno != 0 {
		return errno
	}
	return nil
}

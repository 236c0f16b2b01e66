package jail

import (
	"io/fs"
	"syscall"
	"unsafe"
)

// scanDir lists the directory abs without following a symlink at abs and
// without the os package's per-file machinery: one open, getdents until
// the end, one close — the tripwire walks every directory of the sandbox
// twice per step, so this is its hot path. With stat it also returns the
// directory's own stat (taken on the open descriptor).
func scanDir(abs string, stat bool) ([]dirEnt, *dirStat, error) {
	fd, err := syscall.Open(abs, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, &fs.PathError{Op: "open", Path: abs, Err: err}
	}
	defer syscall.Close(fd)
	var st *dirStat
	if stat {
		st = new(dirStat)
		if err := syscall.Fstat(fd, st); err != nil {
			return nil, nil, &fs.PathError{Op: "fstat", Path: abs, Err: err}
		}
	}
	buf := make([]byte, 16<<10)
	var ents []dirEnt
	for {
		n, err := syscall.ReadDirent(fd, buf)
		if err != nil {
			return nil, nil, &fs.PathError{Op: "getdents", Path: abs, Err: err}
		}
		if n <= 0 {
			return ents, st, nil
		}
		for off := 0; off+19 <= n; {
			// struct linux_dirent64: ino u64, off s64, reclen u16, type u8, name.
			reclen := int(*(*uint16)(unsafe.Pointer(&buf[off+16])))
			if reclen == 0 || off+reclen > n {
				break
			}
			typ := buf[off+18]
			name := buf[off+19 : off+reclen]
			for i, c := range name {
				if c == 0 {
					name = name[:i]
					break
				}
			}
			off += reclen
			if len(name) == 1 && name[0] == '.' || len(name) == 2 && name[0] == '.' && name[1] == '.' {
				continue
			}
			e := dirEnt{name: string(name)}
			switch typ {
			case syscall.DT_DIR:
				e.typ = fs.ModeDir
			case syscall.DT_LNK:
				e.typ = fs.ModeSymlink
			case syscall.DT_REG:
				e.typ = 0
			case syscall.DT_UNKNOWN:
				var lst syscall.Stat_t
				if syscall.Lstat(abs+"/"+e.name, &lst) != nil {
					continue
				}
				e.typ = modeType(lst.Mode)
			default:
				e.typ = fs.ModeIrregular
			}
			ents = append(ents, e)
		}
	}
}

func modeType(m uint32) fs.FileMode {
	switch m & syscall.S_IFMT {
	case syscall.S_IFDIR:
		return fs.ModeDir
	case syscall.S_IFLNK:
		return fs.ModeSymlink
	case syscall.S_IFREG:
		return 0
	}
	return fs.ModeIrregular
}

// dirStat is what scanDir's stat returns.
type dirStat = syscall.Stat_t

// dirMtime is a directory's mtime from scanDir's stat.
func dirMtime(st *dirStat) int64 { return st.Mtim.Nano() }

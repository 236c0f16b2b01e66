//go:build !linux

package jail

import (
	"io/fs"
	"os"
)

// scanDir lists the directory abs without following a symlink at abs. With
// stat it also returns the directory's own modification time.
func scanDir(abs string, stat bool) ([]dirEnt, *dirStat, error) {
	f, err := os.OpenFile(abs, os.O_RDONLY|oNoFollow|oDirectory, 0)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	var st *dirStat
	if stat {
		fi, err := f.Stat()
		if err != nil {
			return nil, nil, err
		}
		st = &dirStat{mtime: fi.ModTime().UnixNano()}
	}
	des, err := f.ReadDir(-1)
	if err != nil {
		return nil, nil, err
	}
	ents := make([]dirEnt, 0, len(des))
	for _, d := range des {
		t := d.Type()
		if t&^(fs.ModeDir|fs.ModeSymlink) != 0 {
			t = fs.ModeIrregular
		}
		ents = append(ents, dirEnt{name: d.Name(), typ: t})
	}
	return ents, st, nil
}

type dirStat struct{ mtime int64 }

func dirMtime(st *dirStat) int64 { return st.mtime }

package jail

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// runDir is the per-run private area, created outside the sandbox and
// removed afterwards: the jailed process's TMPDIR and HOME, the output file,
// the started marker, and the empty file and directory used to mask paths.
type runDir struct {
	root, tmp, home, emptyDir, emptyFile, out, started string
	// nproc is the RLIMIT_NPROC the launcher should apply (0: none), set
	// by the runner before the backend builds its command line.
	nproc int
	// seccompFD is the descriptor number (in the launched process) of the
	// bwrap jail's seccomp filter (0: none), set by the backend that opens
	// it (launch.files).
	seccompFD int
}

func newRunDir(parent string) (*runDir, error) {
	root, err := os.MkdirTemp(parent, "deponent-jail-")
	if err != nil {
		return nil, fmt.Errorf("jail: private run directory: %w", err)
	}
	// Resolved so that Seatbelt rules match (/var → /private/var on macOS).
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	rd := &runDir{
		root:      root,
		tmp:       filepath.Join(root, "tmp"),
		home:      filepath.Join(root, "home"),
		emptyDir:  filepath.Join(root, "empty.d"),
		emptyFile: filepath.Join(root, "empty"),
		out:       filepath.Join(root, "output"),
		started:   filepath.Join(root, "started"),
	}
	for _, d := range []string{rd.tmp, rd.home, rd.emptyDir} {
		if err := os.Mkdir(d, 0o700); err != nil {
			rd.remove()
			return nil, fmt.Errorf("jail: private run directory: %w", err)
		}
	}
	if err := os.WriteFile(rd.emptyFile, nil, 0o400); err != nil {
		rd.remove()
		return nil, fmt.Errorf("jail: private run directory: %w", err)
	}
	return rd, nil
}

// remove deletes the run directory even when the jailed code left
// directories without write or search permission in it.
func (rd *runDir) remove() {
	if os.RemoveAll(rd.root) == nil {
		return
	}
	_ = filepath.WalkDir(rd.root, func(p string, d fs.DirEntry, err error) error {
		if d != nil && d.IsDir() { // WalkDir does not follow symlinks
			_ = os.Chmod(p, 0o700)
		}
		return nil
	})
	_ = os.RemoveAll(rd.root)
}

// newToken returns a random run token.
func newToken() string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		panic("jail: no randomness: " + err.Error())
	}
	return hex.EncodeToString(b)
}

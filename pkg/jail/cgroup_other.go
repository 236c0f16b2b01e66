//go:build !linux

package jail

import "syscall"

// Cgroup modes of Options.Cgroup besides a path (Linux only; elsewhere the
// runner always polls).
const (
	CgroupAuto = ""
	CgroupOff  = "off"
)

// stepCgroup exists on Linux only.
type stepCgroup struct{}

type cgroupEvents struct{ oomKills, pidsMax int64 }

func newStepCgroup(string, string, Limits) (*stepCgroup, string) {
	return nil, "no cgroups on this system"
}

func (*stepCgroup) wrap(argv []string) []string          { return argv }
func (*stepCgroup) placeByClone() bool                   { return false }
func (*stepCgroup) placeByThread() bool                  { return false }
func (*stepCgroup) startInside(start func() error) error { return start() }
func (*stepCgroup) procs() ([]int, error)                { return nil, nil }
func (*stepCgroup) events() (cgroupEvents, error)        { return cgroupEvents{}, nil }
func (*stepCgroup) killAll() ([]int, error)              { return nil, nil }
func (*stepCgroup) remove()                              {}
func (*stepCgroup) cgroupFD() int                        { return -1 }

// withCgroupFD is Linux's CLONE_INTO_CGROUP; nothing to do elsewhere.
func withCgroupFD(*syscall.SysProcAttr, int) {}

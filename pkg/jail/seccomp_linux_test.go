package jail

import (
	"encoding/binary"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runBPF interprets the classic-BPF subset the filter uses (ld abs word,
// jeq/jge/jset with a constant, ret constant) over one struct seccomp_data.
func runBPF(t *testing.T, prog []byte, arch, nr uint32, args [6]uint64) uint32 {
	t.Helper()
	var data [64]byte
	binary.NativeEndian.PutUint32(data[0:], nr)
	binary.NativeEndian.PutUint32(data[4:], arch)
	for i, a := range args {
		binary.NativeEndian.PutUint64(data[16+8*i:], a)
	}
	var acc uint32
	for pc := 0; pc*8 < len(prog); pc++ {
		in := prog[pc*8:]
		code := binary.NativeEndian.Uint16(in[0:])
		jt, jf := int(in[2]), int(in[3])
		k := binary.NativeEndian.Uint32(in[4:])
		jump := func(cond bool) {
			if cond {
				pc += jt
			} else {
				pc += jf
			}
		}
		switch code {
		case bpfLdWAbs:
			require.LessOrEqual(t, int(k)+4, len(data))
			acc = binary.NativeEndian.Uint32(data[k:])
		case bpfJeqK:
			jump(acc == k)
		case bpfJgeK:
			jump(acc >= k)
		case bpfJsetK:
			jump(acc&k != 0)
		case bpfRetK:
			return k
		default:
			t.Fatalf("unexpected BPF opcode %#x at %d", code, pc)
		}
	}
	t.Fatal("the program fell off its end")
	return 0
}

// TestSeccompProgramDecisions runs the filter of each architecture (the
// live test runs only the native one) through an interpreter: set-id bits
// refused in every mode argument it covers, ordinary modes allowed, an
// open without O_CREAT allowed whatever its (ignored) mode register holds,
// the calls it cannot inspect and other ABIs refused with ENOSYS, every
// other call allowed.
func TestSeccompProgramDecisions(t *testing.T) {
	const (
		allow  = seccompAllow
		eperm  = seccompErrno | uint32(syscall.EPERM)
		enosys = seccompErrno | uint32(syscall.ENOSYS)
	)
	type call struct {
		name string
		nr   uint32
		args [6]uint64
		want uint32
	}
	cases := map[string][]call{
		"amd64": {
			{"chmod 04755", 90, [6]uint64{0, 0o4755}, eperm},
			{"chmod 02755", 90, [6]uint64{0, 0o2755}, eperm},
			{"chmod 0755", 90, [6]uint64{0, 0o755}, allow},
			{"fchmod 04755", 91, [6]uint64{3, 0o4755}, eperm},
			{"fchmodat 06755", 268, [6]uint64{0, 0, 0o6755}, eperm},
			{"fchmodat2 04755", 452, [6]uint64{0, 0, 0o4755, 0}, eperm},
			{"open creat 04755", 2, [6]uint64{0, 0x41, 0o4755}, eperm},
			{"open creat 0644", 2, [6]uint64{0, 0x41, 0o644}, allow},
			{"open rdonly, garbage mode", 2, [6]uint64{0, 0, 0o7777}, allow},
			{"openat creat 04755", 257, [6]uint64{0, 0, 0x241, 0o4755}, eperm},
			{"openat tmpfile 02755", 257, [6]uint64{0, 0, 0x410000 | 2, 0o2755}, eperm},
			{"openat rdonly, garbage mode", 257, [6]uint64{0, 0, 0, 0o4755}, allow},
			{"creat 04755", 85, [6]uint64{0, 0o4755}, eperm},
			{"mknod reg 04755", 133, [6]uint64{0, 0o100000 | 0o4755}, eperm},
			{"mknodat fifo 0644", 259, [6]uint64{0, 0, 0o10000 | 0o644}, allow},
			{"openat2", 437, [6]uint64{}, enosys},
			{"io_uring_setup", 425, [6]uint64{}, enosys},
			{"x32 chmod", x32SyscallBit | 90, [6]uint64{0, 0o755}, enosys},
			{"read", 0, [6]uint64{0, 0, 0o4755}, allow},
			{"mkdir 02777 (ignored bits)", 83, [6]uint64{0, 0o2777}, allow},
		},
		"arm64": {
			{"fchmod 04755", 52, [6]uint64{3, 0o4755}, eperm},
			{"fchmodat 02755", 53, [6]uint64{0, 0, 0o2755}, eperm},
			{"fchmodat 0755", 53, [6]uint64{0, 0, 0o755}, allow},
			{"fchmodat2 04755", 452, [6]uint64{0, 0, 0o4755, 0}, eperm},
			{"openat creat 04755", 56, [6]uint64{0, 0, 0x41, 0o4755}, eperm},
			{"openat creat 0644", 56, [6]uint64{0, 0, 0x41, 0o644}, allow},
			{"openat rdonly, garbage mode", 56, [6]uint64{0, 0, 0, 0o4755}, allow},
			{"mknodat reg 04755", 33, [6]uint64{0, 0, 0o100000 | 0o4755}, eperm},
			{"openat2", 437, [6]uint64{}, enosys},
			{"io_uring_setup", 425, [6]uint64{}, enosys},
			{"read", 63, [6]uint64{0, 0, 0o4755}, allow},
		},
	}
	for arch, calls := range cases {
		native, rules := seccompRules(arch)
		require.NotNil(t, rules, arch)
		prog, err := seccompProgram(arch)
		require.NoError(t, err, arch)
		for _, c := range calls {
			assert.Equal(t, c.want, runBPF(t, prog, native, c.nr, c.args), "%s %s", arch, c.name)
		}
		// Another ABI's numbers mean other calls: everything is refused.
		other := uint32(0x40000003) // AUDIT_ARCH_I386
		assert.Equal(t, enosys, runBPF(t, prog, other, 0, [6]uint64{}), "%s: a call of another ABI", arch)
	}
	prog, err := seccompProgram("riscv64")
	require.NoError(t, err)
	assert.Nil(t, prog, "no table, no filter (the package doc says so)")
}

package jail

import (
	"encoding/binary"
	"fmt"
	"os"
	"runtime"
	"syscall"
)

// The bwrap jail's seccomp filter: one classic-BPF program handed to bwrap
// (--seccomp FD), applied to the jailed code and everything it starts.
// It is not a general syscall sandbox (see the package doc: the kernel's
// surface stays); it closes one class. A root runner's jailed uid maps to
// host uid 0, so a file the step creates in the sandbox is owned by root on
// the host, and its owner may set the set-user-ID bit: one allowed python3
// step left a setuid-root program in the workspace, where any local account
// (or a later step that drops privileges) runs it as root. An unprivileged
// runner's step would leave set-id programs of the runner's account. The
// filter refuses (EPERM) every way of giving a file a set-user-ID or
// set-group-ID bit through a mode argument — chmod, fchmod, fchmodat,
// fchmodat2, and the mode of open/openat/creat with O_CREAT or O_TMPFILE
// and of mknod/mknodat (mkdir ignores both bits) — and answers ENOSYS to
// the calls whose arguments it cannot see (openat2's struct, io_uring,
// which opens and creates files from a ring) and to every call of another
// ABI (x32, 32-bit compat), whose numbers differ.

// Classic BPF and seccomp constants (linux/filter.h, linux/seccomp.h,
// linux/audit.h).
const (
	bpfLdWAbs    = 0x20 // BPF_LD | BPF_W | BPF_ABS
	bpfJeqK      = 0x15 // BPF_JMP | BPF_JEQ | BPF_K
	bpfJgeK      = 0x35 // BPF_JMP | BPF_JGE | BPF_K
	bpfJsetK     = 0x45 // BPF_JMP | BPF_JSET | BPF_K
	bpfRetK      = 0x06 // BPF_RET | BPF_K
	seccompAllow = 0x7fff0000
	seccompErrno = 0x00050000

	auditArchX8664   = 0xc000003e
	auditArchAarch64 = 0xc00000b7
	x32SyscallBit    = 0x40000000

	setIDBits  = 0o6000          // S_ISUID | S_ISGID
	createMask = 0x40 | 0x400000 // O_CREAT | __O_TMPFILE (amd64 and arm64 alike)
)

// seccompRule says how the filter treats one system call.
type seccompRule struct {
	nr       uint32
	flagsArg int // the argument holding open flags (-1: none; the mode always counts)
	modeArg  int // the argument holding the mode (-1: refuse the call with ENOSYS)
}

// seccompRules lists the calls of the native ABI the filter looks at, or
// nil where it has no table (the jail then runs without the filter and the
// package doc says so).
func seccompRules(arch string) (uint32, []seccompRule) {
	switch arch {
	case "amd64":
		return auditArchX8664, []seccompRule{
			{nr: 90, flagsArg: -1, modeArg: 1},   // chmod
			{nr: 91, flagsArg: -1, modeArg: 1},   // fchmod
			{nr: 268, flagsArg: -1, modeArg: 2},  // fchmodat
			{nr: 452, flagsArg: -1, modeArg: 2},  // fchmodat2
			{nr: 2, flagsArg: 1, modeArg: 2},     // open
			{nr: 257, flagsArg: 2, modeArg: 3},   // openat
			{nr: 85, flagsArg: -1, modeArg: 1},   // creat
			{nr: 133, flagsArg: -1, modeArg: 1},  // mknod
			{nr: 259, flagsArg: -1, modeArg: 2},  // mknodat
			{nr: 437, flagsArg: -1, modeArg: -1}, // openat2
			{nr: 425, flagsArg: -1, modeArg: -1}, // io_uring_setup
		}
	case "arm64":
		return auditArchAarch64, []seccompRule{
			{nr: 52, flagsArg: -1, modeArg: 1},   // fchmod
			{nr: 53, flagsArg: -1, modeArg: 2},   // fchmodat
			{nr: 452, flagsArg: -1, modeArg: 2},  // fchmodat2
			{nr: 56, flagsArg: 2, modeArg: 3},    // openat
			{nr: 33, flagsArg: -1, modeArg: 2},   // mknodat
			{nr: 437, flagsArg: -1, modeArg: -1}, // openat2
			{nr: 425, flagsArg: -1, modeArg: -1}, // io_uring_setup
		}
	}
	return 0, nil
}

// bpfInsn is one instruction; jt and jf name labels (resolved by asm).
type bpfInsn struct {
	code   uint16
	k      uint32
	jt, jf string
	label  string // the label of this instruction
}

// asm resolves the labels into relative jumps and encodes struct
// sock_filter (u16 code, u8 jt, u8 jf, u32 k) in the host's byte order.
func asm(prog []bpfInsn) ([]byte, error) {
	at := map[string]int{}
	for i, in := range prog {
		if in.label != "" {
			at[in.label] = i
		}
	}
	rel := func(i int, l string) (uint8, error) {
		if l == "" {
			return 0, nil
		}
		t, ok := at[l]
		if !ok || t <= i || t-i-1 > 255 {
			return 0, fmt.Errorf("jail: seccomp program: bad jump from %d to %q", i, l)
		}
		return uint8(t - i - 1), nil
	}
	out := make([]byte, 0, 8*len(prog))
	for i, in := range prog {
		jt, err := rel(i, in.jt)
		if err != nil {
			return nil, err
		}
		jf, err := rel(i, in.jf)
		if err != nil {
			return nil, err
		}
		var b [8]byte
		binary.NativeEndian.PutUint16(b[0:], in.code)
		b[2], b[3] = jt, jf
		binary.NativeEndian.PutUint32(b[4:], in.k)
		out = append(out, b[:]...)
	}
	return out, nil
}

// argLow is the offset in struct seccomp_data of the low 32 bits of
// argument n (modes and open flags are 32-bit; amd64 and arm64 are little
// endian).
func argLow(n int) uint32 { return 16 + 8*uint32(n) }

// seccompProgram builds the filter for arch, or nil when there is none.
func seccompProgram(arch string) ([]byte, error) {
	native, rules := seccompRules(arch)
	if rules == nil {
		return nil, nil
	}
	p := []bpfInsn{
		{code: bpfLdWAbs, k: 4}, // arch
		{code: bpfJeqK, k: native, jf: "enosys"},
		{code: bpfLdWAbs, k: 0}, // nr
	}
	if arch == "amd64" {
		p = append(p, bpfInsn{code: bpfJgeK, k: x32SyscallBit, jt: "enosys"})
	}
	for i, r := range rules {
		p = append(p, bpfInsn{code: bpfJeqK, k: r.nr, jt: fmt.Sprint("rule", i)})
	}
	p = append(p, bpfInsn{code: bpfRetK, k: seccompAllow})
	for i, r := range rules {
		l := fmt.Sprint("rule", i)
		if r.modeArg < 0 {
			p = append(p, bpfInsn{label: l, code: bpfRetK, k: seccompErrno | uint32(syscall.ENOSYS)})
			continue
		}
		if r.flagsArg >= 0 {
			p = append(p,
				bpfInsn{label: l, code: bpfLdWAbs, k: argLow(r.flagsArg)},
				bpfInsn{code: bpfJsetK, k: createMask, jf: "allow"})
			l = ""
		}
		p = append(p,
			bpfInsn{label: l, code: bpfLdWAbs, k: argLow(r.modeArg)},
			bpfInsn{code: bpfJsetK, k: setIDBits, jt: "eperm", jf: "allow"})
	}
	p = append(p,
		bpfInsn{label: "allow", code: bpfRetK, k: seccompAllow},
		bpfInsn{label: "eperm", code: bpfRetK, k: seccompErrno | uint32(syscall.EPERM)},
		bpfInsn{label: "enosys", code: bpfRetK, k: seccompErrno | uint32(syscall.ENOSYS)})
	return asm(p)
}

// seccompFile writes the native filter to a file in dir and opens it
// read-only for bwrap's --seccomp (the name is removed at once); nil, and
// no error, where there is no filter for this architecture.
func seccompFile(dir string) (*os.File, error) {
	prog, err := seccompProgram(runtime.GOARCH)
	if err != nil || prog == nil {
		return nil, err
	}
	w, err := os.CreateTemp(dir, "seccomp-*.bpf")
	if err != nil {
		return nil, fmt.Errorf("jail: seccomp filter: %w", err)
	}
	defer os.Remove(w.Name())
	_, err = w.Write(prog)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("jail: seccomp filter: %w", err)
	}
	f, err := os.Open(w.Name())
	if err != nil {
		return nil, fmt.Errorf("jail: seccomp filter: %w", err)
	}
	return f, nil
}

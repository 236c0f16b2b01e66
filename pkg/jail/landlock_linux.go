package jail

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"unsafe"
)

// Landlock (linux/landlock.h): the agent jail shares the host's network
// namespace, the agent's way to its model API, and with it the host's
// abstract Unix sockets, which live in the network namespace and have no
// file to hide: a jailed agent connected to a host service listening on
// one (a test service, X11's @/tmp/.X11-unix, a container shim). Landlock's
// scopes (ABI 6, Linux 6.12) cut that: a process in a domain with
// LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET connects only to abstract sockets of
// its own domain, and with LANDLOCK_SCOPE_SIGNAL signals only its own.
// Files and the network stay as the mounts leave them (no access right is
// handled), so path sockets (the relay) and TCP are unaffected.
const (
	sysLandlockCreateRuleset = 444 // the same number on every architecture
	sysLandlockRestrictSelf  = 446
	landlockCreateVersion    = 1 << 0
	landlockScopeAbstract    = 1 << 0
	landlockScopeSignal      = 1 << 1
	landlockScopesABI        = 6
)

// landlockABI is the kernel's Landlock ABI version, 0 when it has none.
func landlockABI() int {
	v, _, errno := syscall.RawSyscall(sysLandlockCreateRuleset, 0, 0, landlockCreateVersion)
	if errno != 0 {
		return 0
	}
	return int(v)
}

// startScoped starts cmd from a thread restricted to a Landlock domain
// scoped as above, so the child (bwrap, and the agent it starts) inherits
// the domain. The thread is never given back to the Go scheduler, and it
// must outlive the child (whose parent-death signal fires when the thread
// that started it ends): it waits until release is called, then ends with
// its goroutine. Where the kernel has no scopes the agent starts without
// them and the returned note says so; a kernel that has them but refuses
// the domain is an error (nothing started).
func startScoped(cmd *exec.Cmd) (note string, release func(), err error) {
	if abi := landlockABI(); abi < landlockScopesABI {
		return fmt.Sprintf("host abstract Unix sockets are reachable: this kernel's Landlock ABI is %d, scopes need %d (Linux 6.12)",
			abi, landlockScopesABI), func() {}, cmd.Start()
	}
	done := make(chan error, 1)
	hold := make(chan struct{})
	go func() {
		runtime.LockOSThread() // never unlocked: the thread dies with the goroutine
		if os.Geteuid() != 0 {
			// Without CAP_SYS_ADMIN a domain needs no_new_privs (per thread).
			if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, 38 /* PR_SET_NO_NEW_PRIVS */, 1, 0); errno != 0 {
				done <- fmt.Errorf("jail: no_new_privs for the agent's Landlock scope: %w", errno)
				return
			}
		}
		attr := struct{ fs, net, scoped uint64 }{scoped: landlockScopeAbstract | landlockScopeSignal}
		fd, _, errno := syscall.RawSyscall(sysLandlockCreateRuleset, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
		if errno != 0 {
			done <- fmt.Errorf("jail: Landlock scope for the agent: %w", errno)
			return
		}
		_, _, errno = syscall.RawSyscall(sysLandlockRestrictSelf, fd, 0, 0)
		syscall.Close(int(fd))
		if errno != 0 {
			done <- fmt.Errorf("jail: Landlock scope for the agent: %w", errno)
			return
		}
		err := cmd.Start()
		done <- err
		if err == nil {
			<-hold
		}
	}()
	err = <-done
	return "", func() { close(hold) }, err
}

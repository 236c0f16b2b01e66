package mcprelay

import (
	"fmt"
	"net"
	"os"
	"syscall"
)

// checkPeer refuses a peer whose uid is not ours (SO_PEERCRED).
func checkPeer(c *net.UnixConn) error {
	raw, err := c.SyscallConn()
	if err != nil {
		return fmt.Errorf("mcprelay: peer credentials: %w", err)
	}
	var cred *syscall.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil {
		return fmt.Errorf("mcprelay: peer credentials: %w", err)
	}
	if cerr != nil {
		return fmt.Errorf("mcprelay: peer credentials: %w", cerr)
	}
	if int(cred.Uid) != os.Getuid() {
		return fmt.Errorf("mcprelay: refused a connection from uid %d (pid %d); only uid %d may connect", cred.Uid, cred.Pid, os.Getuid())
	}
	return nil
}

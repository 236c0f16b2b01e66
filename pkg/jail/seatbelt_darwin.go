package jail

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"time"
)

// probeSeatbelt runs a trivial command under a profile of the same shape as
// a real run's, so an operation the OS version does not know fails here,
// loudly, instead of at the first step.
func probeSeatbelt(bin string, opts Options) error {
	if _, err := os.Stat(bin); err != nil {
		return fmt.Errorf("jail: Seatbelt launcher %s is missing (%v): nothing will run jailed on this Mac", bin, err)
	}
	tmp := tempRoot(opts)
	profile, err := seatbeltProfile(profileParams{
		sandbox: tmp, writable: []string{tmp}, output: []string{tmp + "/probe"},
		protected: []string{tmp + "/.git"}, home: realHome(opts),
	})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-p", profile, shell, "-c", ":")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("jail: Seatbelt probe failed (%s: %v: %q): sandbox-exec cannot apply the jail profile here; "+
			"nothing will run jailed until this is fixed", bin, err, bytes.TrimSpace(stderr.Bytes()))
	}
	return nil
}

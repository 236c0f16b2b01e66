package jail

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// probeSeatbelt runs a trivial command under a profile that has every kind
// of rule a real run's profile has (protected paths and their pinned
// parents, the any-depth .git rule, exposed roots, secrets), so an operation
// or filter this macOS does not know fails here, loudly, instead of at the
// first step.
func probeSeatbelt(bin string, opts Options) error {
	if _, err := os.Stat(bin); err != nil {
		return fmt.Errorf("jail: Seatbelt launcher %s is missing (%v): nothing will run jailed on this Mac", bin, err)
	}
	dir, err := os.MkdirTemp(tempRoot(opts), "deponent-seatbelt-probe-")
	if err != nil {
		return fmt.Errorf("jail: Seatbelt probe: %w", err)
	}
	defer os.RemoveAll(dir)
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		dir = r
	}
	profile, params, err := seatbeltProfile(seatbeltInputs{
		sandbox:   dir,
		runDir:    dir,
		writable:  []string{dir},
		output:    []string{filepath.Join(dir, "probe")},
		protected: []string{filepath.Join(dir, ".git"), filepath.Join(dir, ".github", "workflows")},
		home:      realHome(opts),
		exposed:   []string{dir},
		// The real list, so the probe's profile is as large as a run's.
		secrets: seatbeltSecrets(realHome(opts), []string{filepath.Join(dir, ".netrc")}),
	})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	argv := seatbeltArgv(bin, profile, params, []string{shell, "-c", ":"})
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("jail: Seatbelt probe failed (%s: %v: %q): sandbox-exec cannot apply the jail profile here; "+
			"nothing will run jailed until this is fixed", bin, err, bytes.TrimSpace(stderr.Bytes()))
	}
	return nil
}

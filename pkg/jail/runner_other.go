//go:build !linux && !darwin

package jail

import (
	"context"
	"os"
	"runtime"
)

// launch mirrors the unix runner's type so backends compile everywhere.
type launch struct {
	backend  string
	argv     []string
	unjailed bool
	notes    []string
	// pidNamespace and after mirror the unix runner's launch.
	pidNamespace bool
	after        func()
	files        []*os.File
}

// execute fails closed: this OS has no process-tree watchdog.
func execute(_ context.Context, _ *prepared, _ Options, _ func(*runDir) (launch, error)) (Result, error) {
	return NoJail("jail: no runner for " + runtime.GOOS + ": nothing runs here"), nil
}

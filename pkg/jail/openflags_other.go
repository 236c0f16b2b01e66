//go:build !linux && !darwin

package jail

// Nothing runs jailed on these systems (execute refuses); the walks still
// compile, following links, for the helpers that share them.
const (
	oNoFollow  = 0
	oDirectory = 0
	oNonBlock  = 0
)

// cpuPolled: no watchdog runs here.
const cpuPolled = false

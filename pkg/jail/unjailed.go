package jail

import "context"

// Unjailed is the gate-only backend: it runs `/bin/sh -c Script` with the
// rebuilt environment, the private TMPDIR/HOME, the same rlimits,
// watchdogs, output handling and process sweep, but with NO network, write
// or read confinement. Select hands it out only with Options.UnsafeAllowUnjailed, and
// every Result says Unjailed.
type Unjailed struct {
	opts Options
}

// NewUnjailed returns the "none" backend. Prefer Select, which insists on
// the explicit opt-in.
func NewUnjailed(opts Options) *Unjailed { return &Unjailed{opts: opts} }

// Name is "none".
func (u *Unjailed) Name() string { return NameNone }

// Available is always nil: running unconfined needs nothing.
func (u *Unjailed) Available() error { return nil }

// Run executes spec unjailed. Protected paths are validated but cannot be
// enforced.
func (u *Unjailed) Run(ctx context.Context, spec Spec) (Result, error) {
	p, err := prepare(spec, u.opts)
	if res, done, err := settle(p, err, NameNone); done {
		return res, err
	}
	return execute(ctx, p, u.opts, func(*runDir) (launch, error) {
		return launch{
			backend:  NameNone,
			argv:     limitedArgv(p.limits, spec.Script),
			unjailed: true,
			notes:    []string{"UNJAILED (gate-only): no network, write or secret-file confinement"},
		}, nil
	})
}

package kernel

import "github.com/deponent-dev/deponent-action/pkg/jail"

// setOutput passes the harness's wishes for a command's output to the
// jail (Spec.OutputFile: the full output kept at a path; Spec.Live: a
// bounded copy while the step runs), and reports whether the jail will
// honour them. Every backend does: the output is always a file the jail
// writes, then hashes (Result.OutputSHA256 is the file's sha256).
func setOutput(spec *jail.Spec, out Output) bool {
	spec.OutputFile, spec.Live, spec.LiveBytes = out.File, out.Live, out.LiveBytes
	return true
}

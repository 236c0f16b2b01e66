package jail

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"unicode/utf8"
)

// defaultSandboxExec is the Seatbelt launcher shipped with macOS.
const defaultSandboxExec = "/usr/bin/sandbox-exec"

// Seatbelt confines with macOS sandbox-exec and a generated profile.
type Seatbelt struct {
	opts Options
}

// NewSeatbelt returns the Seatbelt backend.
func NewSeatbelt(opts Options) *Seatbelt { return &Seatbelt{opts: opts} }

// Name is "seatbelt".
func (s *Seatbelt) Name() string { return NameSeatbelt }

func (s *Seatbelt) binary() string {
	if s.opts.SandboxExecPath != "" {
		return s.opts.SandboxExecPath
	}
	return defaultSandboxExec
}

var seatbeltProbes sync.Map // binary → *seatbeltProbe

type seatbeltProbe struct {
	once sync.Once
	err  error
}

// Available probes once per binary (see seatbelt_darwin.go).
func (s *Seatbelt) Available() error {
	v, _ := seatbeltProbes.LoadOrStore(s.binary(), &seatbeltProbe{})
	p := v.(*seatbeltProbe)
	p.once.Do(func() { p.err = probeSeatbelt(s.binary(), s.opts) })
	return p.err
}

// Run confines spec with Seatbelt.
func (s *Seatbelt) Run(ctx context.Context, spec Spec) (Result, error) {
	p, err := prepare(spec, s.opts)
	if res, done, err := settle(p, err, NameSeatbelt); done {
		return res, err
	}
	if err := s.Available(); err != nil {
		return refuse(NameSeatbelt, err.Error()), nil
	}
	return execute(ctx, p, s.opts, func(rd *runDir) (launch, error) {
		profile, err := seatbeltProfile(profileParams{
			sandbox:   spec.Sandbox,
			writable:  []string{rd.tmp, rd.home},
			output:    []string{rd.out, rd.started},
			protected: protectedPaths(p.protected),
			home:      p.realHome,
		})
		if err != nil {
			return launch{}, err
		}
		argv := append([]string{s.binary(), "-p", profile}, limitedArgv(p.limits, spec.Script)...)
		return launch{backend: NameSeatbelt, argv: argv}, nil
	})
}

func protectedPaths(prs []protected) []string {
	out := make([]string, len(prs))
	for i, pr := range prs {
		out[i] = pr.path
	}
	return out
}

// profileParams are the (symlink-resolved) paths a profile is built from.
type profileParams struct {
	sandbox   string   // read-write
	writable  []string // more read-write trees: private TMPDIR and HOME
	output    []string // the output file and started marker (written through inherited descriptors)
	protected []string // read-only inside the sandbox, even if absent
	home      string   // real home: its credential locations are unreadable
}

// seatbeltProfile renders the SBPL profile. It follows the seed: allow by
// default, deny all network, deny all writes except the sandbox, the private
// temp trees and the /dev nodes a shell needs. Then, because later rules win,
// the narrower denials: protected paths (write), hard links and clones (a new
// writable name for a protected or secret inode would bypass path rules),
// credential locations (read), other processes' information and arguments
// (their environment), and signals to processes outside this sandbox.
func seatbeltProfile(pp profileParams) (string, error) {
	var b strings.Builder
	q := func(p string) (string, error) { return sbplString(p) }
	b.WriteString("(version 1)\n(allow default)\n(deny network*)\n(deny file-write*)\n(allow file-write*\n")
	trees := append([]string{pp.sandbox}, pp.writable...)
	for _, t := range trees {
		s, err := q(t)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "  (subpath %s)\n", s)
	}
	for _, o := range pp.output {
		s, err := q(o)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "  (literal %s)\n", s)
	}
	for _, d := range []string{"/dev/null", "/dev/zero", "/dev/tty", "/dev/dtracehelper", "/dev/stdout", "/dev/stderr"} {
		fmt.Fprintf(&b, "  (literal %q)\n", d)
	}
	b.WriteString("  (regex #\"^/dev/fd/[0-9]+$\"))\n")
	if len(pp.protected) > 0 {
		b.WriteString("(deny file-write*\n")
		for _, p := range pp.protected {
			s, err := q(p)
			if err != nil {
				return "", err
			}
			fmt.Fprintf(&b, "  (subpath %s)\n", s)
		}
		b.WriteString(")\n")
	}
	b.WriteString("(deny file-link file-clone)\n")
	if pp.home != "" {
		b.WriteString("(deny file-read*\n")
		for _, c := range credentialPaths {
			s, err := q(filepath.Join(pp.home, c))
			if err != nil {
				return "", err
			}
			fmt.Fprintf(&b, "  (subpath %s)\n", s)
		}
		b.WriteString(")\n")
	}
	b.WriteString("(deny process-info*)\n(allow process-info* (target same-sandbox))\n" +
		"(deny sysctl-read (sysctl-name-regex #\"procargs\"))\n" +
		"(deny signal)\n(allow signal (target same-sandbox))\n")
	return b.String(), nil
}

// sbplString quotes s as an SBPL string literal. Backslash and double quote
// are escaped; control characters and invalid UTF-8 are refused rather than
// escaped, since a path carrying them is not one a sandbox should have and
// the profile language's handling of them is not something to bet on.
// Parentheses and semicolons are inert inside a string.
func sbplString(s string) (string, error) {
	if !utf8.ValidString(s) {
		return "", fmt.Errorf("jail: path %q is not valid UTF-8; Seatbelt profiles cannot carry it safely", s)
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return "", fmt.Errorf("jail: path %q contains a control character; refusing to put it in a Seatbelt profile", s)
		}
	}
	s = strings.ReplaceAll(s, `\`, `\\`)
	s = strings.ReplaceAll(s, `"`, `\"`)
	return `"` + s + `"`, nil
}

package jail

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// requireJailEnv makes an unusable jail a test failure instead of a skip
// (CI sets it).
const requireJailEnv = "DEPONENT_REQUIRE_JAIL"

// testPythonEnv names a python3 to run the live probes with instead of the
// system's /usr/bin/python3. The macOS CI job runs the live tests twice, the
// second time with setup-python's interpreter, whose files live under the
// runner's home: the probes then also prove the jail with a toolchain that
// the profile has to expose.
const testPythonEnv = "DEPONENT_TEST_PYTHON"

// skipOrFail skips a live test loudly, or fails it when the jail is required.
func skipOrFail(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv(requireJailEnv) == "1" {
		t.Fatalf("LIVE JAIL REQUIRED (%s=1) but unusable: %s", requireJailEnv, msg)
	}
	t.Skipf("SKIPPING LIVE JAIL TEST — the jail cannot run here (set %s=1 to make this a failure): %s",
		requireJailEnv, msg)
}

// randHex returns a short random marker.
func randHex(t testing.TB) string {
	t.Helper()
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// resolvedTempDir is t.TempDir with symlinks resolved (macOS: /private/var).
func resolvedTempDir(t testing.TB) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// fixture is a sandbox, a fake "real home" with a toolchain and secrets, and
// an outside directory, plus the jailed backend and the unjailed control.
type fixture struct {
	t       *testing.T
	sandbox string
	home    string // passed as Options.RealHome: the test never touches the real one
	tool    string // home/.tool, exposed read-only through PATH home/.tool/bin
	outside string // a directory outside sandbox and home
	path    string
	opts    Options
	jail    Backend
	none    Backend
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{t: t, sandbox: resolvedTempDir(t), home: resolvedTempDir(t), outside: resolvedTempDir(t)}
	f.tool = filepath.Join(f.home, ".tool")
	mustMkdir(t, filepath.Join(f.tool, "bin"))
	writeFile(t, filepath.Join(f.tool, "bin", "deponent-hello"), "#!/bin/sh\necho hello-from-home-toolchain\n", 0o755)
	f.path = filepath.Join(f.tool, "bin") + ":/usr/local/bin:/usr/bin:/bin"
	python := "/usr/bin/python3"
	if p := os.Getenv(testPythonEnv); p != "" {
		// Another interpreter first on PATH: its directory must hold the
		// python3 the probes call.
		if !filepath.IsAbs(p) || filepath.Base(p) != "python3" {
			t.Fatalf("%s=%q must be the absolute path of a python3", testPythonEnv, p)
		}
		python = p
		f.path = filepath.Join(f.tool, "bin") + ":" + filepath.Dir(p) + ":/usr/local/bin:/usr/bin:/bin"
	}
	f.opts = Options{RealHome: f.home, PollInterval: 50 * time.Millisecond}
	f.jail = liveJail(t, f.opts)
	// The probes are python3 programs: without it they would fail for the
	// wrong reason. CI installs it (with pytest) beside bubblewrap.
	if _, err := exec.LookPath(python); err != nil {
		skipOrFail(t, "the live probes need %s: %v", python, err)
	}
	f.none = NewUnjailed(f.opts)
	return f
}

// spec is a default Spec for the fixture's sandbox.
func (f *fixture) spec(script string) Spec {
	return Spec{Sandbox: f.sandbox, Script: script, PATH: f.path,
		Limits: Limits{WallClock: 60 * time.Second}}
}

// run executes spec on b and fails the test on an infrastructure error.
func (f *fixture) run(b Backend, spec Spec) Result {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := b.Run(ctx, spec)
	if err != nil {
		f.t.Fatalf("%s: Run error: %v", b.Name(), err)
	}
	f.t.Logf("%s: exit=%d killed=%q reason=%q in %v; output:\n%s",
		b.Name(), res.ExitCode, res.Killed, res.Reason, res.Duration.Round(time.Millisecond), res.Output)
	return res
}

// plainExec runs script the ordinary way — inheriting the whole environment
// of the test process — as the control for what the jail takes away.
func plainExec(t *testing.T, dir, script string, env []string) string {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Dir = dir
	cmd.Env = env
	out, _ := cmd.CombinedOutput()
	return string(out)
}

func mustMkdir(t testing.TB, p string) {
	t.Helper()
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t testing.TB, p, content string, mode os.FileMode) {
	t.Helper()
	mustMkdir(t, filepath.Dir(p))
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

func shq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

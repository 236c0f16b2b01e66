package action

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/deponent-dev/deponent-action/pkg/agent"
)

// agentCLI is a preset's CLI as found or installed.
type agentCLI struct {
	Path      string // absolute; what PATH resolves the command to
	Installed bool   // installed by this run into a private prefix
	Prefix    string // the private npm prefix it was installed into ("" when found on PATH)
	Note      string // what happened, for the log
}

// installTimeout bounds one npm install.
const installTimeout = 10 * time.Minute

// findCLI finds the preset's CLI on the action's PATH; when it is not
// there, or agent-version asks for another version than the one on PATH,
// it installs the version with npm into a private prefix under the runner's
// temporary directory (reused when already there). It fails closed, naming
// the fix, when npm is not available. version reports a CLI's version
// (run in the agent jail by the caller).
func findCLI(ctx context.Context, a AgentConfig, getenv Getenv, tempParent string, version func(string) (string, error)) (agentCLI, error) {
	p := a.Preset
	if path, err := lookPath(p.Command(), getenv("PATH")); err == nil {
		if !a.VersionExplicit {
			return agentCLI{Path: path, Note: fmt.Sprintf("found %s on PATH", path)}, nil
		}
		if v, verr := version(path); verr == nil && v == a.Version {
			return agentCLI{Path: path, Note: fmt.Sprintf("found %s %s on PATH", path, v)}, nil
		}
	}
	prefix := filepath.Join(tempParent, "deponent-agents", strings.ReplaceAll(p.Package(), "/", "+")+"@"+a.Version)
	bin := filepath.Join(prefix, "bin", p.Command())
	if v, err := version(bin); err == nil && v == a.Version {
		return agentCLI{Path: bin, Installed: true, Prefix: prefix, Note: fmt.Sprintf("reusing %s@%s in %s", p.Package(), a.Version, prefix)}, nil
	}
	npm, err := lookPath("npm", getenv("PATH"))
	if err != nil {
		return agentCLI{}, fmt.Errorf("agent %s: %s is not on PATH and npm is not available to install %s@%s; "+
			"add actions/setup-node before this step, or install the CLI yourself (e.g. npm install -g %s@%s)",
			p, p.Command(), p.Package(), a.Version, p.Package(), a.Version)
	}
	if err := os.RemoveAll(prefix); err != nil {
		return agentCLI{}, fmt.Errorf("agent %s: cannot clear %s: %v", p, prefix, err)
	}
	if err := os.MkdirAll(prefix, 0o755); err != nil {
		return agentCLI{}, fmt.Errorf("agent %s: cannot create %s: %v", p, prefix, err)
	}
	ictx, cancel := context.WithTimeout(ctx, installTimeout)
	defer cancel()
	spec := p.Package() + "@" + a.Version
	cmd := exec.CommandContext(ictx, npm, "install", "--global", "--prefix", prefix, "--no-audit", "--no-fund",
		"--allow-scripts="+p.Package(), spec)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return agentCLI{}, fmt.Errorf("agent %s: npm install %s into %s failed (%v): %s; install the CLI before this step or fix the registry access",
			p, spec, prefix, err, lastLine(out.String()))
	}
	v, err := version(bin)
	if err != nil {
		return agentCLI{}, fmt.Errorf("agent %s: %s was installed but %s --version failed: %v", p, spec, bin, err)
	}
	if v != a.Version {
		return agentCLI{}, fmt.Errorf("agent %s: installed %s but %s --version says %s", p, spec, bin, v)
	}
	return agentCLI{Path: bin, Installed: true, Prefix: prefix, Note: fmt.Sprintf("installed %s into %s", spec, prefix)}, nil
}

// lookPath finds name in the directories of path (absolute ones only: a
// relative entry would search the working directory, the workspace).
func lookPath(name, path string) (string, error) {
	for _, dir := range filepath.SplitList(path) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: not found on PATH", name)
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// exposedFor is what the agent jail must expose read-only for the program
// at path to run: its directory (a PATH entry, often a symlink) and, for a
// program resolved into an npm tree, the node_modules directory it lives in
// (Codex's native binary is a nested optional dependency), else the
// resolved program's directory. System directories are exposed anyway and
// left out.
func exposedFor(path string) []string {
	out := []string{filepath.Dir(path)}
	if real, err := filepath.EvalSymlinks(path); err == nil {
		if i := strings.Index(real, "/node_modules/"); i >= 0 {
			out = append(out, real[:i+len("/node_modules")])
		} else {
			out = append(out, filepath.Dir(real))
		}
	}
	return out
}

// nodeDir is the directory of node on PATH (resolved), "" when there is
// none: Codex's launcher is a node script.
func nodeDir(path string) string {
	p, err := lookPath("node", path)
	if err != nil {
		return ""
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	return filepath.Dir(p)
}

// systemExposed reports whether the agent jail exposes p anyway (the OS
// directories).
func systemExposed(p string) bool {
	for _, d := range []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt"} {
		if p == d || strings.HasPrefix(p, d+"/") {
			return true
		}
	}
	return false
}

var errNoVersion = errors.New("no version reported")

// parseCLIVersion reads a preset's --version output.
func parseCLIVersion(p agent.Preset, out []byte) (string, error) {
	v, err := agent.ParseVersion(p, string(out))
	if err != nil {
		return "", err
	}
	if v == "" {
		return "", errNoVersion
	}
	return v, nil
}

// execOutput runs a program and returns its standard output.
func execOutput(name string, args ...string) ([]byte, error) {
	return exec.Command(name, args...).Output()
}

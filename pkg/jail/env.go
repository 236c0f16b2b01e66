package jail

import (
	"sort"
	"strings"
)

// runTokenVar carries a per-run random token. It is no secret: it lets the
// final sweep find processes of this step that escaped the process tree
// (double fork + setsid), where no pid namespace holds them (macOS, "none").
const runTokenVar = "DEPONENT_JAIL_RUN"

// defaultEnv are set in every jailed environment unless Spec.Env (policy)
// sets them otherwise.
//
// PYTHONDONTWRITEBYTECODE=1: Python validates a cached .pyc by the source's
// mtime in whole seconds and its size, so a same-size edit within the same
// second as an earlier run (an agent's one-character fix) kept running the
// stale bytecode; and __pycache__ directories the agent never wrote would
// fill the workspace. Steps import from source instead (slower start for
// large imports; a policy that wants caching sets it to "").
var defaultEnv = map[string]string{"PYTHONDONTWRITEBYTECODE": "1"}

// buildEnv rebuilds the environment from an allowlist instead of filtering
// the caller's: whatever the runner has (GITHUB_TOKEN, ACTIONS_*, cloud
// credentials, ...) cannot reach the jailed process by omission. host is the
// caller's environment in os.Environ form; only LANG, LC_* and TERM are taken
// from it.
func buildEnv(host []string, path, home, tmpdir, token string, extra map[string]string) []string {
	vars := map[string]string{}
	for _, kv := range host {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		if k == "LANG" || k == "TERM" || strings.HasPrefix(k, "LC_") {
			vars[k] = v
		}
	}
	for k, v := range defaultEnv {
		vars[k] = v
	}
	for k, v := range extra {
		vars[k] = v
	}
	// Set last so that nothing above can override them.
	vars["PATH"] = path
	vars["HOME"] = home
	vars["TMPDIR"] = tmpdir
	if token != "" {
		vars[runTokenVar] = token
	}
	env := make([]string, 0, len(vars))
	for k, v := range vars {
		env = append(env, k+"="+v)
	}
	sort.Strings(env)
	return env
}

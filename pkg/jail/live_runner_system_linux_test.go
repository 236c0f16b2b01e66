package jail

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// systemRunner installs a fake self-hosted runner under /opt (where many
// are installed: /opt/actions-runner) with its credentials, its
// file-command files, another job's checkout, and this job's checkout as
// the sandbox, and points RUNNER_TEMP at it. /opt is one of the system
// trees the jails expose read-only as a whole. Root only (an unprivileged
// account cannot write /opt): the test says so and skips.
func systemRunner(t *testing.T) (sandbox string, secrets map[string]string) {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skipf("uid %d cannot install a runner under /opt; the root run covers this", os.Getuid())
	}
	runner, err := os.MkdirTemp("/opt", "deponent-test-runner-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(runner) })
	require.NoError(t, os.Chmod(runner, 0o755))
	work := filepath.Join(runner, "_work")
	temp := filepath.Join(work, "_temp")
	secrets = map[string]string{
		filepath.Join(runner, ".runner"):                               "RUNNER-REG-" + randHex(t),
		filepath.Join(runner, ".credentials_rsaparams"):                "RUNNER-RSA-" + randHex(t),
		filepath.Join(temp, "_runner_file_commands", "set_env_abc"):    "FILE-COMMAND-" + randHex(t),
		filepath.Join(temp, "deponent", "ledger.jsonl"):                "LEDGER-" + randHex(t),
		filepath.Join(work, "other-repo", "other-repo", ".git", "cfg"): "OTHER-JOB-" + randHex(t),
	}
	for p, v := range secrets {
		writeFile(t, p, v, 0o600)
	}
	sandbox = filepath.Join(work, "repo", "repo")
	mustMkdir(t, sandbox)
	writeFile(t, filepath.Join(sandbox, "README.md"), "this job's checkout\n", 0o644)
	t.Setenv("RUNNER_TEMP", temp)
	t.Setenv("RUNNER_WORKSPACE", filepath.Join(work, "repo"))
	t.Setenv("GITHUB_WORKSPACE", sandbox)
	t.Setenv("GITHUB_ENV", filepath.Join(temp, "_runner_file_commands", "set_env_abc"))
	return sandbox, secrets
}

func catAll(secrets map[string]string) string {
	var b strings.Builder
	for p := range secrets {
		b.WriteString("cat " + shq(p) + " 2>/dev/null; echo; ")
	}
	return b.String()
}

// TestLiveRunnerUnderSystemTreeHidden: a runner installed under /opt
// sits inside a tree the jail exposes whole, so its credentials, file
// commands, the ledger in RUNNER_TEMP and other jobs' checkouts were
// readable by a step. The control reads them all unjailed; jailed, none is
// readable while the sandbox inside the same tree still works (read and
// written) and /opt's other content stays visible.
func TestLiveRunnerUnderSystemTreeHidden(t *testing.T) {
	f := newFixture(t)
	sandbox, secrets := systemRunner(t)
	f.sandbox = sandbox
	other := filepath.Join("/opt", "deponent-test-other-"+randHex(t))
	writeFile(t, filepath.Join(other, "data"), "OPT-VISIBLE", 0o644)
	t.Cleanup(func() { os.RemoveAll(other) })
	tool := filepath.Join(filepath.Dir(filepath.Dir(sandbox)), "_tool", "mytool", "1.0", "x64")
	writeFile(t, filepath.Join(tool, "bin", "mytool"), "#!/bin/sh\necho \"mytool ok $(cat "+shq(filepath.Join(tool, "share", "data"))+")\"\n", 0o755)
	writeFile(t, filepath.Join(tool, "share", "data"), "with-its-data", 0o644)
	spec := f.spec(catAll(secrets) + "cat README.md; echo written > out.txt; cat " + shq(filepath.Join(other, "data")) + "; mytool")
	spec.PATH = filepath.Join(tool, "bin") + ":" + spec.PATH

	control := f.run(f.none, spec)
	for _, v := range secrets {
		require.Contains(t, string(control.Output), v, "control: unjailed code reads the runner's files")
	}
	res := f.run(f.jail, spec)
	out := string(res.Output)
	require.Equal(t, 0, res.ExitCode, out)
	for p, v := range secrets {
		assert.NotContains(t, out, v, "%s is readable in the jail", p)
	}
	assert.Contains(t, out, "this job's checkout", "the sandbox inside the runner's tree is readable")
	assert.Equal(t, "written\n", readText(t, filepath.Join(sandbox, "out.txt")), "and writable")
	assert.Contains(t, out, "OPT-VISIBLE", "the rest of /opt stays visible")
	assert.Contains(t, out, "mytool ok with-its-data", "a tool-cache program in the runner's work directory runs")
}

// TestLiveAgentJailRunnerUnderSystemTreeHidden: the same runner layout for
// the agent jail, whose contract keeps RUNNER_TEMP (the ledger, the
// receipts) and the runner's credentials out of the agent's reach. The
// unjailed opt-out reading them is the control; the workspace (the
// sandbox inside the runner's tree) stays readable.
func TestLiveAgentJailRunnerUnderSystemTreeHidden(t *testing.T) {
	a := newAgentFixture(t)
	sandbox, secrets := systemRunner(t)
	a.ws = sandbox
	probe := catAll(secrets) + "cat README.md"
	_, out := a.sh(t, a.none, probe, nil)
	for _, v := range secrets {
		require.Contains(t, out, v, "control: the unjailed agent reads the runner's files")
	}
	res, out := a.sh(t, a.jail, probe, nil)
	require.Equal(t, 0, res.ExitCode, out)
	for p, v := range secrets {
		assert.NotContains(t, out, v, "%s is readable by the jailed agent", p)
	}
	assert.Contains(t, out, "this job's checkout", "the workspace stays readable")
}

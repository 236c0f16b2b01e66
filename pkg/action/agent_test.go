package action

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/deponent-dev/deponent-action/pkg/evidence"
	"github.com/deponent-dev/deponent-action/pkg/gate"
	"github.com/deponent-dev/deponent-action/pkg/jail"
)

func gateFor(ws string) (*gate.Gate, error) { return gate.NewGate(ws, nil) }

// noAgentJail is an agent jail that is not available here.
type noAgentJail struct{}

func (noAgentJail) Name() string { return jail.NameBwrap }
func (noAgentJail) Available() error {
	return errors.New("bubblewrap cannot build the agent jail here (test stand-in)")
}
func (noAgentJail) Run(context.Context, jail.AgentSpec) (jail.AgentResult, error) {
	panic("an unavailable agent jail must never run the agent")
}

// inProcess runs the action in this process with a stand-in agent; the
// test binary is the relay (TestMain).
func inProcess(t *testing.T, aj jail.AgentJail, extra map[string]string) (*Result, string, string) {
	t.Helper()
	requireJail(t)
	root := resolvedTemp(t)
	ws := filepath.Join(root, "ws")
	require.NoError(t, os.MkdirAll(filepath.Join(ws, ".agent"), 0o755))
	src, err := os.ReadFile(filepath.Join("testdata", "agents", "mcpclient.py"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(ws, ".agent", "mcpclient.py"), src, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "README.md"), []byte("# x\n"), 0o644))
	env := map[string]string{"INPUT_SANDBOX": ws, "INPUT_RECEIPTS_DIR": filepath.Join(root, "receipts"),
		"INPUT_AGENT_COMMAND": "python3 .agent/mcpclient.py selfwrite", "INPUT_TASK": "write", "INPUT_CANARIES": "false",
		"PATH": os.Getenv("PATH"), "HOME": os.Getenv("HOME")}
	for k, v := range extra {
		env[k] = v
	}
	getenv := func(k string) string { return env[k] }
	cfg, err := ParseArgs(nil, getenv, nil)
	require.NoError(t, err)
	var out bytes.Buffer
	res, err := Run(context.Background(), cfg, Options{Getenv: getenv, Stdout: &out, AgentJail: aj})
	require.NoError(t, err, out.String())
	return res, ws, out.String()
}

// TestAgentRefusedWithoutAgentJail: no agent jail → the agent is not
// started, the refusal is recorded, the run fails closed; with
// allow-unjailed-agent the same agent runs, unconfined, and the receipt
// and the summary say so (the positive control: unjailed, its direct write
// to the workspace succeeds).
func TestAgentRefusedWithoutAgentJail(t *testing.T) {
	res, ws, log := inProcess(t, noAgentJail{}, nil)
	assert.Equal(t, evidence.OutcomeFail, res.Outcome)
	assert.NoFileExists(t, filepath.Join(ws, "hacked.txt"), "the agent never ran")
	v := verifyReceipt(t, res.ReceiptPath)
	session := v.R.Entries[len(v.R.Entries)-1]
	assert.Equal(t, evidence.ToolAgentSession, entryField(session, evidence.FieldTool))
	assert.Equal(t, evidence.KilledNoJail, entryField(session, evidence.FieldKilled))
	assert.Contains(t, entryField(session, evidence.FieldError), "allow-unjailed-agent")
	assert.Contains(t, strings.Join(v.A.Reasons, "\n"), "for want of a jail")
	assert.Contains(t, log, "the agent was not started (fail closed)")
	assert.Empty(t, evidence.CheckAgentRecord(v.R.Body, v.R.Entries, v.Gov))

	res, ws, _ = inProcess(t, noAgentJail{}, map[string]string{"INPUT_ALLOW_UNJAILED_AGENT": "true"})
	assert.FileExists(t, filepath.Join(ws, "hacked.txt"), "control: unjailed, the agent writes the workspace itself")
	v = verifyReceipt(t, res.ReceiptPath)
	ag, _, err := evidence.ParseAgentRecord(v.R.Body)
	require.NoError(t, err)
	assert.True(t, ag.Unjailed)
	assert.Equal(t, jail.NameNone, ag.Jail)
	session = v.R.Entries[len(v.R.Entries)-1]
	assert.Equal(t, jail.NameNone, entryField(session, evidence.FieldAgentJail))
	assert.Contains(t, entryField(session, evidence.FieldReason), "WITHOUT an agent jail")
	assert.Contains(t, RenderSummary(res.Summary), "ran WITHOUT the agent jail")
}

// TestFindCLIInstalls: a CLI not on PATH is installed with npm into a
// private prefix (a stand-in npm records how it was called); without npm
// the run refuses with the fix.
func TestFindCLIInstalls(t *testing.T) {
	root := resolvedTemp(t)
	bin := filepath.Join(root, "bin")
	require.NoError(t, os.Mkdir(bin, 0o755))
	calls := filepath.Join(root, "npm-calls")
	// The stand-in npm "installs" a claude that prints the version asked.
	npm := `#!/bin/sh
echo "$@" >> ` + calls + `
prefix=""; spec=""
while [ $# -gt 0 ]; do case "$1" in --prefix) prefix=$2; shift;; @*) spec=$1;; esac; shift; done
v=${spec##*@}
mkdir -p "$prefix/bin"
printf '#!/bin/sh\necho "%s (Claude Code)"\n' "$v" > "$prefix/bin/claude"
chmod +x "$prefix/bin/claude"
`
	require.NoError(t, os.WriteFile(filepath.Join(bin, "npm"), []byte(npm), 0o755))
	a, err := parseAgentInputs(map[string]string{InAgent: "claude", InAgentVersion: "2.1.332"}, map[string]bool{InAgentVersion: true}, func(string) string { return "" })
	require.NoError(t, err)
	getenv := func(k string) string {
		if k == "PATH" {
			return bin // no other npm than the stand-in
		}
		return ""
	}
	version := func(p string) (string, error) {
		out, err := execOutput(p, "--version")
		if err != nil {
			return "", err
		}
		return parseCLIVersion(a.Preset, out)
	}
	cli, err := findCLI(context.Background(), a, getenv, root, version)
	require.NoError(t, err)
	assert.True(t, cli.Installed)
	assert.Equal(t, filepath.Join(root, "deponent-agents", "@anthropic-ai+claude-code@2.1.332", "bin", "claude"), cli.Path)
	assert.Contains(t, readText(t, calls), "install --global --prefix "+cli.Prefix+" --no-audit --no-fund --allow-scripts=@anthropic-ai/claude-code @anthropic-ai/claude-code@2.1.332")
	// Installed once, reused after.
	again, err := findCLI(context.Background(), a, getenv, root, version)
	require.NoError(t, err)
	assert.Contains(t, again.Note, "reusing")
	assert.Equal(t, 1, strings.Count(readText(t, calls), "install"))

	// No npm: refused, naming the fix.
	require.NoError(t, os.Remove(filepath.Join(bin, "npm")))
	b := a
	b.Version = "2.1.333"
	_, err = findCLI(context.Background(), b, getenv, root, version)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "npm is not available")
	assert.Contains(t, err.Error(), "setup-node")
}

// TestHostPATHLeavesOutTheWorkspace: a PATH entry in the repository cannot
// supply the agent's CLI or node.
func TestHostPATHLeavesOutTheWorkspace(t *testing.T) {
	root := resolvedTemp(t)
	ws := filepath.Join(root, "ws")
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "node_modules", ".bin"), 0o755))
	require.NoError(t, os.Symlink(filepath.Join(ws, "node_modules", ".bin"), filepath.Join(root, "link")))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "node_modules", ".bin", "claude"), []byte("#!/bin/sh\n"), 0o755))
	g, err := gateFor(ws)
	require.NoError(t, err)
	path := filepath.Join(ws, "node_modules", ".bin") + ":" + filepath.Join(root, "link") + ":relative:/usr/bin:/bin"
	r := &runner{gate: g, opt: Options{Getenv: func(k string) string { return map[string]string{"PATH": path}[k] }}}
	assert.Equal(t, "/usr/bin:/bin", r.hostPATH())
	_, err = lookPath("claude", r.hostPATH())
	assert.Error(t, err, "the repository's claude is not found")
	_, err = lookPath("claude", path)
	assert.NoError(t, err, "control: on the raw PATH it would be")
}

// TestAgentSummaryEscapes: what the agent reports (model, detail, command)
// cannot break the job summary's table or inject markup.
func TestAgentSummaryEscapes(t *testing.T) {
	out := renderAgentSection(&AgentSummary{Kind: "command", Command: "evil | cmd\n<script>", Model: "m|x\n## heading",
		Detail: "stderr: <img src=x onerror=alert(1)> | col", Jail: "bwrap", ExitCode: 3, ToolCalls: 2, MaxToolCalls: 5,
		Transcript: "agent-s.transcript", TranscriptSHA256: strings.Repeat("a", 64)})
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "| ") {
			assert.Equal(t, 3, strings.Count(l, "|")-strings.Count(l, `\|`), "one row, two cells: %q", l)
		}
		assert.False(t, strings.HasPrefix(l, "## heading"), "no injected heading")
	}
	assert.NotContains(t, out, "<script>")
	assert.NotContains(t, out, "<img")
	assert.Contains(t, out, "exit 3")
	assert.Empty(t, renderAgentSection(nil))
	unj := renderAgentSection(&AgentSummary{Kind: "claude", Jail: "none", Unjailed: true, UnjailedReason: "no bwrap"})
	assert.Contains(t, unj, "WITHOUT the agent jail")
	assert.Contains(t, unj, "no bwrap")
}

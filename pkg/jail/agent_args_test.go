package jail

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAgentBwrapArgs pins the agent jail's command line: the network
// shared, every other namespace new, the workspace read-only, only HOME and
// TMPDIR writable, uid 65534 for root, and the agent after the wrapper.
func TestAgentBwrapArgs(t *testing.T) {
	rd := &runDir{root: "/r", emptyDir: "/r/empty.d", emptyFile: "/r/empty"}
	spec := AgentSpec{Workspace: "/w", Home: "/a/home", TmpDir: "/a/tmp", ReadOnly: []string{"/cli/prefix", "/a/sock"},
		Argv: []string{"/cli/prefix/bin/claude", "-p", "task"}}
	args := agentBwrapArgs(bwrapFeatures{disableUserns: true, size: true}, 0, spec, rd)
	joined := strings.Join(args, " ")
	for _, want := range []string{
		"--unshare-all --unshare-user --die-with-parent --new-session --cap-drop ALL --disable-userns --uid 65534 --gid 65534 --share-net",
		"--ro-bind /a/sock /a/sock --ro-bind /cli/prefix /cli/prefix",
		"--bind /a/home /a/home --bind /a/tmp /a/tmp --ro-bind /w /w --remount-ro / --chdir /w",
		"deponent-agent /cli/prefix/bin/claude -p task",
	} {
		assert.Contains(t, joined, want)
	}
	assert.NotRegexp(t, regexp.MustCompile(`--bind /w `), joined, "the workspace is never writable")
	assert.NotContains(t, joined, "--unshare-net")
	// A tmpfs over /tmp comes before any bind below it.
	assert.Less(t, strings.Index(joined, "--tmpfs /tmp"), strings.Index(joined, "--bind /a/home"))

	args = agentBwrapArgs(bwrapFeatures{}, 1000, spec, rd)
	assert.NotContains(t, strings.Join(args, " "), "--uid", "an unprivileged runner keeps its uid")
}

// TestAgentSeatbeltProfile pins the agent profile's rules: network allowed,
// writes only to HOME and TMPDIR and never the workspace, the hidden areas
// hidden, and every path a parameter.
func TestAgentSeatbeltProfile(t *testing.T) {
	in := agentSeatbeltInputs{workspace: "/Users/runner/work/repo", writable: []string{"/Users/runner/work/_temp/a/home", "/Users/runner/work/_temp/a/tmp"},
		readOnly: []string{"/opt/node"}, output: []string{"/Users/runner/work/_temp/m/agent-started"}, home: "/Users/runner",
		secrets: []string{"/Users/runner/.ssh"}}
	profile, params, err := agentSeatbeltProfile(in)
	require.NoError(t, err)
	for _, want := range []string{"(deny default)", "(allow network*)", "(allow system-socket)", `(global-name "com.apple.dnssd.service")`} {
		assert.Contains(t, profile, want)
	}
	assert.NotContains(t, profile, "(deny network*)")
	assert.NotContains(t, profile, "/Users/runner", "no path is profile text")
	values := map[string]string{}
	for _, p := range params {
		values[p.key] = p.value
		assert.Contains(t, profile, `(param "`+p.key+`")`, "every parameter is used")
	}
	var writeKeys []string
	for k, v := range values {
		if strings.HasPrefix(k, "WRITE_") {
			writeKeys = append(writeKeys, v)
		}
	}
	assert.ElementsMatch(t, in.writable, writeKeys, "only HOME and TMPDIR are writable trees")
	assert.Equal(t, in.workspace, values["WORKSPACE_0"])
	// The workspace denial comes after every allow of writes.
	assert.Less(t, strings.LastIndex(profile, "(allow file-write*"), strings.Index(profile, `(deny file-write*`))
	_, _, err = agentSeatbeltProfile(agentSeatbeltInputs{workspace: "/w\n", writable: []string{"/h"}})
	assert.Error(t, err)
}

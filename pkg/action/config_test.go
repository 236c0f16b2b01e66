package action

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func envOf(m map[string]string) Getenv { return func(k string) string { return m[k] } }

func parse(t *testing.T, env map[string]string, args ...string) (*Config, error) {
	t.Helper()
	return ParseArgs(args, envOf(env), io.Discard)
}

func TestParseArgsDefaults(t *testing.T) {
	ws := resolvedTemp(t)
	c, err := parse(t, map[string]string{"INPUT_STEPS": "ls", "GITHUB_WORKSPACE": ws,
		"GITHUB_RUN_ID": "77", "GITHUB_RUN_ATTEMPT": "3", "GITHUB_JOB": "build / agent (ubuntu)"})
	require.NoError(t, err)
	assert.Equal(t, "ls", c.Steps)
	assert.Equal(t, ws, c.Sandbox, "the sandbox defaults to GITHUB_WORKSPACE")
	assert.Equal(t, "auto", c.Jail)
	assert.False(t, c.AllowUnjailed)
	assert.False(t, c.DryRun)
	assert.True(t, c.Canaries)
	assert.False(t, c.OnBlockContinue)
	assert.Equal(t, "deponent", c.Producer)
	assert.True(t, c.UploadArtifact)
	assert.False(t, c.Attest, "attest is opt-in")
	assert.Equal(t, "77-3-build---agent--ubuntu-", c.SessionID, "sanitized RUN_ID-RUN_ATTEMPT-JOB")
	assert.True(t, c.SessionDefaulted)
	assert.Equal(t, "", c.ReceiptsDir, "computed at run time")

	// Locally: the current directory and a random session.
	c, err = parse(t, map[string]string{}, "--steps", "ls")
	require.NoError(t, err)
	wd, _ := os.Getwd()
	wd, _ = filepath.EvalSymlinks(wd)
	assert.Equal(t, wd, c.Sandbox)
	assert.Regexp(t, `^local-[0-9a-f]{12}$`, c.SessionID)
}

func TestParseArgsEnvSpellingsAndFlagsWin(t *testing.T) {
	ws := resolvedTemp(t)
	env := map[string]string{
		"INPUT_STEPS": " ls \n", "INPUT_SANDBOX": ws,
		"INPUT_ALLOW-UNJAILED": "true", // as the runner exports inputs of JS actions
		"INPUT_DRY_RUN":        "True", // as action.yml's env sets them
		"INPUT_ON-BLOCK":       "continue",
		"INPUT_JAIL":           "none",
	}
	c, err := parse(t, env)
	require.NoError(t, err)
	assert.Equal(t, "ls", c.Steps, "trimmed")
	assert.True(t, c.AllowUnjailed)
	assert.True(t, c.DryRun)
	assert.True(t, c.OnBlockContinue)
	assert.Equal(t, "none", c.Jail)
	assert.True(t, c.Explicit[InJail])
	assert.False(t, c.Explicit[InPolicy])

	c, err = parse(t, env, "--dry-run=false", "--on-block", "fail", "--jail=bwrap", "--allow-unjailed=false", "--canaries=FALSE")
	require.NoError(t, err)
	assert.False(t, c.DryRun)
	assert.False(t, c.OnBlockContinue)
	assert.Equal(t, "bwrap", c.Jail)
	assert.False(t, c.AllowUnjailed)
	assert.False(t, c.Canaries)

	// A bare boolean flag means true.
	c, err = parse(t, map[string]string{"INPUT_SANDBOX": ws}, "--steps", "ls", "--dry-run")
	require.NoError(t, err)
	assert.True(t, c.DryRun)
}

func TestParseArgsErrors(t *testing.T) {
	ws := resolvedTemp(t)
	base := func(kv ...string) map[string]string {
		m := map[string]string{"INPUT_SANDBOX": ws, "INPUT_STEPS": "ls"}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	cases := []struct {
		name  string
		env   map[string]string
		args  []string
		input string
		want  string
	}{
		{"unknown jail", base("INPUT_JAIL", "firejail"), nil, InJail, "valid values are auto, bwrap, seatbelt, none"},
		{"none without opt-in", base("INPUT_JAIL", "none"), nil, InJail, "allow-unjailed: true"},
		{"bad boolean", base("INPUT_DRY-RUN", "yes-please"), nil, InDryRun, `is "yes-please": use true or false`},
		{"bad boolean flag", base(), []string{"--canaries=maybe"}, InCanaries, "use true or false"},
		{"bad boolean 1", base("INPUT_ALLOW-UNJAILED", "1"), nil, InAllowUnjailed, "use true or false"},
		{"bad upload-artifact", base("INPUT_UPLOAD-ARTIFACT", "on"), nil, InUploadArtifact, "use true or false"},
		{"bad attest", base("INPUT_ATTEST", "yes"), nil, InAttest, "use true or false"},
		{"unknown on-block", base("INPUT_ON-BLOCK", "warn"), nil, InOnBlock, "valid values are fail"},
		{"both", base("INPUT_PLAN", examplePlan()), nil, "steps/plan", "both are set"},
		{"neither", map[string]string{"INPUT_SANDBOX": ws}, nil, "steps/plan", "neither is set"},
		{"demo with steps", base(), []string{"--demo"}, "steps/plan", "--demo runs its own embedded plan"},
		{"missing plan", map[string]string{"INPUT_SANDBOX": ws, "INPUT_PLAN": "/no/plan.jsonl"}, nil, InPlan, "no such file"},
		{"plan is a directory", map[string]string{"INPUT_SANDBOX": ws, "INPUT_PLAN": ws}, nil, InPlan, "is a directory"},
		{"missing sandbox", base("INPUT_SANDBOX", filepath.Join(ws, "nope")), nil, InSandbox, "does not exist"},
		{"sandbox is a file", base("INPUT_SANDBOX", examplePlan()), nil, InSandbox, "is not a directory"},
		{"sandbox is root", base("INPUT_SANDBOX", "/"), nil, InSandbox, "filesystem root"},
		{"missing policy", base("INPUT_POLICY", "/no/policy.json"), nil, InPolicy, "no such file"},
		{"bad producer", base("INPUT_PRODUCER", "a/b"), nil, InProducer, "[A-Za-z0-9._-]"},
		{"bad session", base("INPUT_SESSION-ID", "-x"), nil, InSessionID, "starting with a letter or digit"},
		{"bad artifact name", base("INPUT_ARTIFACT-NAME", "a:b"), nil, InArtifactName, "may not contain"},
		{"receipts dir with a newline", base("INPUT_RECEIPTS-DIR", "/tmp/a\nb"), nil, InReceiptsDir, "control character"},
		{"stray argument", base(), []string{"extra"}, "flags", `unexpected argument "extra"`},
		{"unknown flag", base(), []string{"--sandbxo", "x"}, "flags", "not defined"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := parse(t, c.env, c.args...)
			var ie *InputError
			require.True(t, errors.As(err, &ie), "got %v", err)
			assert.Equal(t, c.input, ie.Input)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

func TestParseArgsHelpVersion(t *testing.T) {
	_, err := parse(t, nil, "--help")
	assert.ErrorIs(t, err, ErrHelp)
	_, err = parse(t, nil, "-h")
	assert.ErrorIs(t, err, ErrHelp)
	_, err = parse(t, nil, "--version")
	assert.ErrorIs(t, err, ErrVersion)
}

func TestSanitizeName(t *testing.T) {
	assert.Equal(t, "a-b_c.d", sanitizeName("a b_c.d"))
	assert.Equal(t, "x", sanitizeName("..-_x"))
	assert.Equal(t, "", sanitizeName("///"))
	assert.Len(t, sanitizeName(string(make([]byte, 300))+"a"), 1)
	long := sanitizeName("a" + string(make([]byte, 300)))
	assert.Len(t, long, 128)
	assert.True(t, safeName.MatchString(long))
}

// TestCheckReceiptsDir: inside the sandbox (directly, through a symlink, or
// through a symlinked parent of a directory that does not exist yet) is
// refused; so is a directory around the sandbox; beside it is fine.
func TestCheckReceiptsDir(t *testing.T) {
	root := resolvedTemp(t)
	sb := filepath.Join(root, "sandbox")
	require.NoError(t, os.MkdirAll(filepath.Join(sb, "sub"), 0o755))
	require.NoError(t, os.Symlink(sb, filepath.Join(root, "link")))
	require.NoError(t, os.Symlink(filepath.Join(sb, "sub"), filepath.Join(root, "sublink")))
	require.NoError(t, os.Mkdir(filepath.Join(root, "sandbox2"), 0o755))
	refused := map[string]string{
		sb:                                              "inside the sandbox",
		filepath.Join(sb, "receipts"):                   "inside the sandbox",
		filepath.Join(sb, "a", "b", "..", "c"):          "inside the sandbox",
		filepath.Join(root, "link", "r"):                "inside the sandbox",
		filepath.Join(root, "sublink", "x", "y"):        "inside the sandbox",
		filepath.Join(root, "sandbox", "..", "sandbox"): "inside the sandbox",
		root: "contains the sandbox",
		"/":  "contains the sandbox",
	}
	for dir, want := range refused {
		err := checkReceiptsDir(dir, sb)
		require.Error(t, err, dir)
		assert.Contains(t, err.Error(), want, dir)
		assert.Contains(t, err.Error(), `input "receipts-dir"`)
	}
	for _, ok := range []string{filepath.Join(root, "receipts"), filepath.Join(root, "sandbox2"), filepath.Join(root, "sandbox-receipts", "x")} {
		assert.NoError(t, checkReceiptsDir(ok, sb), ok)
	}
}

func TestResolveExisting(t *testing.T) {
	root := resolvedTemp(t)
	require.NoError(t, os.Mkdir(filepath.Join(root, "real"), 0o755))
	require.NoError(t, os.Symlink(filepath.Join(root, "real"), filepath.Join(root, "l")))
	got, err := resolveExisting(filepath.Join(root, "l", "x", "y"))
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(root, "real", "x", "y"), got)
}

// TestDefaultNames: the job key, the session id and the artifact name
// derived from what a composite action sees of the job.
func TestDefaultNames(t *testing.T) {
	env := map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_RUN_ID": "77", "GITHUB_RUN_ATTEMPT": "3", "GITHUB_JOB": "agent"}
	get := envOf(env)
	assert.Equal(t, "", jobKey(get), "no matrix, no check run id")
	assert.Equal(t, "77-3-agent", defaultSessionID(get, false))
	assert.Equal(t, "deponent-receipts-agent-3", defaultArtifactName(get, "77-3-agent", true, 1))
	assert.Equal(t, "deponent-receipts-agent-2-3", defaultArtifactName(get, "77-3-agent-2", true, 2))
	assert.Equal(t, "deponent-receipts-my-session-3", defaultArtifactName(get, "my-session", false, 1), "a given session id names the artifact")

	env[EnvMatrix] = "null"
	assert.Equal(t, "", jobKey(get), "toJSON(matrix) outside a matrix")
	env[EnvMatrix] = `{"os": "linux"}`
	k1 := jobKey(get)
	assert.Regexp(t, `^k[0-9a-f]{8}$`, k1)
	env[EnvMatrix] = `{"os": "macos"}`
	assert.NotEqual(t, k1, jobKey(get), "another leg")
	env[EnvCheckRunID] = "123"
	k3 := jobKey(get)
	env[EnvCheckRunID] = "124"
	assert.NotEqual(t, k3, jobKey(get), "another job execution")
	assert.Equal(t, "77-3-agent-"+jobKey(get), defaultSessionID(get, false))
	assert.Equal(t, "deponent-receipts-my-session-"+jobKey(get)+"-3", defaultArtifactName(get, "my-session", false, 1))

	// A long job id is cut; the run, the attempt and the key are kept, and
	// there is room for a -N suffix.
	env["GITHUB_JOB"] = strings.Repeat("j", 300)
	s := defaultSessionID(get, false)
	assert.LessOrEqual(t, len(s), 110)
	assert.True(t, strings.HasPrefix(s, "77-3-jjj"))
	assert.True(t, strings.HasSuffix(s, "-"+jobKey(get)))
	a := defaultArtifactName(get, s, true, 1)
	assert.True(t, strings.HasSuffix(a, "-"+jobKey(get)+"-3"), a)
	assert.LessOrEqual(t, len(a), len(ArtifactPrefix)+180)

	// Outside Actions there is no artifact.
	assert.Equal(t, "", defaultArtifactName(envOf(nil), "local-x", true, 1))
}

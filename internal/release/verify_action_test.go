package release

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestVerifyActionCheck runs verify/action.yml's verification step — its
// script as written there — against receipts a real deponent-action run
// wrote: a receipt for this commit and repository passes, and anything else
// fails the job (another commit, another repository, too few receipts, an
// empty download, a receipt edited after it was written).
func TestVerifyActionCheck(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds both commands and runs a governed step")
	}
	script := verifyStepScript(t)
	bins := t.TempDir()
	for _, b := range Binaries {
		cmd := exec.Command("go", "build", "-o", filepath.Join(bins, b), "./cmd/"+b)
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
	}

	const sha = "89abcdef0123456789abcdef0123456789abcdef"
	const repo = "deponent-dev/example"
	work, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	sandbox, receipts, runnerTemp := filepath.Join(work, "repo"), filepath.Join(work, "receipts"), filepath.Join(work, "runner-temp")
	for _, d := range []string{sandbox, runnerTemp} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(sandbox, "hello.txt"), []byte("hi\n"), 0o644))
	run := exec.Command(filepath.Join(bins, "deponent-action"))
	run.Dir = sandbox
	run.Env = []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "LANG=C.UTF-8", "TMPDIR=" + runnerTemp,
		"GITHUB_SHA=" + sha, "GITHUB_REPOSITORY=" + repo, "GITHUB_WORKSPACE=" + sandbox, "RUNNER_TEMP=" + runnerTemp,
		"GITHUB_RUN_ID=4242", "GITHUB_RUN_ATTEMPT=1", "GITHUB_JOB=agent",
		"INPUT_STEPS=ls", "INPUT_VERIFY-COMMAND=ls", "INPUT_RECEIPTS-DIR=" + receipts,
	}
	out, err := run.CombinedOutput()
	if err != nil {
		if os.Getenv("DEPONENT_REQUIRE_JAIL") == "1" {
			t.Fatalf("the governed run did not pass (DEPONENT_REQUIRE_JAIL=1): %v\n%s", err, out)
		}
		t.Skipf("SKIPPING: the governed run did not pass here (no usable jail?); set DEPONENT_REQUIRE_JAIL=1 to make this a failure: %v\n%s", err, out)
	}
	require.Contains(t, string(out), "GOVERNED_PASS")

	check := func(t *testing.T, dir, commit, repository, min string) (int, string, string) {
		t.Helper()
		summary := filepath.Join(t.TempDir(), "summary.md")
		require.NoError(t, os.WriteFile(summary, nil, 0o644))
		// How the runner runs a `shell: bash` step.
		cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script)
		cmd.Env = []string{
			"PATH=" + os.Getenv("PATH"), "GITHUB_ACTIONS=true", "GITHUB_STEP_SUMMARY=" + summary,
			"DEPONENT_VERIFY=" + filepath.Join(bins, "deponent-verify"),
			"EXPECT_COMMIT=" + commit, "EXPECT_REPO=" + repository, "MIN_RECEIPTS=" + min, "RECEIPTS=" + dir,
		}
		var b bytes.Buffer
		cmd.Stdout, cmd.Stderr = &b, &b
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else {
			require.NoError(t, err)
		}
		s, err := os.ReadFile(summary)
		require.NoError(t, err)
		return code, b.String(), string(s)
	}

	t.Run("this commit and repository", func(t *testing.T) {
		code, out, summary := check(t, receipts, sha, repo, "1")
		assert.Equal(t, 0, code, out)
		assert.Contains(t, out, "0 failed")
		assert.Contains(t, summary, "|", "the verifier's table is in the job summary")
	})
	for _, c := range []struct{ name, commit, repo, min string }{
		{"another commit", strings.Repeat("a", 40), repo, "1"},
		{"another repository", sha, "deponent-dev/other", "1"},
		{"fewer receipts than min-receipts", sha, repo, "2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, summary := check(t, receipts, c.commit, c.repo, c.min)
			assert.Equal(t, 1, code, out)
			assert.Contains(t, out, "FAIL")
			assert.Contains(t, summary, "FAIL")
		})
	}
	t.Run("nothing downloaded", func(t *testing.T) {
		code, out, _ := check(t, t.TempDir(), sha, repo, "1")
		assert.Equal(t, 1, code, out)
		assert.Contains(t, out, "0 receipts")
	})
	t.Run("min-receipts is not a number", func(t *testing.T) {
		code, out, _ := check(t, receipts, sha, repo, "two")
		assert.NotEqual(t, 0, code, out)
	})
	t.Run("a receipt edited after it was written", func(t *testing.T) {
		edited := copyDir(t, receipts)
		files, err := filepath.Glob(filepath.Join(edited, "*", "*.json"))
		require.NoError(t, err)
		require.Len(t, files, 1)
		b, err := os.ReadFile(files[0])
		require.NoError(t, err)
		changed := bytes.Replace(b, []byte(`"ls"`), []byte(`"ls -la"`), 1)
		require.NotEqual(t, b, changed)
		require.NoError(t, os.WriteFile(files[0], changed, 0o644))
		code, out, _ := check(t, edited, sha, repo, "1")
		assert.Equal(t, 1, code, out)
		assert.Contains(t, out, "FAIL")
	})
}

// verifyStepScript returns the run: script of verify/action.yml's
// verification step, as the runner would run it.
func verifyStepScript(t *testing.T) string {
	t.Helper()
	s := stepScript(t, "verify/action.yml", "Recompute the receipts (trust nothing stored)")
	require.Contains(t, s, `"$DEPONENT_VERIFY"`)
	return s
}

// stepScript returns the `run: |` script of the composite step named name
// in the action file.
func stepScript(t *testing.T, file, name string) string {
	t.Helper()
	lines := strings.Split(readFile(t, file), "\n")
	start := -1
	for i, l := range lines {
		if l == "    - name: "+name {
			start = i
		}
	}
	require.Positive(t, start, "%s has the step %q", file, name)
	for i := start + 1; i < len(lines) && !strings.HasPrefix(lines[i], "    - "); i++ {
		if lines[i] != "      run: |" {
			continue
		}
		var b strings.Builder
		for _, l := range lines[i+1:] {
			if strings.TrimSpace(l) != "" && !strings.HasPrefix(l, "        ") {
				break
			}
			b.WriteString(strings.TrimPrefix(l, "        ") + "\n")
		}
		return b.String()
	}
	t.Fatalf("%s: the step %q has no run: | script", file, name)
	return ""
}

// TestAttestNeedsAnIdentity: with attest: true, action.yml stops the job
// before anything runs when the job cannot request an OIDC token (no
// id-token: write), and says which permissions to add.
func TestAttestNeedsAnIdentity(t *testing.T) {
	script := stepScript(t, "action.yml", "Check that attest can sign (before anything runs)")
	run := func(env ...string) (int, string) {
		cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script)
		cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, env...)
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode(), string(out)
		}
		require.NoError(t, err)
		return 0, string(out)
	}
	code, out := run()
	assert.Equal(t, 1, code, out)
	assert.Contains(t, out, "::error title=Deponent: attest needs permissions::")
	assert.Contains(t, out, "id-token: write and attestations: write")
	code, out = run("ACTIONS_ID_TOKEN_REQUEST_URL=https://token.actions.example/x")
	assert.Equal(t, 0, code, out)
	assert.Empty(t, out)
	// And the step only runs when attest is on.
	assert.Contains(t, readFile(t, "action.yml"), "    - name: Check that attest can sign (before anything runs)\n      if: inputs.attest == 'true'\n")
}

func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	require.NoError(t, filepath.Walk(src, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if fi.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	}))
	return dst
}

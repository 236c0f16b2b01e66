package action

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/deponent-dev/deponent-action/internal/livetest"
)

// actionlint checks every workflow in the repository and action.yml.
//
// Two facts shape these tests, both shown by the negative controls below:
//   - actionlint validates a local action's metadata (inputs, outputs) only
//     when a workflow uses it with `uses: ./`, and only inside a project (a
//     directory with .git); without one it silently checks nothing of it.
//   - It does not lint the steps of a composite action. So the test also
//     turns action.yml's steps into a workflow job (with the action's
//     inputs as workflow_call inputs) and lints that: expressions,
//     contexts and — where shellcheck is installed — the bash scripts.

const requireActionlintEnv = "DEPONENT_REQUIRE_ACTIONLINT"

// findActionlint looks on PATH, then in $(go env GOPATH)/bin.
func findActionlint(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("actionlint"); err == nil {
		return p
	}
	if out, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
		for _, d := range filepath.SplitList(strings.TrimSpace(string(out))) {
			p := filepath.Join(d, "bin", "actionlint")
			if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
				return p
			}
		}
	}
	livetest.Skip(t, requireActionlintEnv, "actionlint is not installed (go install github.com/rhysd/actionlint/cmd/actionlint@v1.7.12)")
	return ""
}

// lintProject is a temporary copy of the repository's action.yml and
// workflows, laid out as a project actionlint recognizes.
type lintProject struct {
	t    *testing.T
	dir  string
	bin  string
	yaml map[string]string // relative path → content
}

func newLintProject(t *testing.T, bin string) *lintProject {
	t.Helper()
	p := &lintProject{t: t, dir: t.TempDir(), bin: bin, yaml: map[string]string{}}
	require.NoError(t, os.Mkdir(filepath.Join(p.dir, ".git"), 0o755))
	p.copy("action.yml")
	p.copy(verifyActionYML)
	for _, pat := range []string{".github/workflows/*.yml", ".github/workflows/*.yaml", "examples/workflows/*.yml", "examples/workflows/*.yaml"} {
		m, err := filepath.Glob(filepath.Join(moduleRoot, pat))
		require.NoError(t, err)
		for _, f := range m {
			rel, _ := filepath.Rel(moduleRoot, f)
			p.copy(rel)
		}
	}
	return p
}

func (p *lintProject) copy(rel string) {
	b, err := os.ReadFile(filepath.Join(moduleRoot, rel))
	require.NoError(p.t, err)
	p.write(rel, string(b))
}

func (p *lintProject) write(rel, content string) {
	p.yaml[rel] = content
	full := filepath.Join(p.dir, rel)
	require.NoError(p.t, os.MkdirAll(filepath.Dir(full), 0o755))
	require.NoError(p.t, os.WriteFile(full, []byte(content), 0o644))
}

// lint runs actionlint on the given files (relative to the project).
func (p *lintProject) lint(files ...string) (int, string) {
	p.t.Helper()
	cmd := exec.Command(p.bin, append([]string{"-no-color"}, files...)...)
	cmd.Dir = p.dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), out.String()
	}
	require.NoError(p.t, err)
	return 0, out.String()
}

// usageWorkflow uses the local action with every input and reads every
// output, so actionlint checks both lists against action.yml.
func usageWorkflow() string {
	var b strings.Builder
	b.WriteString("name: uses-local-action\non: push\njobs:\n  use:\n    runs-on: ubuntu-latest\n    steps:\n")
	b.WriteString("      - uses: actions/checkout@v4\n      - id: d\n        uses: ./\n        with:\n")
	for _, in := range Inputs {
		v := "x"
		if in.bool {
			v = "'false'"
		}
		fmt.Fprintf(&b, "          %s: %s\n", in.Name, v)
	}
	b.WriteString("      - env:\n")
	for _, o := range ActionOutputs {
		fmt.Fprintf(&b, "          OUT_%s: ${{ steps.d.outputs.%s }}\n", strings.ToUpper(strings.ReplaceAll(o, "-", "_")), o)
	}
	b.WriteString("        run: env | grep '^OUT_'\n")
	return b.String()
}

// compositeAsWorkflow turns action.yml's runs.steps into the steps of a
// workflow job whose workflow_call inputs are the action's inputs, so
// actionlint lints the composite's expressions and scripts.
func compositeAsWorkflow(t *testing.T, action string) string {
	t.Helper()
	var inputs []InputSpec
	for _, in := range Inputs {
		inputs = append(inputs, InputSpec{Name: in.Name, Default: in.Default})
	}
	return compositeStepsAsWorkflow(t, action, inputs)
}

// compositeStepsAsWorkflow is compositeAsWorkflow for any composite action
// with the given inputs.
func compositeStepsAsWorkflow(t *testing.T, action string, inputs []InputSpec) string {
	t.Helper()
	lines := strings.Split(action, "\n")
	start := -1
	inRuns := false
	for i, l := range lines {
		if l == "runs:" {
			inRuns = true
		}
		if inRuns && l == "  steps:" {
			start = i + 1
			break
		}
	}
	require.Positive(t, start, "action.yml has runs.steps")
	var b strings.Builder
	// workflow_call, not workflow_dispatch: a composite action may have
	// more inputs than the 25 a dispatched workflow may.
	b.WriteString("name: composite-steps\non:\n  workflow_call:\n    inputs:\n")
	for _, in := range inputs {
		fmt.Fprintf(&b, "      %s:\n        description: x\n        required: false\n        type: string\n        default: '%s'\n", in.Name, in.Default)
	}
	b.WriteString("jobs:\n  composite:\n    runs-on: ubuntu-latest\n    steps:\n")
	for _, l := range lines[start:] {
		if strings.TrimSpace(l) != "" && !strings.HasPrefix(l, "    ") {
			break // the end of runs.steps
		}
		if l != "" {
			l = "  " + l
		}
		b.WriteString(l + "\n")
	}
	return b.String()
}

// TestActionlint lints every workflow of the repository and of
// examples/workflows, the example workflows once more with the published
// action reference replaced by `uses: ./` (so their inputs are checked
// against action.yml), a workflow that uses every input and output of the
// local action, and action.yml's composite steps as a workflow job.
func TestActionlint(t *testing.T) {
	bin := findActionlint(t)
	p := newLintProject(t, bin)
	var files, rels []string
	for rel := range p.yaml {
		rels = append(rels, rel)
	}
	sort.Strings(rels)
	for _, rel := range rels {
		content := p.yaml[rel]
		if rel == "action.yml" {
			continue
		}
		if rel == verifyActionYML {
			continue
		}
		files = append(files, rel)
		if strings.HasPrefix(rel, "examples/") && publishedRef.MatchString(content) {
			local := localRefs(content)
			name := ".github/workflows/zz-local-" + filepath.Base(rel)
			p.write(name, local)
			files = append(files, name)
		}
	}
	require.Contains(t, files, ".github/workflows/ci.yml")
	require.Contains(t, files, "examples/workflows/agent-pr.yml")
	require.Contains(t, files, "examples/workflows/release.yml")
	p.write(".github/workflows/zz-uses-local.yml", usageWorkflow())
	p.write(".github/workflows/zz-composite.yml", compositeAsWorkflow(t, p.yaml["action.yml"]))
	files = append(files, ".github/workflows/zz-uses-local.yml", ".github/workflows/zz-composite.yml")
	// The verify action: every input and output used, and its steps.
	vIn, vOut := actionKeys(t, p.yaml[verifyActionYML])
	p.write(".github/workflows/zz-uses-verify.yml", verifyUsageWorkflow(vIn, vOut))
	var vSpecs []InputSpec
	for _, n := range vIn {
		vSpecs = append(vSpecs, InputSpec{Name: n, Default: "x"})
	}
	p.write(".github/workflows/zz-verify-composite.yml", compositeStepsAsWorkflow(t, p.yaml[verifyActionYML], vSpecs))
	files = append(files, ".github/workflows/zz-uses-verify.yml", ".github/workflows/zz-verify-composite.yml")
	// The workflows the README shows, as published and against ./action.yml.
	readme, err := os.ReadFile(filepath.Join(moduleRoot, "README.md"))
	require.NoError(t, err)
	blocks := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatch(string(readme), -1)
	require.NotEmpty(t, blocks, "the README shows a workflow")
	for i, b := range blocks {
		name := fmt.Sprintf(".github/workflows/zz-readme-%d.yml", i)
		p.write(name, localRefs(b[1]))
		files = append(files, name)
	}
	requireShellcheck(t)
	code, out := p.lint(files...)
	t.Logf("actionlint %s:\n%s", strings.Join(files, " "), out)
	assert.Equal(t, 0, code, "actionlint found problems:\n%s", out)
}

// verifyActionYML is the verify action, used as owner/repo/verify@ref.
const verifyActionYML = "verify/action.yml"

// publishedRef matches the published references to this repository's
// actions (the action and the verify action).
var publishedRef = regexp.MustCompile(`deponent-dev/deponent-action(/verify)?@v[0-9][0-9.]*`)

// localRefs points the published references at the local copies, so
// actionlint checks their inputs and outputs against this repository's
// action files.
func localRefs(s string) string {
	return publishedRef.ReplaceAllStringFunc(s, func(m string) string {
		if strings.Contains(m, "/verify@") {
			return "./verify"
		}
		return "./"
	})
}

// actionKeys reads the input and output names of an action.yml.
func actionKeys(t *testing.T, action string) (inputs, outputs []string) {
	t.Helper()
	section := func(name string) string {
		i := strings.Index(action, "\n"+name+":\n")
		require.True(t, i >= 0, "the action has %s:", name)
		rest := action[i+len(name)+3:]
		if j := regexp.MustCompile(`(?m)^\S`).FindStringIndex(rest); j != nil {
			rest = rest[:j[0]]
		}
		return rest
	}
	keyRe := regexp.MustCompile(`(?m)^  ([a-z][a-z-]*):\n`)
	for _, m := range keyRe.FindAllStringSubmatch(section("inputs"), -1) {
		inputs = append(inputs, m[1])
	}
	for _, m := range keyRe.FindAllStringSubmatch(section("outputs"), -1) {
		outputs = append(outputs, m[1])
	}
	require.NotEmpty(t, inputs)
	return inputs, outputs
}

// verifyUsageWorkflow uses the local verify action with every input and
// reads every output.
func verifyUsageWorkflow(inputs, outputs []string) string {
	var b strings.Builder
	b.WriteString("name: uses-verify-action\non: push\njobs:\n  verify:\n    runs-on: ubuntu-latest\n    steps:\n")
	b.WriteString("      - uses: actions/checkout@v4\n      - id: v\n        uses: ./verify\n        with:\n")
	for _, in := range inputs {
		fmt.Fprintf(&b, "          %s: x\n", in)
	}
	b.WriteString("      - env:\n")
	for _, o := range outputs {
		fmt.Fprintf(&b, "          OUT_%s: ${{ steps.v.outputs.%s }}\n", strings.ToUpper(strings.ReplaceAll(o, "-", "_")), o)
	}
	b.WriteString("        run: env | grep '^OUT_'\n")
	return b.String()
}

// TestActionlintReadsActionYML: the negative controls. In a copy of the
// project, a broken action.yml, an input the action does not declare, an
// output it does not declare, and a typo in the composite's expressions
// each make actionlint fail — so the passing run above really checked
// action.yml.
func TestActionlintReadsActionYML(t *testing.T) {
	bin := findActionlint(t)
	usage := ".github/workflows/zz-uses-local.yml"

	t.Run("valid", func(t *testing.T) {
		p := newLintProject(t, bin)
		p.write(usage, usageWorkflow())
		code, out := p.lint(usage)
		assert.Equal(t, 0, code, out)
	})
	t.Run("broken action.yml", func(t *testing.T) {
		p := newLintProject(t, bin)
		p.write(usage, usageWorkflow())
		p.write("action.yml", p.yaml["action.yml"]+"\n  broken: [unclosed\n")
		code, out := p.lint(usage)
		assert.NotEqual(t, 0, code)
		assert.Contains(t, out, "could not parse action metadata")
	})
	t.Run("input missing from action.yml", func(t *testing.T) {
		p := newLintProject(t, bin)
		p.write(usage, usageWorkflow())
		a := regexp.MustCompile(`(?m)^  verify-command:\n(    .*\n)+`).ReplaceAllString(p.yaml["action.yml"], "")
		require.NotEqual(t, p.yaml["action.yml"], a)
		p.write("action.yml", a)
		code, out := p.lint(usage)
		assert.NotEqual(t, 0, code)
		assert.Contains(t, out, `input "verify-command" is not defined in action`)
	})
	t.Run("output missing from action.yml", func(t *testing.T) {
		p := newLintProject(t, bin)
		p.write(usage, usageWorkflow())
		a := regexp.MustCompile(`(?m)^  chain-head:\n(    .*\n)+`).ReplaceAllString(p.yaml["action.yml"], "")
		require.NotEqual(t, p.yaml["action.yml"], a)
		p.write("action.yml", a)
		code, out := p.lint(usage)
		assert.NotEqual(t, 0, code)
		assert.Contains(t, out, `property "chain-head" is not defined`)
	})
	t.Run("no project: actionlint checks nothing of action.yml", func(t *testing.T) {
		p := newLintProject(t, bin)
		p.write(usage, usageWorkflow())
		p.write("action.yml", p.yaml["action.yml"]+"\n  broken: [unclosed\n")
		require.NoError(t, os.Remove(filepath.Join(p.dir, ".git")))
		code, out := p.lint(usage)
		t.Logf("without .git: exit %d %s", code, out)
		assert.NotContains(t, out, "could not parse action metadata", "this is why the test builds a project with .git")
	})
	t.Run("shell bug in the composite's script", func(t *testing.T) {
		if !requireShellcheck(t) {
			t.Skip("shellcheck is not installed: actionlint checks no scripts here")
		}
		p := newLintProject(t, bin)
		a := strings.Replace(p.yaml["action.yml"], "bwrap --version", "bwrap --version $knob", 1)
		require.NotEqual(t, p.yaml["action.yml"], a)
		p.write(".github/workflows/zz-composite.yml", compositeAsWorkflow(t, a))
		code, out := p.lint(".github/workflows/zz-composite.yml")
		assert.NotEqual(t, 0, code)
		assert.Contains(t, out, "SC2086")
	})
	t.Run("input missing from verify/action.yml", func(t *testing.T) {
		p := newLintProject(t, bin)
		in, out := actionKeys(t, p.yaml[verifyActionYML])
		p.write(".github/workflows/zz-uses-verify.yml", verifyUsageWorkflow(in, out))
		code, lint := p.lint(".github/workflows/zz-uses-verify.yml")
		require.Equal(t, 0, code, lint)
		a := regexp.MustCompile(`(?m)^  min-receipts:\n(    .*\n)+`).ReplaceAllString(p.yaml[verifyActionYML], "")
		require.NotEqual(t, p.yaml[verifyActionYML], a)
		p.write(verifyActionYML, a)
		code, lint = p.lint(".github/workflows/zz-uses-verify.yml")
		assert.NotEqual(t, 0, code)
		assert.Contains(t, lint, `input "min-receipts" is not defined in action`)
	})
	t.Run("typo in the verify action's steps", func(t *testing.T) {
		p := newLintProject(t, bin)
		in, _ := actionKeys(t, p.yaml[verifyActionYML])
		var specs []InputSpec
		for _, n := range in {
			specs = append(specs, InputSpec{Name: n, Default: "x"})
		}
		a := strings.Replace(p.yaml[verifyActionYML], "${{ inputs.min-receipts }}", "${{ inputs.min-receipt }}", 1)
		require.NotEqual(t, p.yaml[verifyActionYML], a)
		p.write(".github/workflows/zz-verify-composite.yml", compositeStepsAsWorkflow(t, a, specs))
		code, out := p.lint(".github/workflows/zz-verify-composite.yml")
		assert.NotEqual(t, 0, code)
		assert.Contains(t, out, "min-receipt")
	})
	t.Run("typo in the composite's expressions", func(t *testing.T) {
		p := newLintProject(t, bin)
		a := strings.Replace(p.yaml["action.yml"], "${{ inputs.dry-run }}", "${{ inputs.dry-runn }}", 1)
		require.NotEqual(t, p.yaml["action.yml"], a)
		p.write(".github/workflows/zz-composite.yml", compositeAsWorkflow(t, a))
		code, out := p.lint(".github/workflows/zz-composite.yml")
		assert.NotEqual(t, 0, code)
		assert.Contains(t, out, `dry-runn`)
	})
}

// ActionOutputs are the outputs the binary sets and action.yml maps.
var ActionOutputs = []string{"outcome", "receipt-id", "receipt-path", "receipts-dir", "artifact-name", "chain-head", "entries", "allowed", "blocked", "step-errors"}

// TestActionYMLMatchesTheBinary: action.yml declares exactly the inputs of
// Inputs, in order, with the same defaults, passes each to the binary as
// INPUT_<NAME>, and maps exactly the outputs the binary sets.
func TestActionYMLMatchesTheBinary(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(moduleRoot, "action.yml"))
	require.NoError(t, err)
	a := string(b)
	section := func(name, next string) string {
		i := strings.Index(a, "\n"+name+":\n")
		j := strings.Index(a, "\n"+next+":\n")
		require.True(t, i >= 0 && j > i, "action.yml has %s: before %s:", name, next)
		return a[i : j+1]
	}
	keyRe := regexp.MustCompile(`(?m)^  ([a-z][a-z-]*):\n`)
	inputs := section("inputs", "outputs")
	var names []string
	for _, m := range keyRe.FindAllStringSubmatch(inputs, -1) {
		names = append(names, m[1])
	}
	var want []string
	for _, in := range Inputs {
		want = append(want, in.Name)
		block := yamlBlock(inputs, in.Name)
		require.NotEmpty(t, block, in.Name)
		def := regexp.MustCompile(`(?m)^    default: (.*)$`).FindStringSubmatch(block)
		require.NotNil(t, def, "input %s declares a default", in.Name)
		assert.Equal(t, in.Default, strings.Trim(def[1], `'`), "default of %s", in.Name)
		assert.Contains(t, block, "    required: false", in.Name)
		env := "INPUT_" + strings.ToUpper(strings.ReplaceAll(in.Name, "-", "_")) + ": ${{ inputs." + in.Name
		assert.Contains(t, a, env, "the run step passes %s", in.Name)
	}
	assert.Equal(t, want, names, "action.yml inputs, in order")

	outputs := section("outputs", "runs")
	names = nil
	for _, m := range keyRe.FindAllStringSubmatch(outputs, -1) {
		names = append(names, m[1])
		assert.Contains(t, outputs, "value: ${{ steps.run.outputs."+m[1]+" }}")
	}
	assert.Equal(t, ActionOutputs, names)

	// The binary sets each of them (the e2e tests read them back).
	src, err := os.ReadFile(filepath.Join(moduleRoot, "pkg", "action", "log.go"))
	require.NoError(t, err)
	run, err := os.ReadFile(filepath.Join(moduleRoot, "pkg", "action", "run.go"))
	require.NoError(t, err)
	for _, o := range ActionOutputs {
		assert.Contains(t, string(src)+string(run), `"`+o+`"`, "the binary sets output %s", o)
	}

	for _, s := range []string{
		// The binary: prebuilt for a release ref, else built from source
		// (scripts/install-binary.sh; internal/release tests it).
		"DEPONENT_ACTION_REF: ${{ github.action_ref }}",
		`bash "$ACTION_PATH/scripts/install-binary.sh" resolve deponent-action`,
		"if: steps.bin.outputs.mode == 'source'",
		"uses: actions/setup-go@", "go-version-file: ${{ github.action_path }}/go.mod",
		"cache-dependency-path: ${{ github.action_path }}/go.sum",
		`bash "$ACTION_PATH/scripts/install-binary.sh" build deponent-action`,
		`bash "$ACTION_PATH/scripts/install-binary.sh" report deponent-action`,
		"DEPONENT_BIN: ${{ steps.bin.outputs.path }}", `exec "$DEPONENT_BIN"`,
		"DEPONENT_CGROUP: ${{ steps.cgroup.outputs.dir }}", `echo $$ | sudo -n tee "$DEPONENT_CGROUP/action/cgroup.procs"`,
		"if: always() && steps.cgroup.outputs.dir != ''",
		"uses: actions/attest-build-provenance@", "if: always() && inputs.attest == 'true' && steps.run.outputs.receipt-path != ''",
		"subject-path: ${{ steps.run.outputs.receipt-path }}",
		"uses: actions/upload-artifact@", "if-no-files-found: error", "if: always() && inputs.upload-artifact == 'true'",
		"name: ${{ steps.run.outputs.artifact-name }}",
		"DEPONENT_MATRIX: ${{ toJSON(matrix) }}", "DEPONENT_CHECK_RUN_ID: ${{ job.check_run_id }}",
		"if: always() && steps.bwrap.outputs.apparmor-userns-restore != ''",
		`sudo -n sysctl -w "kernel.apparmor_restrict_unprivileged_userns=$RESTORE"`,
		"if: runner.os == 'Windows'", "if: runner.os == 'Linux'",
		"sudo -n env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap", "kernel.apparmor_restrict_unprivileged_userns=0",
	} {
		assert.True(t, strings.Contains(a, s), "action.yml contains %q", s)
	}
	// No input is interpolated into a script: inputs reach scripts only
	// through env.
	for _, l := range strings.Split(a, "\n") {
		if strings.Contains(l, "${{ inputs.") {
			trim := strings.TrimSpace(l)
			ok := regexp.MustCompile(`^(INPUT_[A-Z_]+|name|path|if|value):`).MatchString(trim) || strings.HasPrefix(trim, "if: ")
			assert.True(t, ok, "inputs only in env, with, if and output values: %q", l)
		}
	}
}

// TestReferenceDocMatches: docs/action-reference.md has a row for every
// input (with its default) and output, and no others.
func TestReferenceDocMatches(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(moduleRoot, "docs", "action-reference.md"))
	require.NoError(t, err)
	doc := string(b)
	rowRe := regexp.MustCompile("(?m)^\\| `([a-z-]+)` \\| ([^|]*)\\|")
	var inputs, outputs []string
	inSec := strings.Index(doc, "## Inputs")
	outSec := strings.Index(doc, "## Outputs")
	endSec := strings.Index(doc[outSec+1:], "\n## ") + outSec + 1
	require.True(t, inSec >= 0 && outSec > inSec && endSec > outSec)
	for _, m := range rowRe.FindAllStringSubmatch(doc[inSec:outSec], -1) {
		inputs = append(inputs, m[1])
		spec := inputSpec(m[1])
		def := strings.TrimSpace(m[2])
		want := "`" + spec.Default + "`"
		if spec.Default == "" {
			want = "—"
		}
		assert.Equal(t, want, def, "default of %s in the reference", m[1])
	}
	for _, m := range rowRe.FindAllStringSubmatch(doc[outSec:endSec], -1) {
		outputs = append(outputs, m[1])
	}
	var want []string
	for _, in := range Inputs {
		want = append(want, in.Name)
	}
	assert.Equal(t, want, inputs)
	assert.Equal(t, ActionOutputs, outputs)
}

// yamlBlock returns the lines of a two-space-indented key's block (the
// lines indented deeper than the key, up to the next key).
func yamlBlock(section, key string) string {
	lines := strings.Split(section, "\n")
	for i, l := range lines {
		if l != "  "+key+":" {
			continue
		}
		var b strings.Builder
		for _, x := range lines[i+1:] {
			if strings.TrimSpace(x) != "" && !strings.HasPrefix(x, "    ") {
				break
			}
			b.WriteString(x + "\n")
		}
		return b.String()
	}
	return ""
}

// requireShellcheck reports whether shellcheck is installed; actionlint
// checks run: scripts only with it. Without it the scripts go unchecked,
// which is a failure when DEPONENT_REQUIRE_ACTIONLINT=1 (CI).
func requireShellcheck(t *testing.T) bool {
	t.Helper()
	if _, err := exec.LookPath("shellcheck"); err != nil {
		if os.Getenv(requireActionlintEnv) == "1" {
			t.Fatalf("%s=1 but shellcheck is not installed, so actionlint would not check the run: scripts (apt-get install shellcheck)", requireActionlintEnv)
		}
		t.Logf("NOTE: shellcheck is not installed, so actionlint does not check the run: scripts here")
		return false
	}
	return true
}

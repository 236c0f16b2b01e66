package release

import (
	"bufio"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/deponent-dev/deponent-action/internal/version"
)

// These tests run scripts/install-binary.sh — the script action.yml and
// verify/action.yml run to get their binary — as the runner would: bash,
// the runner's environment variables, GITHUB_OUTPUT. Release downloads
// come from a file server on 127.0.0.1 (DEPONENT_RELEASE_BASE_URL). The
// "binary" it serves is a shell script that records every execution in a
// marker file, so a test can tell whether anything was run.

// fakeRelease is a copy of the action's tree (the script and go.mod) with a
// committed checksums file, and a file server holding release assets.
type fakeRelease struct {
	t       *testing.T
	tree    string // the action's root: scripts/, go.mod, release/
	temp    string // RUNNER_TEMP
	marker  string // one line per execution of a served binary
	server  *httptest.Server
	mu      sync.Mutex
	assets  map[string][]byte // URL path → content
	fetched []string          // URL paths requested
}

func newFakeRelease(t *testing.T) *fakeRelease {
	t.Helper()
	f := &fakeRelease{t: t, tree: t.TempDir(), temp: t.TempDir(), assets: map[string][]byte{}}
	f.marker = filepath.Join(t.TempDir(), "ran")
	for _, rel := range []string{"scripts/install-binary.sh", "go.mod"} {
		b, err := os.ReadFile(filepath.Join(root, rel))
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll(filepath.Join(f.tree, filepath.Dir(rel)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(f.tree, rel), b, 0o755))
	}
	f.server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.fetched = append(f.fetched, r.URL.Path)
		b, ok := f.assets[r.URL.Path]
		f.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(b)
	}))
	t.Cleanup(f.server.Close)
	require.True(t, strings.HasPrefix(f.server.URL, "http://127.0.0.1:"), f.server.URL)
	return f
}

// binary is a stand-in release binary: it records that it ran and answers
// --version like the real one.
func (f *fakeRelease) binary(name, ver string) []byte {
	return []byte(fmt.Sprintf("#!/bin/sh\necho \"$0 $*\" >> %q\necho %q\n", f.marker, name+" "+ver))
}

// serve puts content at /vVERSION/ASSET.
func (f *fakeRelease) serve(ver, asset string, content []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.assets["/v"+ver+"/"+asset] = content
}

// commit writes the action tree's release/checksums.txt: the real format,
// every platform, with the given digests for the named files and digests
// of nothing for the rest.
func (f *fakeRelease) commit(ver string, sums map[string]string) {
	var b strings.Builder
	for _, n := range ExpectedNames(ver) {
		s, ok := sums[n]
		if !ok {
			s = SHA256Hex([]byte("not served: " + n))
		}
		fmt.Fprintf(&b, "%s  %s\n", s, n)
	}
	_, err := ParseChecksums([]byte(b.String()))
	require.NoError(f.t, err, "the fixture is a valid checksums file")
	f.writeCommitted(b.String())
}

func (f *fakeRelease) writeCommitted(s string) {
	require.NoError(f.t, os.MkdirAll(filepath.Join(f.tree, "release"), 0o755))
	require.NoError(f.t, os.WriteFile(filepath.Join(f.tree, CommittedPath), []byte(s), 0o644))
}

// result is one run of the script.
type result struct {
	code    int
	out     string
	outputs map[string]string // GITHUB_OUTPUT
}

func (f *fakeRelease) run(ref, runnerOS, runnerArch, sub, name string, extra ...string) result {
	f.t.Helper()
	ghOut := filepath.Join(f.t.TempDir(), "output")
	require.NoError(f.t, os.WriteFile(ghOut, nil, 0o644))
	cmd := exec.Command("bash", filepath.Join(f.tree, "scripts", "install-binary.sh"), sub, name)
	cmd.Env = append(os.Environ(),
		"DEPONENT_ACTION_REF="+ref, "RUNNER_OS="+runnerOS, "RUNNER_ARCH="+runnerArch,
		"RUNNER_TEMP="+f.temp, "GITHUB_OUTPUT="+ghOut, "DEPONENT_RELEASE_BASE_URL="+f.server.URL)
	cmd.Env = append(cmd.Env, extra...)
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else {
		require.NoError(f.t, err)
	}
	return result{code: code, out: string(out), outputs: readOutputs(f.t, ghOut)}
}

func readOutputs(t *testing.T, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	m := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "=")
		require.True(t, ok, "GITHUB_OUTPUT line %q", sc.Text())
		_, dup := m[k]
		require.False(t, dup, "output %s set twice", k)
		m[k] = v
	}
	return m
}

func (f *fakeRelease) runs() []string {
	b, err := os.ReadFile(f.marker)
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(f.t, err)
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

// binDirs lists what the script left under RUNNER_TEMP.
func (f *fakeRelease) binFiles() []string {
	var out []string
	_ = filepath.Walk(f.temp, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// TestInstallReleaseGoodChecksum is the positive control: a release ref, a
// committed digest that matches the served binary → it is installed, runs,
// and the outputs say so; the exact tag and the moving major tag both work.
func TestInstallReleaseGoodChecksum(t *testing.T) {
	for _, ref := range []string{"v0.4.2", "v0"} {
		t.Run(ref, func(t *testing.T) {
			f := newFakeRelease(t)
			bin := f.binary("deponent-verify", "0.4.2")
			asset := AssetName("deponent-verify", "0.4.2", Platform{"linux", "amd64"})
			f.serve("0.4.2", asset, bin)
			f.commit("0.4.2", map[string]string{asset: SHA256Hex(bin)})

			r := f.run(ref, "Linux", "X64", "resolve", "deponent-verify")
			require.Equal(t, 0, r.code, r.out)
			assert.Equal(t, "release", r.outputs["mode"])
			assert.Equal(t, "0.4.2", r.outputs["version"])
			assert.Equal(t, []string{"/v0.4.2/" + asset}, f.fetched)
			path := r.outputs["path"]
			require.NotEmpty(t, path)
			assert.Equal(t, "deponent-verify", filepath.Base(path))
			got, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, bin, got)
			assert.Len(t, f.runs(), 1, "the script ran it once, to check --version")
			out, err := exec.Command(path, "--help").CombinedOutput()
			require.NoError(t, err, "%s", out)
			assert.Len(t, f.runs(), 2, "and the next step can run it")
		})
	}
}

// TestInstallReleaseRefuses: every way a release download can go wrong
// refuses, leaves no binary behind and runs nothing — and none falls back
// to a source build (no mode output at all).
func TestInstallReleaseRefuses(t *testing.T) {
	const ver = "0.4.2"
	linux := Platform{"linux", "amd64"}
	asset := AssetName("deponent-action", ver, linux)
	cases := []struct {
		name, ref, os, arch string
		setup               func(f *fakeRelease)
		want                string
		fetches             bool
	}{
		{"checksum mismatch", "v" + ver, "Linux", "X64", func(f *fakeRelease) {
			good := f.binary("deponent-action", ver)
			f.commit(ver, map[string]string{asset: SHA256Hex(good)})
			f.serve(ver, asset, append(good, []byte("echo tampered\n")...))
		}, "the download is not the released binary. Nothing was run", true},
		{"missing asset", "v" + ver, "Linux", "X64", func(f *fakeRelease) {
			f.commit(ver, map[string]string{asset: SHA256Hex(f.binary("deponent-action", ver))})
		}, "does not fall back to a source build", true},
		{"missing asset for the major tag", "v0", "Linux", "X64", func(f *fakeRelease) {
			f.commit(ver, map[string]string{asset: SHA256Hex(f.binary("deponent-action", ver))})
		}, "does not fall back to a source build", true},
		{"no committed checksums", "v" + ver, "Linux", "X64", func(f *fakeRelease) {
			f.serve(ver, asset, f.binary("deponent-action", ver))
		}, "has no release/checksums.txt", false},
		{"committed checksums are for another version", "v0.4.3", "Linux", "X64", func(f *fakeRelease) {
			b := f.binary("deponent-action", ver)
			f.commit(ver, map[string]string{asset: SHA256Hex(b)})
			f.serve("0.4.3", AssetName("deponent-action", "0.4.3", linux), b)
		}, "is for version 0.4.2", false},
		{"major tag of another major version", "v1", "Linux", "X64", func(f *fakeRelease) {
			b := f.binary("deponent-action", ver)
			f.commit(ver, map[string]string{asset: SHA256Hex(b)})
			f.serve(ver, asset, b)
		}, "not a v1.x.y release", false},
		{"no binary for this platform", "v" + ver, "Linux", "ARM", func(f *fakeRelease) {
			f.commit(ver, map[string]string{asset: SHA256Hex(f.binary("deponent-action", ver))})
		}, "has no deponent-action for this runner", false},
		{"Windows", "v" + ver, "Windows", "X64", func(f *fakeRelease) {
			f.commit(ver, map[string]string{asset: SHA256Hex(f.binary("deponent-action", ver))})
		}, "has no deponent-action for this runner", false},
		{"malformed committed file", "v" + ver, "Linux", "X64", func(f *fakeRelease) {
			b := f.binary("deponent-action", ver)
			f.serve(ver, asset, b)
			f.writeCommitted(strings.ToUpper(SHA256Hex(b)) + "  " + asset + "\n")
		}, "line 1 is not", false},
		{"committed file cut short", "v" + ver, "Linux", "X64", func(f *fakeRelease) {
			b := f.binary("deponent-action", ver)
			f.serve(ver, asset, b)
			f.writeCommitted(SHA256Hex(b) + "  " + asset)
		}, "has no newline", false},
		{"committed file lists a name twice", "v" + ver, "Linux", "X64", func(f *fakeRelease) {
			b := f.binary("deponent-action", ver)
			f.serve(ver, asset, b)
			f.writeCommitted(SHA256Hex([]byte("x")) + "  " + asset + "\n" + SHA256Hex(b) + "  " + asset + "\n")
		}, "lists " + asset + " twice", false},
		{"committed file mixes versions", "v" + ver, "Linux", "X64", func(f *fakeRelease) {
			b := f.binary("deponent-action", ver)
			f.serve(ver, asset, b)
			f.writeCommitted(SHA256Hex(b) + "  " + asset + "\n" + SHA256Hex(b) + "  deponent-verify_0.4.1_linux_amd64\n")
		}, "mixes versions", false},
		{"binary matches but does not run as itself", "v" + ver, "Linux", "X64", func(f *fakeRelease) {
			b := f.binary("deponent-verify", ver) // the other command's binary
			f.commit(ver, map[string]string{asset: SHA256Hex(b)})
			f.serve(ver, asset, b)
		}, "does not run as 'deponent-action 0.4.2'", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFakeRelease(t)
			c.setup(f)
			r := f.run(c.ref, c.os, c.arch, "resolve", "deponent-action")
			assert.Equal(t, 1, r.code, r.out)
			assert.Contains(t, r.out, "::error title=Deponent: refusing the deponent-action::")
			assert.Contains(t, r.out, c.want)
			assert.Empty(t, r.outputs, "no mode, no path: nothing for a later step to run or build")
			assert.Empty(t, f.binFiles(), "nothing left under RUNNER_TEMP")
			if c.fetches {
				assert.NotEmpty(t, f.fetched)
			} else {
				assert.Empty(t, f.fetched, "refused before downloading")
			}
			if c.name == "binary matches but does not run as itself" {
				assert.Len(t, f.runs(), 1, "the --version check ran it, and refused")
			} else {
				assert.Empty(t, f.runs(), "nothing was executed")
			}
		})
	}
}

// TestInstallSourceFallback: a ref that is not a release tag builds from
// source — even when the tree holds committed checksums, and without
// touching the network — and the build step builds the real command from
// this repository and checks that it runs.
func TestInstallSourceFallback(t *testing.T) {
	for _, ref := range []string{"", "main", "0123456789abcdef0123456789abcdef01234567", "v0.4", "v0.4.2-rc.1", "release/v0.4.2"} {
		t.Run("ref="+ref, func(t *testing.T) {
			f := newFakeRelease(t)
			b := f.binary("deponent-verify", "0.4.2")
			f.commit("0.4.2", map[string]string{AssetName("deponent-verify", "0.4.2", Platform{"linux", "amd64"}): SHA256Hex(b)})
			r := f.run(ref, "Linux", "X64", "resolve", "deponent-verify")
			require.Equal(t, 0, r.code, r.out)
			assert.Equal(t, "source", r.outputs["mode"])
			assert.NotEmpty(t, r.outputs["reason"])
			assert.Equal(t, "deponent-verify", filepath.Base(r.outputs["path"]))
			assert.NoFileExists(t, r.outputs["path"], "built by the next step, not downloaded")
			assert.Empty(t, f.fetched)
			assert.Empty(t, f.runs())
		})
	}

	// The build step, on this repository's own tree.
	if testing.Short() {
		t.Skip("-short: the source build compiles deponent-verify")
	}
	tmp, ghOut := t.TempDir(), filepath.Join(t.TempDir(), "output")
	require.NoError(t, os.WriteFile(ghOut, nil, 0o644))
	script := filepath.Join(root, "scripts", "install-binary.sh")
	env := append(os.Environ(), "RUNNER_TEMP="+tmp, "GITHUB_OUTPUT="+ghOut, "DEPONENT_ACTION_REF=main", "RUNNER_OS=Linux", "RUNNER_ARCH=X64")
	cmd := exec.Command("bash", script, "resolve", "deponent-verify")
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	o := readOutputs(t, ghOut)
	require.Equal(t, "source", o["mode"])
	cmd = exec.Command("bash", script, "build", "deponent-verify")
	cmd.Env = append(env, "DEPONENT_BIN="+o["path"])
	out, err = cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "built deponent-verify "+version.Version+" from source")
	v, err := exec.Command(o["path"], "--version").CombinedOutput()
	require.NoError(t, err)
	assert.Equal(t, "deponent-verify "+version.Version+"\n", string(v))

	// Without DEPONENT_BIN (the resolve step's output) it refuses.
	cmd = exec.Command("bash", script, "build", "deponent-verify")
	cmd.Env = env
	out, err = cmd.CombinedOutput()
	assert.Error(t, err)
	assert.Contains(t, string(out), "DEPONENT_BIN is not set")
}

// TestInstallReport: the summary line says how the binary was obtained and
// how long it took from the action's start, both ways.
func TestInstallReport(t *testing.T) {
	f := newFakeRelease(t)
	summary := filepath.Join(t.TempDir(), "summary.md")
	require.NoError(t, os.WriteFile(summary, nil, 0o644))
	r := f.run("v0.4.2", "Linux", "X64", "report", "deponent-action",
		"GITHUB_STEP_SUMMARY="+summary, "DEPONENT_T0=1", "DEPONENT_MODE=release", "DEPONENT_VERSION=0.4.2")
	require.Equal(t, 0, r.code, r.out)
	r2 := f.run("main", "Linux", "X64", "report", "deponent-verify",
		"GITHUB_STEP_SUMMARY="+summary, "DEPONENT_T0=1", "DEPONENT_MODE=source", "DEPONENT_REASON=the action ref 'main' is not a release tag")
	require.Equal(t, 0, r2.code, r2.out)
	b, err := os.ReadFile(summary)
	require.NoError(t, err)
	s := string(b)
	assert.Regexp(t, "Deponent setup: prebuilt `deponent-action` 0.4.2, sha256 checked against the committed `release/checksums.txt`. Time from the action's start to the first governed step: [0-9]+ s.", s)
	assert.Regexp(t, "Deponent setup: `deponent-verify` built from source: the action ref 'main' is not a release tag. Time from the action's start to the verification: [0-9]+ s.", s)

	r3 := f.run("main", "Linux", "X64", "report", "deponent-action", "GITHUB_STEP_SUMMARY="+summary, "DEPONENT_T0=", "DEPONENT_MODE=source")
	require.Equal(t, 0, r3.code, r3.out)
	assert.Contains(t, r3.out, "unknown (no start time)")
	r4 := f.run("main", "Linux", "X64", "report", "deponent-action", "DEPONENT_T0=1", "DEPONENT_MODE=")
	assert.Equal(t, 1, r4.code, "a report without a mode is a bug, not a line")
}

package release

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Platform is one GOOS/GOARCH pair a release ships.
type Platform struct{ OS, Arch string }

// Platforms are the platforms of every release, in the order of the
// GoReleaser configuration.
var Platforms = []Platform{{"linux", "amd64"}, {"linux", "arm64"}, {"darwin", "amd64"}, {"darwin", "arm64"}}

// Binaries are the commands every release ships.
var Binaries = []string{"deponent-action", "deponent-verify"}

// CommittedPath is where the checksums are committed, relative to the
// repository root.
const CommittedPath = "release/checksums.txt"

// AssetName is the release file of binary for platform p at version.
func AssetName(binary, version string, p Platform) string {
	return binary + "_" + version + "_" + p.OS + "_" + p.Arch
}

// ManifestName is the release file of the source manifest at version.
func ManifestName(version string) string {
	return "deponent_" + version + "_source-manifest.txt"
}

// Entry is one line of a checksums file.
type Entry struct {
	SHA256 string // 64 lower-case hex digits
	Name   string
}

// Checksums is a parsed checksums file.
type Checksums struct {
	Version string
	Entries []Entry // in file order
}

// SHA256Of returns the digest listed for name, or "".
func (c *Checksums) SHA256Of(name string) string {
	for _, e := range c.Entries {
		if e.Name == name {
			return e.SHA256
		}
	}
	return ""
}

var (
	lineRe    = regexp.MustCompile(`^([0-9a-f]{64})  ([A-Za-z0-9._+-]+)$`)
	versionRe = regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$`)
)

// ValidVersion reports whether v is a release version X.Y.Z (no "v", no
// pre-release or build suffix).
func ValidVersion(v string) bool { return versionRe.MatchString(v) }

// ParseChecksums parses a checksums file strictly (see the package doc).
func ParseChecksums(b []byte) (*Checksums, error) {
	if len(b) == 0 {
		return nil, errors.New("checksums: empty file")
	}
	if b[len(b)-1] != '\n' {
		return nil, errors.New("checksums: the last line has no newline (the file may be cut short)")
	}
	c := &Checksums{}
	seen := map[string]bool{}
	for i, line := range strings.Split(string(b[:len(b)-1]), "\n") {
		m := lineRe.FindStringSubmatch(line)
		if m == nil {
			return nil, fmt.Errorf("checksums: line %d is not \"<64 lower-case hex digits>  <file name>\": %q", i+1, line)
		}
		name := m[2]
		if seen[name] {
			return nil, fmt.Errorf("checksums: line %d: %s is listed twice", i+1, name)
		}
		seen[name] = true
		v, err := versionOf(name)
		if err != nil {
			return nil, fmt.Errorf("checksums: line %d: %w", i+1, err)
		}
		if c.Version == "" {
			c.Version = v
		} else if v != c.Version {
			return nil, fmt.Errorf("checksums: line %d: %s is version %s, the file's first line is version %s", i+1, name, v, c.Version)
		}
		c.Entries = append(c.Entries, Entry{SHA256: m[1], Name: name})
	}
	for _, want := range ExpectedNames(c.Version) {
		if !seen[want] {
			return nil, fmt.Errorf("checksums: %s is missing (every release ships %s for %s, and the source manifest)", want, strings.Join(Binaries, " and "), platformList())
		}
	}
	return c, nil
}

// ExpectedNames are the files of a release at version, sorted.
func ExpectedNames(version string) []string {
	var out []string
	for _, b := range Binaries {
		for _, p := range Platforms {
			out = append(out, AssetName(b, version, p))
		}
	}
	out = append(out, ManifestName(version))
	sort.Strings(out)
	return out
}

func platformList() string {
	var s []string
	for _, p := range Platforms {
		s = append(s, p.OS+"/"+p.Arch)
	}
	return strings.Join(s, ", ")
}

// versionOf reads the version out of an expected file name.
func versionOf(name string) (string, error) {
	if v, ok := strings.CutPrefix(name, "deponent_"); ok {
		if v, ok := strings.CutSuffix(v, "_source-manifest.txt"); ok && ValidVersion(v) {
			return v, nil
		}
	}
	for _, b := range Binaries {
		rest, ok := strings.CutPrefix(name, b+"_")
		if !ok {
			continue
		}
		for _, p := range Platforms {
			if v, ok := strings.CutSuffix(rest, "_"+p.OS+"_"+p.Arch); ok && ValidVersion(v) {
				return v, nil
			}
		}
	}
	return "", fmt.Errorf("%s is not a file of a release (want BINARY_X.Y.Z_OS_ARCH for %s on %s, or deponent_X.Y.Z_source-manifest.txt)", name, strings.Join(Binaries, ", "), platformList())
}

// goPackage is the part of `go list -json` output SourceManifest reads.
type goPackage struct {
	ImportPath string
	Dir        string
	Standard   bool
	Module     *struct {
		Path string
		Main bool
	}
	GoFiles, CgoFiles, CFiles, CXXFiles, MFiles, HFiles, FFiles, SFiles []string
	SwigFiles, SwigCXXFiles, SysoFiles, EmbedFiles                      []string
	Error                                                               *struct{ Err string }
}

// SourceManifest lists the files under root that the release binaries are
// built from, with their sha256, one "HEX  PATH" line each, sorted by path
// (see the package doc). It runs `go list` with the go on PATH.
func SourceManifest(root string) ([]byte, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	files := map[string]bool{"go.mod": true, "go.sum": true, ".goreleaser.yaml": true}
	for _, p := range Platforms {
		args := []string{"list", "-deps", "-json"}
		for _, b := range Binaries {
			args = append(args, "./cmd/"+b)
		}
		cmd := exec.Command("go", args...)
		cmd.Dir = abs
		cmd.Env = append(os.Environ(), "GOOS="+p.OS, "GOARCH="+p.Arch, "CGO_ENABLED=0", "GOFLAGS=-mod=readonly")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("source manifest: go list for %s/%s: %v: %s", p.OS, p.Arch, err, strings.TrimSpace(stderr.String()))
		}
		dec := json.NewDecoder(bytes.NewReader(out))
		for {
			var pkg goPackage
			if err := dec.Decode(&pkg); err == io.EOF {
				break
			} else if err != nil {
				return nil, fmt.Errorf("source manifest: reading go list output: %w", err)
			}
			if pkg.Error != nil {
				return nil, fmt.Errorf("source manifest: package %s: %s", pkg.ImportPath, pkg.Error.Err)
			}
			if pkg.Standard || pkg.Module == nil || !pkg.Module.Main {
				continue // the toolchain's, or a dependency pinned by go.sum
			}
			for _, list := range [][]string{pkg.GoFiles, pkg.CgoFiles, pkg.CFiles, pkg.CXXFiles, pkg.MFiles, pkg.HFiles, pkg.FFiles, pkg.SFiles, pkg.SwigFiles, pkg.SwigCXXFiles, pkg.SysoFiles, pkg.EmbedFiles} {
				for _, f := range list {
					rel, err := filepath.Rel(abs, filepath.Join(pkg.Dir, f))
					if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
						return nil, fmt.Errorf("source manifest: %s is outside the module root %s", filepath.Join(pkg.Dir, f), abs)
					}
					files[filepath.ToSlash(rel)] = true
				}
			}
		}
	}
	paths := make([]string, 0, len(files))
	for f := range files {
		paths = append(paths, f)
	}
	sort.Strings(paths)
	var b bytes.Buffer
	for _, f := range paths {
		data, err := os.ReadFile(filepath.Join(abs, filepath.FromSlash(f)))
		if err != nil {
			return nil, fmt.Errorf("source manifest: %w", err)
		}
		sum := sha256.Sum256(data)
		fmt.Fprintf(&b, "%s  %s\n", hex.EncodeToString(sum[:]), f)
	}
	return b.Bytes(), nil
}

// SHA256Hex is the hex sha256 of b.
func SHA256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// CompareCommitted judges the committed checksums file against the
// checksums of a fresh build of a tree whose source manifest is manifest.
// When the committed file lists that manifest's digest it was computed from
// this source, and the two files must be byte for byte equal (fromThisSource
// is true). Otherwise it belongs to an earlier release and only has to be
// well formed. Any error means the committed file is not a release's.
func CompareCommitted(committed, built, manifest []byte) (fromThisSource bool, err error) {
	c, err := ParseChecksums(committed)
	if err != nil {
		return false, fmt.Errorf("the committed %s: %w", CommittedPath, err)
	}
	if c.SHA256Of(ManifestName(c.Version)) != SHA256Hex(manifest) {
		return false, nil
	}
	if !bytes.Equal(committed, built) {
		return true, fmt.Errorf("the committed %s was computed from this source (v%s) but this build's checksums differ: the release workflow would refuse to publish it", CommittedPath, c.Version)
	}
	return true, nil
}

// Package release is the release plumbing: the format of the checksums file
// that is committed in the repository at release time (release/checksums.txt),
// and the source manifest that binds it to the source it was computed from.
// The tests beside it check the GoReleaser configuration, build a snapshot
// and compare it with the committed file, prove the build reproducible, and
// drive the scripts action.yml and verify/action.yml run
// (scripts/install-binary.sh) against a local file server.
//
// # Contract
//
// A release ships, for each of Binaries and each of Platforms, one static
// binary named NAME_VERSION_OS_ARCH, plus the source manifest
// deponent_VERSION_source-manifest.txt; checksums.txt lists the sha256 of
// each, one "HEX  NAME" line per file (the format of sha256sum). The same
// file, committed as release/checksums.txt in the commit that is tagged
// vVERSION, is what the action checks a downloaded binary against: never a
// checksums file fetched from beside the binary.
//
// ParseChecksums accepts exactly that: every line well formed, every name
// expected, one version, no name twice, nothing missing. Anything else is
// an error that names the line; it never returns a partial result.
//
// SourceManifest lists the files the binaries are built from — the main
// module's files that `go list -deps` reports for both commands on every
// platform (Go, assembly and embedded files), go.mod, go.sum and
// .goreleaser.yaml — each with its sha256, sorted by path. Two trees with the
// same manifest build the same binaries with the same Go toolchain (go.mod
// names it, .goreleaser.yaml pins it). The committed checksums list the
// manifest's own sha256, so a test can tell whether the committed file was
// computed from the tree it sits in (then the build must match it byte for
// byte) or belongs to an earlier release.
//
// # Not covered
//
// Reproducibility rests on the Go toolchain's: the same toolchain version,
// CGO disabled, -trimpath, no VCS stamp and no build id. Module
// dependencies are pinned by go.sum and fetched through the module proxy
// and checksum database; a compromised toolchain or proxy is out of scope.
// The checksums prove which bytes a release manager built and committed,
// not that the source is benign.
package release

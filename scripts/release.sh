#!/usr/bin/env bash
# The release steps, for the release manager and for
# .github/workflows/release.yml. The process is in docs/releasing.md.
#
#   release.sh checksums
#       (release manager, before tagging) Builds every release binary with
#       GoReleaser exactly as the tag will be built (a snapshot named as
#       vVERSION, VERSION from internal/version) and writes
#       release/checksums.txt. Commit it; then tag that commit.
#   release.sh preflight TAG
#       (release workflow) The tag is vVERSION, the changelog's newest entry
#       is VERSION, the Go toolchain is go.mod's, and release/checksums.txt
#       is committed for VERSION.
#   release.sh compare
#       (release workflow, after `goreleaser release`) dist/checksums.txt is
#       byte for byte the committed release/checksums.txt; stages every file
#       it lists in dist/release/ under its release name and checks its
#       sha256. Otherwise nothing is published.
#   release.sh publish TAG
#       (release workflow) Creates the GitHub release TAG with the binaries,
#       checksums.txt and the source manifest; the notes are the changelog's
#       entry.
#   release.sh move-major TAG
#       (release workflow) Points the major tag (v0 for v0.y.z) at TAG when
#       TAG is the newest release of that major version.
set -euo pipefail
export LC_ALL=C

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
committed=release/checksums.txt

die() {
  echo "release: $*" >&2
  exit 1
}

# version is internal/version's Version: the one version of the module.
version() {
  local v
  v="$(sed -n 's/^const Version = "\(.*\)"$/\1/p' internal/version/version.go)"
  [[ "$v" =~ ^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$ ]] ||
    die "internal/version/version.go: Version '$v' is not X.Y.Z"
  printf '%s' "$v"
}

# gover is the Go toolchain the release is built with: go.mod's toolchain
# line if it has one, else its go line.
gover() {
  local v
  v="$(sed -n 's/^toolchain go\([0-9.]*\)$/\1/p' go.mod)"
  [ -n "$v" ] || v="$(sed -n 's/^go \([0-9.]*\)$/\1/p' go.mod)"
  [ -n "$v" ] || die "go.mod names no Go version"
  printf '%s' "$v"
}

checksums() {
  goreleaser --version 2>/dev/null | grep -Eq '^GitVersion: +v2\.15\.1$' ||
    die "GoReleaser v2.15.1 is not on PATH (the release workflow builds with it): go install github.com/goreleaser/goreleaser/v2@v2.15.1"
  local v
  v="$(version)"
  # The snapshot is named exactly as the tag will be (.goreleaser.yaml:
  # snapshot.version_template), and built with go.mod's toolchain.
  GORELEASER_CURRENT_TAG="v$v" GOTOOLCHAIN="go$(gover)" goreleaser release --snapshot --clean
  # GoReleaser names a snapshot v0.0.0 when it cannot read the repository
  # (e.g. no remote): such a file would never match the tagged build.
  local line
  while IFS= read -r line; do
    [[ "$line" == *"_${v}_"* ]] || die "dist/checksums.txt names a file not of v$v: '$line' (does the repository have a remote?)"
  done <dist/checksums.txt
  mkdir -p release
  cp dist/checksums.txt "$committed.tmp"
  mv "$committed.tmp" "$committed"
  echo "wrote $committed for v$v:"
  cat "$committed"
  echo "commit it, push, and when CI is green tag that commit: git tag -s v$v -m v$v && git push origin v$v"
}

preflight() {
  local tag="$1" v want
  v="$(version)"
  [[ "$tag" =~ ^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$ ]] ||
    die "tag '$tag' is not vX.Y.Z"
  [ "$tag" = "v$v" ] || die "tag $tag, but internal/version says $v: bump the version (and the changelog) before tagging"
  grep -q "^## \[$v\]" CHANGELOG.md || die "CHANGELOG.md has no '## [$v]' entry"
  want="go$(gover)"
  [ "$(go env GOVERSION)" = "$want" ] ||
    die "go is $(go env GOVERSION), go.mod says $want: the binaries are reproducible only with the same toolchain"
  [ -f "$committed" ] || die "$committed is not committed: run scripts/release.sh checksums and commit it before tagging"
  local line n=0
  while IFS= read -r line; do
    n=$((n + 1))
    [[ "$line" =~ ^[0-9a-f]{64}\ \ [a-z-]+_${v//./\\.}_[A-Za-z0-9._-]+$ ]] ||
      die "$committed line $n is not a checksum of a v$v file: '$line'"
  done <"$committed"
  [ "$n" -eq 9 ] || die "$committed has $n lines; a release has 9 (2 binaries x 4 platforms, and the source manifest)"
  echo "preflight: $tag, changelog, $want and $committed agree"
}

compare() {
  [ -f dist/checksums.txt ] || die "dist/checksums.txt is missing: run goreleaser release first"
  if ! cmp -s dist/checksums.txt "$committed"; then
    diff -u "$committed" dist/checksums.txt || true
    die "this build's checksums differ from the committed $committed: the release is not what was committed before the tag. Nothing is published."
  fi
  # Stage the release files under their release names (GoReleaser leaves
  # each binary in its build directory) and check every one.
  local v stage=dist/release name bin plat src
  v="$(version)"
  rm -rf "$stage"
  mkdir -p "$stage"
  while read -r _ name; do
    case "$name" in
      "deponent_${v}_source-manifest.txt") src=build/source-manifest.txt ;;
      *"_${v}_"*)
        bin="${name%%_*}"
        plat="${name#*_"${v}"_}"
        src="$(find dist -mindepth 2 -maxdepth 2 -path "dist/${bin}_${plat}_*/${bin}" -type f)"
        if [ -z "$src" ] || [ "$(printf '%s\n' "$src" | wc -l)" -ne 1 ]; then
          die "no single build of $bin for $plat in dist/"
        fi
        ;;
      *) die "dist/checksums.txt lists $name, not a v$v file" ;;
    esac
    cp "$src" "$stage/$name"
  done <dist/checksums.txt
  cp dist/checksums.txt "$stage/checksums.txt"
  (cd "$stage" && sha256sum --check --strict checksums.txt) ||
    die "a release file does not match checksums.txt"
  echo "compare: the build matches $committed byte for byte; the release files are in $stage"
}

publish() {
  local tag="$1" v notes
  v="${tag#v}"
  notes="$(mktemp)"
  awk -v h="## [$v]" 'index($0, h) == 1 { on = 1; next } /^## / { if (on) exit } on' CHANGELOG.md >"$notes"
  [ -s "$notes" ] || die "CHANGELOG.md has no text under '## [$v]'"
  [ -f dist/release/checksums.txt ] || die "dist/release is not staged: run scripts/release.sh compare first"
  local assets=() f
  while IFS= read -r f; do
    assets+=("dist/release/$f")
  done < <(awk '{ print $2 }' dist/release/checksums.txt)
  assets+=(dist/release/checksums.txt)
  gh release create "$tag" --verify-tag --title "$tag" --notes-file "$notes" "${assets[@]}"
}

move_major() {
  local tag="$1" major newest
  major="${tag%%.*}"
  git fetch --quiet --force --tags origin
  newest="$(git tag --list "$major.*" | grep -E '^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$' | sort -V | tail -n 1)"
  if [ "$newest" != "$tag" ]; then
    echo "move-major: $newest is newer than $tag; $major stays where it is"
    return 0
  fi
  git tag --force "$major" "$tag^{commit}"
  git push --force origin "refs/tags/$major"
  echo "move-major: $major now points at $tag ($(git rev-parse "$tag^{commit}"))"
}

cmd="${1:-}"
case "$cmd" in
  checksums)
    [ $# -eq 1 ] || die "usage: $0 checksums"
    checksums
    ;;
  preflight | publish | move-major)
    [ $# -eq 2 ] || die "usage: $0 $cmd TAG"
    case "$cmd" in
      preflight) preflight "$2" ;;
      publish) publish "$2" ;;
      move-major) move_major "$2" ;;
    esac
    ;;
  compare)
    [ $# -eq 1 ] || die "usage: $0 compare"
    compare
    ;;
  *) die "usage: $0 checksums | preflight TAG | compare | publish TAG | move-major TAG" ;;
esac

#!/usr/bin/env bash
# How action.yml and verify/action.yml get the binary they run
# (deponent-action or deponent-verify). See scripts/README.md.
#
#   install-binary.sh resolve NAME
#       Decides how to get NAME for the action's own ref (DEPONENT_ACTION_REF,
#       from github.action_ref):
#         - a release tag, vX.Y.Z or the moving major tag vX: download the
#           release binary for this runner's platform and check its sha256
#           against release/checksums.txt COMMITTED in the action's own tree
#           (never a checksums file fetched from beside the binary). Any
#           problem — no committed file, a file for another version, no
#           binary for this platform, a failed download, a digest that
#           does not match, a binary that does not run — refuses: it never
#           falls back to a source build.
#         - anything else (a commit SHA, a branch, `uses: ./`): the binary is
#           built from the action's own source (the `build` step).
#       Step outputs: mode (release or source), path (where the binary is,
#       or will be built), version (release mode), reason (one line).
#   install-binary.sh build NAME
#       Builds NAME from the action's tree into DEPONENT_BIN (source mode).
#   install-binary.sh report NAME
#       Writes how the binary was obtained and the time from the action's
#       start (DEPONENT_T0, epoch seconds) to now — the first governed step
#       or the verification — to the log and the job summary.
#
# Environment: RUNNER_TEMP, RUNNER_OS, RUNNER_ARCH and GITHUB_OUTPUT, as the
# runner sets them. DEPONENT_RELEASE_BASE_URL replaces
# https://github.com/OWNER/REPO/releases/download (a mirror); the digest
# check is the same, so it can change where the bytes come from, never
# which bytes run.
set -euo pipefail
export LC_ALL=C

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
committed_rel="release/checksums.txt"
committed="$root/$committed_rel"

# escape makes text safe inside a workflow command's message: %, CR and LF
# become %25, %0D and %0A. (Written for the bash 3.2 of macOS, too.)
escape() {
  printf '%s' "$1" | awk 'BEGIN { ORS = "" } { gsub(/%/, "%25"); gsub(/\r/, "%0D"); if (NR > 1) printf "%%0A"; print }'
}

refuse() {
  echo "::error title=Deponent: refusing the ${name:-binary}::$(escape "$1")"
  exit 1
}

output() {
  if [ -n "${GITHUB_OUTPUT:-}" ]; then
    printf '%s=%s\n' "$1" "$2" >>"$GITHUB_OUTPUT"
  fi
}

sha256_of() {
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "$1" | awk '{print $1}'
  elif command -v shasum >/dev/null 2>&1; then
    shasum -a 256 "$1" | awk '{print $1}'
  elif command -v openssl >/dev/null 2>&1; then
    openssl dgst -sha256 -r "$1" | awk '{print $1}'
  else
    return 1
  fi
}

platform() {
  local os arch
  case "${RUNNER_OS:-$(uname -s)}" in
    Linux) os=linux ;;
    macOS | Darwin) os=darwin ;;
    *) os="unsupported:${RUNNER_OS:-$(uname -s)}" ;;
  esac
  case "${RUNNER_ARCH:-$(uname -m)}" in
    X64 | x86_64 | amd64) arch=amd64 ;;
    ARM64 | arm64 | aarch64) arch=arm64 ;;
    *) arch="unsupported:${RUNNER_ARCH:-$(uname -m)}" ;;
  esac
  printf '%s_%s' "$os" "$arch"
}

# new_bin_dir sets bin_dir to a new, empty directory under RUNNER_TEMP: a
# binary left by an earlier step is never reused.
new_bin_dir() {
  if [ -z "${RUNNER_TEMP:-}" ] || [ ! -d "$RUNNER_TEMP" ]; then
    refuse "RUNNER_TEMP is not set to a directory"
  fi
  bin_dir="$(mktemp -d "$RUNNER_TEMP/deponent-bin.XXXXXX")" || refuse "cannot create a directory under RUNNER_TEMP"
}

resolve() {
  local ref="${DEPONENT_ACTION_REF:-}" want_version="" want_major="" kind
  if [[ "$ref" =~ ^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$ ]]; then
    kind=exact
    want_version="${ref#v}"
  elif [[ "$ref" =~ ^v(0|[1-9][0-9]*)$ ]]; then
    kind=major
    want_major="${ref#v}"
  else
    local why
    if [ -z "$ref" ]; then
      why="the action has no ref (a local action, uses: ./)"
    else
      why="the action ref '$ref' is not a release tag (vX.Y.Z or vX)"
    fi
    new_bin_dir
    echo "$why: $name is built from the action's own source"
    output mode source
    output path "$bin_dir/$name"
    output reason "$why"
    return 0
  fi

  # A release ref: the prebuilt binary, checked against the committed file,
  # or nothing.
  if [ ! -f "$committed" ] || [ -L "$committed" ]; then
    refuse "the action ref '$ref' is a release tag, but the action's tree has no $committed_rel: nothing to check a download against, so nothing is downloaded. Tags vX.Y.Z and vX are made by the release process (docs/releasing.md); to build from source, use the action at a commit SHA."
  fi

  local line re='^([0-9a-f]{64})  ([A-Za-z0-9._+-]+)$' n=0 version="" want_sum="" v sum file
  local plat asset seen=$'\n'
  plat="$(platform)"
  while IFS= read -r line || { [ -n "$line" ] && refuse "$committed_rel: the last line has no newline (cut short?)"; }; do
    n=$((n + 1))
    [[ "$line" =~ $re ]] || refuse "$committed_rel line $n is not '<sha256>  <file>': the committed checksums are malformed"
    sum="${BASH_REMATCH[1]}"
    file="${BASH_REMATCH[2]}"
    case "$seen" in
      *$'\n'"$file"$'\n'*) refuse "$committed_rel lists $file twice" ;;
    esac
    seen="$seen$file"$'\n'
    [[ "$file" =~ ^[a-z-]+_([0-9]+\.[0-9]+\.[0-9]+)_ ]] || refuse "$committed_rel line $n: $file names no version"
    v="${BASH_REMATCH[1]}"
    if [ -z "$version" ]; then
      version="$v"
    elif [ "$v" != "$version" ]; then
      refuse "$committed_rel mixes versions $version and $v"
    fi
    if [ "$file" = "${name}_${v}_${plat}" ]; then
      want_sum="$sum"
    fi
  done <"$committed"
  [ "$n" -gt 0 ] || refuse "$committed_rel is empty"

  case "$kind" in
    exact)
      [ "$version" = "$want_version" ] ||
        refuse "the action ref is '$ref' but its $committed_rel is for version $version: the tag and the committed checksums disagree, so the download cannot be checked. (If you call this action from your own composite action, the runner may report your action's ref instead; use ours at a commit SHA.)"
      ;;
    major)
      [ "${version%%.*}" = "$want_major" ] ||
        refuse "the action ref is '$ref' but its $committed_rel is for version $version, not a v$want_major.x.y release"
      ;;
  esac
  asset="${name}_${version}_${plat}"
  if [[ "$plat" == *unsupported* ]] || [ -z "$want_sum" ]; then
    refuse "release v$version has no $name for this runner ($plat): releases ship linux and darwin, amd64 and arm64. Use a Linux or macOS runner, or the action at a commit SHA to build from source."
  fi

  command -v curl >/dev/null 2>&1 || refuse "curl is needed to download $asset"
  local base url proto='=https' dir part have repo
  if [ -n "${DEPONENT_RELEASE_BASE_URL:-}" ]; then
    base="${DEPONENT_RELEASE_BASE_URL%/}"
    proto='=https,http'
  else
    # OWNER/REPO from go.mod's module path.
    repo="$(sed -n 's|^module github\.com/\([A-Za-z0-9_.-]*/[A-Za-z0-9_.-]*\)$|\1|p' "$root/go.mod")"
    [ -n "$repo" ] || refuse "cannot read the repository from the module path in go.mod"
    base="https://github.com/$repo/releases/download"
  fi
  url="$base/v$version/$asset"
  new_bin_dir
  dir="$bin_dir"
  part="$dir/.download"
  echo "downloading $url"
  if ! curl --fail --silent --show-error --location --proto "$proto" --proto-redir "$proto" \
    --retry 3 --retry-delay 2 --connect-timeout 20 --max-time 300 --max-filesize 268435456 \
    --output "$part" "$url"; then
    rm -rf "$dir"
    refuse "downloading $url failed; the action ref '$ref' is a release, so it does not fall back to a source build. Re-run the job, or use the action at a commit SHA to build from source."
  fi
  have="$(sha256_of "$part")" || {
    rm -rf "$dir"
    refuse "no sha256 tool (sha256sum, shasum or openssl) to check $asset"
  }
  if [ "$have" != "$want_sum" ]; then
    rm -rf "$dir"
    refuse "$asset from $url has sha256 $have, but the action's committed $committed_rel says $want_sum: the download is not the released binary. Nothing was run."
  fi
  mv "$part" "$dir/$name"
  chmod 0755 "$dir/$name"
  local said
  if ! said="$("$dir/$name" --version 2>&1)" || [ "$said" != "$name $version" ]; then
    rm -rf "$dir"
    refuse "$asset matches its committed sha256 but does not run as '$name $version' here (it said: $said)"
  fi
  echo "$asset: sha256 $have matches $committed_rel committed at the action ref '$ref'"
  output mode release
  output path "$dir/$name"
  output version "$version"
  output reason "prebuilt $asset, sha256 checked against $committed_rel at '$ref'"
}

build() {
  local out="${DEPONENT_BIN:-}"
  [ -n "$out" ] || refuse "DEPONENT_BIN is not set (the resolve step's path output)"
  command -v go >/dev/null 2>&1 || refuse "go is not on PATH: the source build needs actions/setup-go first"
  (cd "$root" && CGO_ENABLED=0 GOFLAGS=-mod=readonly go build -trimpath -buildvcs=false -o "$out" "./cmd/$name")
  local said
  said="$("$out" --version 2>&1)" || refuse "the $name just built does not run: $said"
  [[ "$said" == "$name "* ]] || refuse "the $name just built says '$said' to --version"
  echo "built $said from source"
}

report() {
  local t0="${DEPONENT_T0:-}" now elapsed mode="${DEPONENT_MODE:-}" what line
  now="$(date +%s)"
  if [[ "$t0" =~ ^[0-9]+$ ]] && [ "$t0" -le "$now" ]; then
    elapsed="$((now - t0)) s"
  else
    elapsed="unknown (no start time)"
  fi
  if [ "$name" = deponent-action ]; then
    what="the first governed step"
  else
    what="the verification"
  fi
  case "$mode" in
    release) line="prebuilt \`$name\` ${DEPONENT_VERSION:-}, sha256 checked against the committed \`$committed_rel\`" ;;
    source) line="\`$name\` built from source: ${DEPONENT_REASON:-}" ;;
    *) refuse "report: unknown mode '$mode'" ;;
  esac
  line="Deponent setup: $line. Time from the action's start to $what: $elapsed."
  echo "$line"
  if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
    printf '%s\n\n' "$line" >>"$GITHUB_STEP_SUMMARY"
  fi
}

[ $# -eq 2 ] || {
  echo "usage: $0 resolve|build|report deponent-action|deponent-verify" >&2
  exit 2
}
name="$2"
case "$name" in
  deponent-action | deponent-verify) ;;
  *)
    echo "unknown binary '$name'" >&2
    exit 2
    ;;
esac
case "$1" in
  resolve) resolve ;;
  build) build ;;
  report) report ;;
  *)
    echo "unknown command '$1'" >&2
    exit 2
    ;;
esac

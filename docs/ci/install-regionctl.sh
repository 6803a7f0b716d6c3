#!/usr/bin/env bash
# Installs regionctl $REGIONCTL_VERSION from $REGIONCTL_BASE_URL into the
# directory $1 (default /usr/local/bin). The release's SHA256SUMS is trusted
# only when its own sha256 is $REGIONCTL_SHA256SUMS_SHA256, pinned in the
# recipe beside the version (the release notes give it): a checksum file
# fetched from the server that serves the archive proves nothing by itself.
# The archive is then checked against it, and only a regular file named
# regionctl is installed. The GitHub action and the GitLab template of
# docs/ci both run it.
set -euo pipefail
version="${REGIONCTL_VERSION:?}"
base="${REGIONCTL_BASE_URL:?}"
pinned="${REGIONCTL_SHA256SUMS_SHA256:?pin the sha256 of the release SHA256SUMS (its release notes give it)}"
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]] || { echo "REGIONCTL_VERSION: want 1.2.3, not $version" >&2; exit 1; }
[[ "$base" == https://* ]] || { echo "REGIONCTL_BASE_URL: want https://..." >&2; exit 1; }
[[ "$pinned" =~ ^[0-9a-f]{64}$ ]] || { echo "REGIONCTL_SHA256SUMS_SHA256: want 64 lower-case hex digits" >&2; exit 1; }
bindir="${1:-/usr/local/bin}"
case "$(uname -s)/$(uname -m)" in
  Linux/x86_64) platform=linux_amd64 ;;
  Linux/aarch64 | Linux/arm64) platform=linux_arm64 ;;
  Darwin/x86_64) platform=darwin_amd64 ;;
  Darwin/arm64) platform=darwin_arm64 ;;
  *) echo "no regionctl release for $(uname -s)/$(uname -m)" >&2; exit 1 ;;
esac
sha256() { if command -v sha256sum >/dev/null; then sha256sum "$@"; else shasum -a 256 "$@"; fi; }
archive="regionctl_${version}_${platform}.tar.gz"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
curl -fsSL --proto '=https' -o "$dir/SHA256SUMS" "$base/v$version/SHA256SUMS"
got="$(sha256 "$dir/SHA256SUMS" | cut -d' ' -f1)"
[[ "$got" == "$pinned" ]] || { echo "SHA256SUMS of $version is sha256 $got, not the pinned $pinned: refusing it" >&2; exit 1; }
curl -fsSL --proto '=https' -o "$dir/$archive" "$base/v$version/$archive"
(cd "$dir" && grep -F "  $archive" SHA256SUMS | sha256 -c -)
mkdir "$dir/x"
tar -xzf "$dir/$archive" -C "$dir/x" --no-same-owner regionctl
[[ -f "$dir/x/regionctl" && ! -L "$dir/x/regionctl" ]] || { echo "$archive: regionctl is not a regular file" >&2; exit 1; }
mkdir -p "$bindir"
install -m 0755 "$dir/x/regionctl" "$bindir/regionctl"
"$bindir/regionctl" version

#!/usr/bin/env bash
# Installs regionctl $REGIONCTL_VERSION from $REGIONCTL_BASE_URL into the
# directory $1 (default /usr/local/bin) after checking the archive against
# the release's SHA256SUMS. The GitHub action and the GitLab template of
# docs/ci both run it.
set -euo pipefail
version="${REGIONCTL_VERSION:?}"
base="${REGIONCTL_BASE_URL:?}"
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]] || { echo "REGIONCTL_VERSION: want 1.2.3, not $version" >&2; exit 1; }
[[ "$base" == https://* ]] || { echo "REGIONCTL_BASE_URL: want https://..." >&2; exit 1; }
bindir="${1:-/usr/local/bin}"
case "$(uname -s)/$(uname -m)" in
  Linux/x86_64) platform=linux_amd64 ;;
  Linux/aarch64 | Linux/arm64) platform=linux_arm64 ;;
  Darwin/x86_64) platform=darwin_amd64 ;;
  Darwin/arm64) platform=darwin_arm64 ;;
  *) echo "no regionctl release for $(uname -s)/$(uname -m)" >&2; exit 1 ;;
esac
archive="regionctl_${version}_${platform}.tar.gz"
dir="$(mktemp -d)"
curl -fsSL --proto '=https' -o "$dir/$archive" "$base/v$version/$archive"
curl -fsSL --proto '=https' -o "$dir/SHA256SUMS" "$base/v$version/SHA256SUMS"
(cd "$dir" && grep -F "  $archive" SHA256SUMS | sha256sum -c -)
mkdir -p "$bindir"
tar -xzf "$dir/$archive" -C "$bindir" regionctl
rm -rf "$dir"
"$bindir/regionctl" version

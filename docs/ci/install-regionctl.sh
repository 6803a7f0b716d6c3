#!/usr/bin/env bash
# Installs regionctl $REGIONCTL_VERSION from $REGIONCTL_BASE_URL into the
# directory $1 (default /usr/local/bin). A checksum file fetched from the
# server that serves the archive proves nothing by itself, so the release's
# SHA256SUMS is trusted only when
#   - its signature (SHA256SUMS.sig, `ssh-keygen -Y verify`) is by the key
#     of $REGIONCTL_ALLOWED_SIGNERS, an allowed_signers line pinned in the
#     recipe once for every release (make dist -sign-key prints it), and/or
#   - its own sha256 is $REGIONCTL_SHA256SUMS_SHA256, pinned beside the
#     version (the release notes give it).
# At least one is required; each one given must hold. The archive is then
# checked against it, and only a regular file named regionctl is installed.
# The GitHub action and the GitLab template of docs/ci both run it.
set -euo pipefail
version="${REGIONCTL_VERSION:?}"
base="${REGIONCTL_BASE_URL:?}"
pinned="${REGIONCTL_SHA256SUMS_SHA256:-}"
signers="${REGIONCTL_ALLOWED_SIGNERS:-}"
[[ -n "$pinned$signers" ]] || { echo "pin the release: REGIONCTL_ALLOWED_SIGNERS (the release key's allowed_signers line) or REGIONCTL_SHA256SUMS_SHA256 (its release notes give it)" >&2; exit 1; }
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]] || { echo "REGIONCTL_VERSION: want 1.2.3, not $version" >&2; exit 1; }
[[ "$base" == https://* ]] || { echo "REGIONCTL_BASE_URL: want https://..." >&2; exit 1; }
[[ -z "$pinned" || "$pinned" =~ ^[0-9a-f]{64}$ ]] || { echo "REGIONCTL_SHA256SUMS_SHA256: want 64 lower-case hex digits" >&2; exit 1; }
[[ -z "$signers" || "$signers" =~ ^releases@regionctl\.dev\ namespaces=\"regionctl-release\"\ ssh-[a-z0-9-]+\ [A-Za-z0-9+/=]+( .*)?$ ]] || { echo "REGIONCTL_ALLOWED_SIGNERS: want one allowed_signers line: releases@regionctl.dev namespaces=\"regionctl-release\" ssh-ed25519 AAAA..." >&2; exit 1; }
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
if [[ -n "$signers" ]]; then
	command -v ssh-keygen >/dev/null || { echo "REGIONCTL_ALLOWED_SIGNERS needs ssh-keygen (OpenSSH 8.1 or later) on the runner" >&2; exit 1; }
	curl -fsSL --proto '=https' -o "$dir/SHA256SUMS.sig" "$base/v$version/SHA256SUMS.sig"
	printf '%s\n' "$signers" >"$dir/allowed_signers"
	ssh-keygen -Y verify -f "$dir/allowed_signers" -I releases@regionctl.dev -n regionctl-release -s "$dir/SHA256SUMS.sig" <"$dir/SHA256SUMS" >/dev/null ||
		{ echo "SHA256SUMS of $version is not signed by the pinned release key: refusing it" >&2; exit 1; }
fi
if [[ -n "$pinned" ]]; then
	got="$(sha256 "$dir/SHA256SUMS" | cut -d' ' -f1)"
	[[ "$got" == "$pinned" ]] || { echo "SHA256SUMS of $version is sha256 $got, not the pinned $pinned: refusing it" >&2; exit 1; }
fi
curl -fsSL --proto '=https' -o "$dir/$archive" "$base/v$version/$archive"
(cd "$dir" && grep -F "  $archive" SHA256SUMS | sha256 -c -)
mkdir "$dir/x"
tar -xzf "$dir/$archive" -C "$dir/x" --no-same-owner regionctl
[[ -f "$dir/x/regionctl" && ! -L "$dir/x/regionctl" ]] || { echo "$archive: regionctl is not a regular file" >&2; exit 1; }
mkdir -p "$bindir"
install -m 0755 "$dir/x/regionctl" "$bindir/regionctl"
"$bindir/regionctl" version

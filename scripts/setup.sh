#!/usr/bin/env bash
# Installs the build and test dependencies from Debian (as root, or with sudo) and configures
# the build directory `build/`. Safe to run again. golang-go (go tool pprof) and chromium (headless)
# are for the tests of hprof-convert. With --jdks, also JDK 21 and 25 from Debian trixie
# (scripts/trixie-jdks.sh) for the tests to run on; without them their cases are skipped.
set -euo pipefail
jdks=n
case "${1:-}" in
  --jdks) jdks=y ;;
  '') ;;
  *) echo "usage: $0 [--jdks]" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/.."
pkgs=(meson ninja-build gcc pkg-config check zlib1g-dev openjdk-17-jdk-headless junit5 visualvm python3 golang-go chromium libh2-java)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
# Before meson: it looks for the JDKs when it configures. Unreachable archive: one line, go on.
if [ "$jdks" = y ]; then
  ./scripts/trixie-jdks.sh || true
fi
if [ -d build ]; then
  meson setup --reconfigure build >/dev/null
else
  meson setup build >/dev/null
fi
ninja -C build

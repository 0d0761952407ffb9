#!/usr/bin/env bash
# Runs every suite: the Check unit tests (under ASan and UBSan) and the Java tests on real JVMs.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d build ] || ./scripts/setup.sh
ninja -C build
meson test -C build --print-errorlogs --num-processes 1 --verbose "$@"

#!/usr/bin/env bash
# Runs a libFuzzer binary for a bounded number of inputs (arguments: the binary, then its
# flags) and prints a SUITE line for .ci/run's totals. Exit status: the fuzzer's.
set -uo pipefail
bin=$1
shift
name=$(basename "$bin")
corpus=$(mktemp -d)
trap 'rm -rf "$corpus"' EXIT
"$bin" "$@" "$corpus" 2>&1 | tail -n 30
status=${PIPESTATUS[0]}
if [ "$status" -eq 0 ]; then
  echo "SUITE $name: 1 passed, 0 failed"
else
  echo "SUITE $name: 0 passed, 1 failed"
fi
exit "$status"

#!/usr/bin/env bash
# hprof-convert bench (not a timed test): a synthetic profile of 1,000,000 CPU samples over
# 100,000 traces (gen_profile.py) converted to each format, 5 runs each, then the HTML loaded
# in headless chromium 5 times. Prints wall and CPU time per run and the medians.
# usage: bench/convert/run.sh [BUILD_DIR]   (default build/)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
conv="$build/tools/hprof-convert"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 "$root/bench/convert/gen_profile.py" "$work/big.hprof"
echo "input: $(stat -c %s "$work/big.hprof") bytes, $("$conv" "$work/big.hprof" | wc -l) stacks"
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for t in collapsed html pprof; do
  : >"$work/times"
  for i in 1 2 3 4 5; do
    /usr/bin/time -f "%e %U %S" -o "$work/t" "$conv" -t "$t" -o "$work/big.$t" "$work/big.hprof"
    read -r wall user sys <"$work/t"
    echo "$t run $i: wall $wall s, CPU $(echo "$user + $sys" | bc) s"
    echo "$wall $(echo "$user + $sys" | bc)" >>"$work/times"
  done
  echo "$t: median wall $(cut -d' ' -f1 "$work/times" | median) s, median CPU $(cut -d' ' -f2 "$work/times" | median) s, output $(stat -c %s "$work/big.$t") bytes"
done
chromium=$(command -v chromium || command -v chromium-browser || true)
[ -n "$chromium" ] || { echo "chromium: skipped (not installed)"; exit 0; }
: >"$work/times"
for i in 1 2 3 4 5; do
  start=$(date +%s.%N)
  status=$("$chromium" --headless --no-sandbox --disable-gpu --user-data-dir="$work/chr" \
    --virtual-time-budget=10000 --dump-dom "file://$work/big.html" 2>/dev/null |
    grep -o '<div id="status"[^>]*>')
  wall=$(echo "$(date +%s.%N) - $start" | bc)
  page=$(echo "$status" | sed -n 's/.*data-page-ms="\([0-9.]*\)".*/\1/p')
  script=$(echo "$status" | sed -n 's/.*data-ms="\([0-9.]*\)".*/\1/p')
  nodes=$(echo "$status" | sed -n 's/.*data-nodes="\([0-9]*\)".*/\1/p')
  echo "html in chromium run $i: page rendered $page ms after navigation (script $script ms, $nodes nodes); chromium process wall $wall s"
  echo "$page $script" >>"$work/times"
done
echo "chromium: median page render $(cut -d' ' -f1 "$work/times" | median) ms, median script $(cut -d' ' -f2 "$work/times" | median) ms"

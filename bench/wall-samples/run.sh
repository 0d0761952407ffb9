#!/usr/bin/env bash
# wall=y's cost (issue 29): WallIdle with IDLE waiting threads and BUSY computing threads, no
# agent against wall=y at its default interval (and JFR's profile settings, which record
# thread parks and monitor waits above 10-20 ms, for comparison). Runs interleaved; prints the
# median process CPU per thousand busy-loop iterations per configuration and the ratio to no
# agent, and the sampler's own figures (its verbose line) of the last wall=y run.
#
#   bench/wall-samples/run.sh <libhprof.so> [java] [runs] [millis] [idle] [busy]
#
# WALL_LIBS="name=/path/libhprof.so ..." adds wall=y runs of other builds of the agent to the
# same interleaving (configuration wall-<name>), e.g. the build before a change, or one patched
# to take no stack at all, to measure what a tick costs by itself.
set -euo pipefail
lib=${1:?usage: $0 <libhprof.so> [java] [runs] [millis] [idle] [busy]}
java=${2:-java}
runs=${3:-5}
millis=${4:-5000}
idle=${5:-1000}
busy=${6:-8}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$(dirname "$(readlink -f "$(command -v "$java")")")/javac" --release 17 -d "$work" "$here/WallIdle.java"

configs=(none wall jfr-profile)
declare -A libs=()
for spec in ${WALL_LIBS:-}; do
  libs[${spec%%=*}]=${spec#*=}
  configs+=("wall-${spec%%=*}")
done
args_of() {
  case $1 in
    none) ;;
    wall) echo "-agentpath:$lib=wall=y,file=$work/out.txt" ;;
    wall-*) echo "-agentpath:${libs[${1#wall-}]}=wall=y,file=$work/out.txt" ;;
    jfr-profile) echo "-XX:StartFlightRecording=settings=profile,filename=$work/rec.jfr" ;;
  esac
}
declare -A results=()
for ((r = 0; r < runs; r++)); do
  for c in "${configs[@]}"; do
    # shellcheck disable=SC2046
    out=$("$java" -Xss256k $(args_of "$c") -cp "$work" WallIdle "$idle" "$busy" "$millis" 2>"$work/err")
    v=$(sed -n 's/.*cpu-ns-per-kiter \([0-9.]*\).*/\1/p' <<<"$out")
    results[$c]+="$v "
    [ "${c%%-*}" = wall ] && grep 'wall=y:' "$work/err" >"$work/line-$c" || true
    rm -f "$work/out.txt" "$work/rec.jfr"
  done
done
median() { tr ' ' '\n' <<<"$1" | grep . | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
base=$(median "${results[none]}")
echo "idle=$idle busy=$busy millis=$millis runs=$runs load: $(cut -d' ' -f1-3 /proc/loadavg)"
for c in "${configs[@]}"; do
  m=$(median "${results[$c]}")
  printf '%-12s median cpu-ns-per-kiter %8s  ratio %s   runs: %s\n' "$c" "$m" \
    "$(awk -v a="$m" -v b="$base" 'BEGIN {printf "%.3f", a / b}')" "${results[$c]}"
done
for c in "${configs[@]}"; do
  [ -f "$work/line-$c" ] && sed "s/^/$c: /" "$work/line-$c" || true
done

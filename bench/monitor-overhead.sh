#!/usr/bin/env bash
# monitor=y overhead on bench/workloads/LockHeavy.java, against no agent and against JFR
# recording every contended monitor entry (bench/jfr/monitor-enter.jfc: jdk.JavaMonitorEnter
# and jdk.JavaMonitorWait, threshold 0 ms) and JFR's settings=profile (JavaMonitorEnter
# threshold 10 ms). Prints the median ops/ms of RUNS runs per mode and configuration, runs
# interleaved so machine load drifts hit every configuration alike.
#
#   bench/monitor-overhead.sh <libhprof.so> [java] [runs] [millis]
set -euo pipefail
lib=${1:?usage: $0 <libhprof.so> [java] [runs] [millis]}
java=${2:-java}
runs=${3:-5}
millis=${4:-3000}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$(dirname "$(readlink -f "$(command -v "$java")")")/javac" --release 17 -d "$work" "$here/workloads/LockHeavy.java"

configs=(none hprof jfr-enter0 jfr-profile)
args_of() {
  case $1 in
    none) ;;
    hprof) echo "-agentpath:$lib=monitor=y,verbose=n,file=$work/out.txt" ;;
    jfr-enter0) echo "-XX:StartFlightRecording=settings=$here/jfr/monitor-enter.jfc,filename=$work/rec.jfr" ;;
    jfr-profile) echo "-XX:StartFlightRecording=settings=profile,filename=$work/rec.jfr" ;;
  esac
}

for mode in "enter 4" "yield 4" "wait 1"; do
  declare -A results=()
  for ((r = 0; r < runs; r++)); do
    for c in "${configs[@]}"; do
      # shellcheck disable=SC2046
      line=$("$java" $(args_of "$c") -cp "$work" LockHeavy $mode "$millis" 2>/dev/null | grep '^mode=')
      results[$c]+="${line##*ops_per_ms=} "
      rm -f "$work/out.txt" "$work/rec.jfr"
    done
  done
  for c in "${configs[@]}"; do
    median=$(tr ' ' '\n' <<<"${results[$c]}" | grep . | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
    printf '%-6s %-12s median ops/ms %10s   runs: %s\n' "${mode%% *}" "$c" "$median" "${results[$c]}"
  done
  unset results
done

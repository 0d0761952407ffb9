#!/usr/bin/env bash
# The VM's own cost of what the async cpu=samples sampler needs before it samples anything
# (floor_samples_agent.c: CompiledMethodLoad on, so DebugNonSafepoints; ClassLoad on and
# jmethodIDs at ClassPrepare, for AsyncGetCallTrace), against no agent and cpu=samples itself,
# on the bench's javac workload (JavacMany, 200 files in-process). Runs are interleaved; prints
# the median CPU seconds (user + system) of each configuration over RUNS runs, every run's value
# and the ratio to no agent.
#
#   bench/cpu-samples/floor.sh <libhprof.so> [java] [runs]
set -euo pipefail
lib=$(readlink -f "${1:?usage: $0 <libhprof.so> [java] [runs]}")
java=${2:-java}
runs=${3:-7}
here=$(cd "$(dirname "$0")" && pwd)
jhome=$(dirname "$(dirname "$(readlink -f "$(command -v "$java")")")")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$jhome/bin/javac" -nowarn -d "$work/classes" "$here/../workloads/JavacMany.java" \
  "$here/../workloads/GenSources.java"
cc -O2 -shared -fPIC -I"$jhome/include" -I"$jhome/include/linux" -o "$work/libfloor.so" \
  "$here/floor_samples_agent.c"
configs="none cml ids cml+ids samples-10ms samples-1000ms"
declare -A cpu=()
for ((r = 0; r < runs; r++)); do
  for c in $configs; do
    case $c in
      none) args=() ;;
      cml | ids | cml+ids) args=("-agentpath:$work/libfloor.so=${c//+/,}") ;;
      samples-10ms) args=("-agentpath:$lib=cpu=samples,interval=10,file=$work/out.txt") ;;
      samples-1000ms) args=("-agentpath:$lib=cpu=samples,interval=1000,file=$work/out.txt") ;;
    esac
    rm -rf "$work/javac"
    /usr/bin/time -o "$work/time" -f "%U %S" "$java" "${args[@]}" -cp "$work/classes" \
      JavacMany 200 "$work/javac" >/dev/null 2>&1
    cpu[$c]+="$(awk '{print $1 + $2}' "$work/time") "
  done
done
median() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
base=$(median <<<"${cpu[none]}")
echo "javac (JavacMany 200), CPU seconds, median of $runs interleaved runs ($java)"
for c in $configs; do
  m=$(median <<<"${cpu[$c]}")
  printf '%-15s %7.2f s  x%.3f   runs: %s\n' "$c" "$m" "$(awk -v a="$m" -v b="$base" 'BEGIN {print a / b}')" "${cpu[$c]}"
done

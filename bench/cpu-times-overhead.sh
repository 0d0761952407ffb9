#!/usr/bin/env bash
# cpu=times overhead on javac, against no agent: the median wall time and the median user+sys CPU
# time of RUNS runs per configuration (interleaved, so drifting machine load hits both alike).
#
# Workloads:
#   gen    javac --release 17 on FILES generated sources (bench/workloads/gen_sources.py: classes
#          with generics, lambdas, records, switches, exceptions), on the JDK given;
#   http   javac on the sources of the JDK's own java.net.http module (147 files, from the JDK's
#          lib/src.zip; skipped when the JDK has none), compiled for that JDK.
#
#   bench/cpu-times-overhead.sh <libhprof.so> [java_home] [runs] [files] [options]
#   e.g. bench/cpu-times-overhead.sh build/agent/libhprof.so /usr/lib/jvm/temurin-25-jdk-amd64 3
#
# options: the agent options to measure (default cpu=times).
set -euo pipefail
lib=$(readlink -f "${1:?usage: $0 <libhprof.so> [java_home] [runs] [files] [options]}")
home=${2:-$(dirname "$(dirname "$(readlink -f "$(command -v javac)")")")}
runs=${3:-3}
files=${4:-300}
opts=${5:-cpu=times}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

python3 "$here/workloads/gen_sources.py" "$work/gen" "$files"
find "$work/gen" -name '*.java' | sort >"$work/gen.list"
workloads=(gen)
if [ -f "$home/lib/src.zip" ] && unzip -q "$home/lib/src.zip" 'java.net.http/*' -d "$work/src" 2>/dev/null; then
  workloads+=(http)
fi

# One javac run; prints "<wall s> <cpu s>".
run() {
  local workload=$1 agent=$2
  rm -rf "$work/out"
  local args=()
  [ "$agent" = none ] || args+=("-J-agentpath:$lib=$opts,verbose=n,file=$work/prof.txt")
  case $workload in
    gen) args+=(--release 17 -d "$work/out" "@$work/gen.list") ;;
    http) args+=(-d "$work/out" --module-source-path "$work/src" --module java.net.http) ;;
  esac
  /usr/bin/time -f '%e %U %S' -o "$work/time" "$home/bin/javac" "${args[@]}" >/dev/null 2>"$work/err" ||
    { cat "$work/err" >&2; exit 1; }
  awk '{printf "%s %.2f\n", $1, $2 + $3}' "$work/time"
}

median() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

echo "JDK: $("$home/bin/java" -version 2>&1 | head -1); options: $opts; $(nproc) CPUs; load: $(cut -d' ' -f1-3 /proc/loadavg)"
for w in "${workloads[@]}"; do
  declare -A wall=() cpu=()
  for ((r = 0; r < runs; r++)); do
    for c in none agent; do
      read -r e u < <(run "$w" "$c")
      wall[$c]+="$e "
      cpu[$c]+="$u "
    done
  done
  wn=$(median <<<"${wall[none]}") wa=$(median <<<"${wall[agent]}")
  cn=$(median <<<"${cpu[none]}") ca=$(median <<<"${cpu[agent]}")
  printf '%-5s wall: none %6.2f s  agent %6.2f s  x%.2f    cpu: none %6.2f s  agent %6.2f s  x%.2f\n' \
    "$w" "$wn" "$wa" "$(echo "$wa / $wn" | bc -l)" "$cn" "$ca" "$(echo "$ca / $cn" | bc -l)"
  printf '      runs wall none: %s agent: %s; cpu none: %s agent: %s\n' \
    "${wall[none]}" "${wall[agent]}" "${cpu[none]}" "${cpu[agent]}"
  unset wall cpu
done

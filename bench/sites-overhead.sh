#!/usr/bin/env bash
# heap=sites overhead: the allocation-dense AllocBench, an H2 database workload (H2Bench on
# Debian's /usr/share/java/h2.jar) and javac compiling 200 generated files (GenSources), each
# with no agent, JFR (settings=profile), heap=sites exact, heap=sites sampled
# (sites_interval=512 KiB) and the naive agent (naive_alloc_agent.c: GetStackTrace + SetTag +
# ObjectFree on every allocation). Prints per workload and configuration the median of RUNS
# runs of CPU seconds (user + sys of the whole process), wall seconds and peak RSS, and the
# CPU ratio to no agent. Runs are interleaved so machine load drifts hit every configuration.
#
#   bench/sites-overhead.sh <libhprof.so> [java] [runs] [workloads] [configs]
#   e.g. bench/sites-overhead.sh build/agent/libhprof.so java 3 "alloc h2 javac"
set -euo pipefail
lib=$(readlink -f "${1:?usage: $0 <libhprof.so> [java] [runs] [workloads] [configs]}")
java=${2:-java}
runs=${3:-3}
workloads=${4:-alloc h2 javac}
configs=${5:-none jfr exact sampled naive}
here=$(cd "$(dirname "$0")" && pwd)
jhome=$(dirname "$(dirname "$(readlink -f "$(command -v "$java")")")")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$jhome/bin/javac" --release 17 -d "$work/classes" -cp /usr/share/java/h2.jar \
  "$here/workloads/AllocBench.java" "$here/workloads/H2Bench.java" "$here/workloads/GenSources.java"
cc -O2 -shared -fPIC -I"$jhome/include" -I"$jhome/include/linux" \
  -o "$work/libnaive.so" "$here/naive_alloc_agent.c"
"$jhome/bin/java" -cp "$work/classes" GenSources "$work/src" 200
(cd "$work/src" && find gen -name '*.java' | sort > files.txt)

args_of() {
  case $1 in
    none) ;;
    jfr) echo "-XX:StartFlightRecording=settings=profile,filename=$work/rec.jfr" ;;
    exact) echo "-agentpath:$lib=heap=sites,verbose=n,file=$work/out.txt" ;;
    sampled) echo "-agentpath:$lib=heap=sites,sites_interval=524288,verbose=n,file=$work/out.txt" ;;
    naive) echo "-agentpath:$work/libnaive.so" ;;
  esac
}

run_one() { # workload config -> "cpu wall rss_mb"
  local w=$1 c=$2
  # shellcheck disable=SC2046
  case $w in
    alloc) cmd=("$java" $(args_of "$c") -cp "$work/classes" AllocBench 2000000) ;;
    h2) cmd=("$java" $(args_of "$c") -cp "$work/classes:/usr/share/java/h2.jar" H2Bench 1) ;;
    javac) rm -rf "$work/out" && mkdir -p "$work/out"
      cmd=("$java" $(args_of "$c") -m jdk.compiler/com.sun.tools.javac.Main -d "$work/out"
           -sourcepath "$work/src" "@$work/src/files.txt") ;;
  esac
  (cd "$work/src" && /usr/bin/time -f '%U %S %e %M' -o "$work/time.txt" "${cmd[@]}" >/dev/null 2>"$work/err.txt") \
    || { echo "failed: $w $c" >&2; tail -5 "$work/err.txt" >&2; }
  rm -f "$work/out.txt" "$work/rec.jfr"
  awk '{printf "%.2f %.2f %d\n", $1 + $2, $3, $4 / 1024}' "$work/time.txt"
}

median() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

for w in $workloads; do
  declare -A cpu=() wall=() rss=()
  for ((r = 0; r < runs; r++)); do
    for c in $configs; do
      read -r c1 w1 m1 < <(run_one "$w" "$c")
      cpu[$c]+="$c1 "; wall[$c]+="$w1 "; rss[$c]+="$m1 "
    done
  done
  base=$(median <<<"${cpu[none]:-1}")
  for c in $configs; do
    mc=$(median <<<"${cpu[$c]}")
    printf '%-6s %-8s cpu %8.2f s (x%5.2f)  wall %8.2f s  rss %6d MB   cpu runs: %s\n' "$w" "$c" \
      "$mc" "$(awk -v a="$mc" -v b="$base" 'BEGIN {print a / b}')" \
      "$(median <<<"${wall[$c]}")" "$(median <<<"${rss[$c]}")" "${cpu[$c]}"
  done
  unset cpu wall rss
done

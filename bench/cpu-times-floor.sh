#!/usr/bin/env bash
# What cpu=times costs before it counts anything: the floor of instrumenting every method.
#
# Runs the bench's javac workload (bench/workloads/JavacMany.java: javac in-process compiling
# FILES generated sources) with no agent and with cpu=times under each diagnostic probe of
# HPROF_CPU_TIMES_PROBE (doc/cpu-times.md, "The floor"), interleaved, RUNS rounds, and prints
# the median wall and user+sys CPU time of each with its ratio to no agent:
#
#   java-empty   every method rewritten, probes are empty Java methods (the JIT drops them)
#   java-store   Java probes that store the event into one shared ring: no clock, no thread
#                lookup, no counting (the least a tracker in Java must do per event)
#   java-buffer  Java probes that store the event into the current thread's own buffer (found
#                through the thread's identity hash): no clock, no counting
#   java-clock   Java probes that only read System.nanoTime() (the cheapest clock Java has)
#   noop         the real native probes (two JNI calls per call) that return at once
#   clock        the native probes reading the TSC and logging it thread-locally, no counting
#   count        cpu=times as shipped: every call counted and timed
#
#   bench/cpu-times-floor.sh <libhprof.so> [java_home] [runs] [files] [probes]
#   e.g. bench/cpu-times-floor.sh build/agent/libhprof.so /usr/lib/jvm/temurin-25-jdk-amd64 3
set -euo pipefail
lib=$(readlink -f "${1:?usage: $0 <libhprof.so> [java_home] [runs] [files] [probes]}")
home=${2:-$(dirname "$(dirname "$(readlink -f "$(command -v javac)")")")}
runs=${3:-3}
files=${4:-200}
probes=${5:-none java-empty java-store java-buffer java-clock noop clock count}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$home/bin/javac" -d "$work/cp" "$here/workloads/JavacMany.java"

# One run; prints "<wall s> <cpu s>".
run() {
  local probe=$1 args=()
  [ "$probe" = none ] || args+=("-agentpath:$lib=cpu=times,verbose=n,file=$work/prof.txt")
  [ "$probe" = none ] || [ "$probe" = count ] || export HPROF_CPU_TIMES_PROBE=$probe
  /usr/bin/time -f '%e %U %S' -o "$work/time" "$home/bin/java" "${args[@]}" -cp "$work/cp" \
    JavacMany "$files" "$work/javac" >/dev/null 2>"$work/err" || { cat "$work/err" >&2; exit 1; }
  unset HPROF_CPU_TIMES_PROBE
  awk '{printf "%s %.2f\n", $1, $2 + $3}' "$work/time"
}

median() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

echo "JDK: $("$home/bin/java" -version 2>&1 | head -1); JavacMany $files files; $runs rounds;" \
  "$(nproc) CPUs; load: $(cut -d' ' -f1-3 /proc/loadavg)"
declare -A wall=() cpu=()
read -ra list <<<"$probes"
for ((r = 0; r < runs; r++)); do
  # rotate the order each round so drifting load hits every configuration alike
  for ((k = 0; k < ${#list[@]}; k++)); do
    p=${list[$(((k + r) % ${#list[@]}))]}
    read -r e u < <(run "$p")
    wall[$p]+="$e "
    cpu[$p]+="$u "
  done
done
wn=$(median <<<"${wall[none]:-1}") cn=$(median <<<"${cpu[none]:-1}")
printf '| probe | wall (s) | x no agent | CPU (s) | x no agent | runs (wall) |\n|---|---|---|---|---|---|\n'
for p in "${list[@]}"; do
  w=$(median <<<"${wall[$p]}") c=$(median <<<"${cpu[$p]}")
  printf '| %s | %.2f | %.2fx | %.2f | %.2fx | %s|\n' "$p" "$w" "$(echo "$w / $wn" | bc -l)" \
    "$c" "$(echo "$c / $cn" | bc -l)" "${wall[$p]}"
done
echo "load at end: $(cut -d' ' -f1-3 /proc/loadavg)"

#!/usr/bin/env bash
# Exact heap=sites on many threads (doc/heap-sites.md, "Many threads"). Two measurements on
# bench/workloads/AllocThreads.java:
#  - alloc: 1, 2, 8 and 32 threads share a fixed number of allocations; the program reports
#    the process's CPU time (every thread) over the allocating phase only, per allocation.
#    Configurations: no agent, heap=sites exact, heap=sites exact with all tags through one JVMTI
#    environment (HPROF_SITES_ENVS=1: the lever measured), the naive agent
#    (naive_alloc_agent.c), and the VM's floor part by part (floor_alloc_agent.c: the empty
#    SampledObjectAlloc callback, + GetStackTrace of 4 frames, + SetTag).
#  - load: the main thread defines classes while 32 threads allocate without end; classes per
#    second, no agent against heap=sites exact and the naive agent.
# Runs are interleaved; medians of RUNS runs are printed with every run's value.
#
#   bench/sites-threads.sh <libhprof.so> [java] [runs] [threads] [thousands of iterations] [load seconds]
#   e.g. bench/sites-threads.sh build/agent/libhprof.so java 3 "1 2 8 32" 500 10
set -euo pipefail
lib=$(readlink -f "${1:?usage: $0 <libhprof.so> [java] [runs] [threads] [kiterations] [load seconds]}")
java=${2:-java}
runs=${3:-3}
threads=${4:-1 2 8 32}
kiters=${5:-500}
load_seconds=${6:-10}
configs=${CONFIGS:-none exact exact-1env naive event stack tag stack+tag}
load_configs=${LOAD_CONFIGS-none exact naive} # LOAD_CONFIGS= (empty) skips the load runs
here=$(cd "$(dirname "$0")" && pwd)
jhome=$(dirname "$(dirname "$(readlink -f "$(command -v "$java")")")")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$jhome/bin/javac" --release 17 -d "$work/classes" "$here/workloads/AllocThreads.java"
for a in naive floor; do
  cc -O2 -shared -fPIC -I"$jhome/include" -I"$jhome/include/linux" \
    -o "$work/lib$a.so" "$here/${a}_alloc_agent.c"
done

run() { # config mode threads arg -> the program's result line
  local c=$1 envs=4 args=()
  case $c in
    none) ;;
    exact) args=("-agentpath:$lib=heap=sites,verbose=n,file=$work/out.txt") ;;
    exact-1env) envs=1; args=("-agentpath:$lib=heap=sites,verbose=n,file=$work/out.txt") ;;
    naive) args=("-agentpath:$work/libnaive.so") ;;
    event) args=("-agentpath:$work/libfloor.so") ;;
    *) args=("-agentpath:$work/libfloor.so=${c//+/,}") ;;
  esac
  HPROF_SITES_ENVS=$envs "$java" "${args[@]}" -cp "$work/classes" AllocThreads "$2" "$3" "$4" \
    2>"$work/err.txt" | grep '^result:' || { echo "failed: $*" >&2; tail -3 "$work/err.txt" >&2; }
}

field() { sed -n "s/.* $1=\([0-9.]*\).*/\1/p"; }
median() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

declare -A ns=()
for ((r = 0; r < runs; r++)); do
  for t in $threads; do
    for c in $configs; do
      ns[$t,$c]+="$(run "$c" alloc "$t" "$kiters" | field cpu_ns_per_alloc) "
    done
  done
done
first=${threads%% *}
echo "alloc: CPU ns per allocation (median of $runs; ratio to $first thread(s) of the same configuration)"
for c in $configs; do
  base=$(median <<<"${ns[$first,$c]}")
  for t in $threads; do
    m=$(median <<<"${ns[$t,$c]}")
    printf '%-10s threads %3d  %8.1f ns  (x%4.2f)   runs: %s\n' "$c" "$t" "$m" \
      "$(awk -v a="$m" -v b="$base" 'BEGIN {print a / b}')" "${ns[$t,$c]}"
  done
done
if [[ " $configs " == *" exact "* && " $configs " == *" naive "* ]]; then
  for t in $threads; do
    e=$(median <<<"${ns[$t,exact]}") n=$(median <<<"${ns[$t,naive]}")
    printf 'exact / naive, %3d threads: %.2f\n' "$t" "$(awk -v a="$e" -v b="$n" 'BEGIN {print a / b}')"
  done
fi

declare -A rate=() main_us=()
for ((r = 0; r < runs; r++)); do
  for c in $load_configs; do
    line=$(run "$c" load 32 "$load_seconds")
    rate[$c]+="$(field classes_per_s <<<"$line") "
    main_us[$c]+="$(field main_cpu_us_per_class <<<"$line") "
  done
done
echo "load: classes defined per second while 32 threads allocate (median of $runs; ratio to no agent)"
base=$(median <<<"${rate[none]:-1}")
for c in $load_configs; do
  m=$(median <<<"${rate[$c]}")
  printf '%-10s %8.1f classes/s  (x%5.3f)   runs: %s\n' "$c" "$m" \
    "$(awk -v a="$m" -v b="$base" 'BEGIN {print a / b}')" "${rate[$c]}"
done
echo "load: the loading thread's own CPU per class, us (median of $runs)"
for c in $load_configs; do
  printf '%-10s %8.1f us   runs: %s\n' "$c" "$(median <<<"${main_us[$c]}")" "${main_us[$c]}"
done

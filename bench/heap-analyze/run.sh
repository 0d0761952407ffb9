#!/usr/bin/env bash
# hprof-analyze on the MixedHeap dump (bench/heap-dump/MixedHeap.java, written by the agent),
# against VisualVM's heap library on the same file (doc/heap-analysis.md, "Figures").
#   bench/heap-analyze/run.sh BUILD_DIR JDK_HOME [MB=1000] [rounds=3] [DUMP]
# Writes the dump (heap=dump,format=b at VM exit) unless DUMP is given, then runs
# `hprof-analyze -q` (the default report) `rounds` times and VisualVM's library once
# (tests/analyze/RetainedCheck.java: retained sizes of the 100 biggest objects, -Xmx16g),
# printing wall seconds, CPU seconds and peak RSS of each (GNU time), and the medians.
set -euo pipefail
build=$(cd "$1" && pwd); jdk=$2; mb=${3:-1000}; rounds=${4:-3}; dump=${5:-}
here=$(cd "$(dirname "$0")" && pwd); root=$(cd "$here/../.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/heap-analyze.XXXXXX")
trap 'rm -rf "$work"' EXIT
if [ -z "$dump" ]; then
  "$jdk/bin/javac" -d "$work" "$root/bench/heap-dump/MixedHeap.java"
  dump=$work/mixed$mb.hprof
  "$jdk/bin/java" -Xms3g -Xmx3g -XX:+UseG1GC \
    -agentpath:"$build/agent/libhprof.so=heap=dump,format=b,file=$dump" -cp "$work" MixedHeap "$mb" 1 \
    > "$work/java.out" 2>&1
  grep 'objects' "$work/java.out" | tail -1
fi
echo "dump: $dump, $(stat -c %s "$dump") bytes; load average: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores"
walls=(); rsss=()
for r in $(seq 1 "$rounds"); do
  /usr/bin/time -f "%e %U %S %M" -o "$work/t" "$build/tools/hprof-analyze" -q "$dump" > "$work/report.txt"
  read -r wall user sys rss < "$work/t"
  echo "hprof-analyze round $r: wall $wall s, cpu $(echo "$user + $sys" | bc) s, peak RSS $((rss / 1024)) MiB"
  walls+=("$wall"); rsss+=("$rss")
done
med() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
mrss=$(med "${rsss[@]}")
echo "hprof-analyze median: wall $(med "${walls[@]}") s, peak RSS $((mrss / 1024)) MiB" \
     "($(echo "scale=3; $mrss * 1024 / $(stat -c %s "$dump")" | bc) x the file)"
grep -A4 '^Objects by retained size' "$work/report.txt" | head -5
jar=$(find /usr/share/visualvm -name 'org-graalvm-visualvm-lib-jfluid-heap.jar' | head -1)
if [ -n "$jar" ] && [ "${VISUALVM:-1}" = 1 ]; then
  "$jdk/bin/javac" -cp "$jar" -d "$work" "$root/tests/analyze/RetainedCheck.java"
  # the library keeps what it computed in DUMP.hwcache and reuses it: time it from scratch
  rm -rf "$dump.hwcache"
  /usr/bin/time -f "%e %U %S %M" -o "$work/t" "$jdk/bin/java" -Xmx16g -cp "$jar:$work" \
    RetainedCheck "$dump" 5 > "$work/vv.txt" 2>&1 || true
  read -r wall user sys rss < "$work/t"
  echo "VisualVM library: wall $wall s, cpu $(echo "$user + $sys" | bc) s, peak RSS $((rss / 1024)) MiB"
  head -5 "$work/vv.txt"
  rm -rf "$dump.hwcache"
fi

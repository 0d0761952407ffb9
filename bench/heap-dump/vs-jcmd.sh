#!/usr/bin/env bash
# Times heap=dump against HotSpot's own dumper (jcmd GC.heap_dump) on the same live heap.
#   bench/heap-dump/vs-jcmd.sh LIB JDK_HOME MB [gz] [rounds]
# Starts MixedHeap with about MB megabytes of mixed live objects and the agent
# (heap=dump,format=b,doe=n, output in /dev/shm so the disk does not count), then takes
# `rounds` pairs of dumps, alternating: SIGQUIT (our dump), jcmd GC.heap_dump (HotSpot's,
# -gz=1 with gz). Prints wall seconds, process CPU seconds and peak RSS for each.
set -euo pipefail
lib=$1; jdk=$2; mb=$3; gz=${4:-}; rounds=${5:-2}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /dev/shm/hprof-bench.XXXXXX)
trap 'rm -rf "$work"; [ -n "${pid:-}" ] && kill "$pid" 2>/dev/null || true' EXIT
"$jdk/bin/javac" -d "$work" "$here/MixedHeap.java"
opts="heap=dump,format=b,doe=n,file=$work/ours.hprof${gz:+.gz}${gz:+,gz=y}"
"$jdk/bin/java" -Xms3g -Xmx3g -XX:+UseG1GC -agentpath:"$lib=$opts" -cp "$work" MixedHeap "$mb" 3600000 \
  > "$work/out" 2>&1 &
pid=$!
for _ in $(seq 1 600); do grep -q ready "$work/out" && break; sleep 1; done
grep ready "$work/out"
cpu() { awk '{print $14 + $15}' "/proc/$pid/stat"; }   # clock ticks (1/100 s)
now() { date +%s.%N; }
echo "RSS before dumps: $(awk '/VmRSS/ {print $2}' /proc/$pid/status) kB"
ours_size() { stat -c %s "$work"/ours.hprof* 2>/dev/null || echo 0; }
for r in $(seq 1 "$rounds"); do
  s0=$(ours_size)
  c0=$(cpu); t0=$(now); kill -QUIT "$pid"
  while [ "$(grep -c 'dump to' "$work/out")" -lt "$r" ]; do sleep 0.05; done
  t1=$(now); c1=$(cpu)
  echo "hprof  round $r: wall $(echo "$t1 - $t0" | bc | cut -c1-6) s, cpu $(echo "($c1 - $c0) / 100" | bc -l | cut -c1-5) s," \
       "dump $(( $(ours_size) - s0 )) bytes, peak RSS $(awk '/VmHWM/ {print $2}' /proc/$pid/status) kB"
  c0=$(cpu); t0=$(now)
  "$jdk/bin/jcmd" "$pid" GC.heap_dump ${gz:+-gz=1} "$work/hs.hprof" > /dev/null
  t1=$(now); c1=$(cpu)
  echo "jcmd   round $r: wall $(echo "$t1 - $t0" | bc | cut -c1-6) s, cpu $(echo "($c1 - $c0) / 100" | bc -l | cut -c1-5) s," \
       "file $(stat -c %s "$work/hs.hprof") bytes"
  rm -f "$work/hs.hprof"
done
grep 'HPROF: heap dump: [0-9]* objects' "$work/out" | tail -1

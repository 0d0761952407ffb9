#!/usr/bin/env bash
# What linking objects to their allocation sites costs a heap dump (issue 30).
#   bench/dump-sites/run.sh LIB JDK_HOME MB [runs]
# Runs bench/heap-dump/MixedHeap (about MB megabytes of mixed live objects, then exit) with
# heap=all,format=b (exact heap=sites: the exit dump's objects carry their sites) and with
# heap=all,format=b,sites_interval=1 (sampled mode: every allocation sampled and tagged, but
# objects carry no sites), interleaved, `runs` times each. The time is the dump's own, from its
# summary line ("HPROF: heap dump: ... s": from the start of the heap dump, the site map's walks
# included, to its end; heap=sites' SITES section is not in it). Prints every run and the
# medians. Output in /dev/shm, so the disk does not count.
set -euo pipefail
lib=$1; jdk=$2; mb=$3; runs=${4:-5}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /dev/shm/hprof-dump-sites.XXXXXX)
trap 'rm -rf "$work"' EXIT
"$jdk/bin/javac" -d "$work" "$here/../heap-dump/MixedHeap.java"
declare -A times
for r in $(seq 1 "$runs"); do
  for cfg in sites nosites; do
    extra=""; [ "$cfg" = nosites ] && extra=",sites_interval=1"
    "$jdk/bin/java" -Xms2g -Xmx2g -XX:+UseG1GC \
      -agentpath:"$lib=heap=all,format=b,file=$work/$cfg.hprof$extra" -cp "$work" MixedHeap "$mb" 0 \
      > "$work/out" 2>&1
    line=$(grep 'HPROF: heap dump: .* s$' "$work/out" | tail -1)
    t=$(echo "$line" | sed -E 's/.*, ([0-9.]+) s$/\1/')
    times[$cfg]="${times[$cfg]:-} $t"
    echo "run $r $cfg: $line"
    rm -f "$work/$cfg.hprof"
  done
done
median() { tr ' ' '\n' | grep -v '^$' | sort -n | awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }
ms=$(echo "${times[sites]}" | median); mn=$(echo "${times[nosites]}" | median)
echo "median dump time: with sites $ms s, without $mn s, ratio $(echo "$ms / $mn" | bc -l | cut -c1-5)"

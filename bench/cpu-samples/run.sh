#!/usr/bin/env bash
# cpu=samples overhead by hand (the bench/ issue will fold this into the real benchmarks).
# Interleaved runs of javac (40 generated classes, in-process) and H2 (in-memory database):
# no agent, interval=10, interval=1, the order rotating from round to round (the first run
# of a round tends to be slower: files evicted from the page cache). One line per run:
#   workload mode main-thread-cpu-ms wall-ms process-user-s process-sys-s load-average
# Usage: run.sh <libhprof.so> [rounds=9]    (JAVA_HOME selects the JDK; needs libh2-java)
set -euo pipefail
lib=$(readlink -f "$1")
rounds=${2:-9}
here=$(cd "$(dirname "$0")" && pwd)
jdk=${JAVA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")}
h2=/usr/share/java/h2.jar
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 "$here/gen_javac_sources.py" "$work/src" 40
"$jdk/bin/javac" -cp "$h2" -d "$work/cls" "$here/H2Bench.java" "$here/Timed.java"
modes=(base i10 i1)
for round in $(seq 1 "$rounds"); do
  for w in javac h2; do
    for k in 0 1 2; do
      mode=${modes[$(((round + k) % 3))]}
      case $mode in
        base) agent=() ;;
        i10) agent=("-agentpath:$lib=cpu=samples,interval=10,verbose=n,file=$work/out.txt") ;;
        i1) agent=("-agentpath:$lib=cpu=samples,interval=1,verbose=n,file=$work/out.txt") ;;
      esac
      rm -rf "$work/gout"
      mkdir "$work/gout"
      if [ "$w" = javac ]; then args=(javac "$work/gout" "$work/src/p"); else args=(h2 100000); fi
      r=$(/usr/bin/time -o "$work/time" -f "%U %S" "$jdk/bin/java" "${agent[@]}" -cp "$h2:$work/cls" \
            Timed "${args[@]}" 2>/dev/null | grep '^timed')
      echo "$w $mode ${r#timed } $(cat "$work/time") $(cut -d' ' -f1 /proc/loadavg)"
    done
  done
done

#!/usr/bin/env bash
# Accuracy of cpu=samples against safepoint bias, next to JFR, on the same program:
# java-tests/programs/InlinedLeaf.java (a long straight-line method, mix, that C2 inlines into
# a loop and that has nearly all the CPU time). For each configuration and run, prints the
# samples of the thread leaf-loop and the share whose top frame is InlinedLeaf.mix:
#   hprof async      cpu=samples,depth=8 (the default sampler)
#   hprof safepoint  cpu=samples,depth=8,sampler=safepoint
#   JFR              jdk.ExecutionSample every 10 ms (bench/jfr/execution-sample-10ms.jfc)
# Usage: accuracy.sh <libhprof.so> <java home> [runs=3] [milliseconds=3000]
set -euo pipefail
lib=$(readlink -f "$1")
jdk=$2
runs=${3:-3}
ms=${4:-3000}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$jdk/bin/javac" -d "$work/cls" "$root/java-tests/programs/InlinedLeaf.java"
share_hprof() { # file -> "samples mix-share"
  awk '/^THREAD START/ { if ($0 ~ /name="leaf-loop"/) { match($0, /id = [0-9]+/); leaf = substr($0, RSTART + 5, RLENGTH - 5) } }
       /^TRACE [0-9]+: \(thread=/ { t = $2; sub(":", "", t); th = $3; gsub(/[^0-9]/, "", th); thread[t] = th }
       /^CPU SAMPLES BEGIN/ { on = 1; next }
       /^CPU SAMPLES END/ { on = 0 }
       on && $1 ~ /^[0-9]+$/ && thread[$5] == leaf { n += $4; if ($6 == "InlinedLeaf.mix") m += $4 }
       END { printf "%d %.1f%%\n", n, n ? 100 * m / n : 0 }' "$1"
}
share_jfr() { # recording -> "samples mix-share"
  "$jdk/bin/jfr" print --events jdk.ExecutionSample "$1" | awk '
    /jdk.ExecutionSample/ { ev = 1; top = ""; leaf = 0 }
    /sampledThread = "leaf-loop"/ { leaf = 1 }
    /stackTrace = \[/ { want = 1; next }
    want { top = $1; sub(/\(.*/, "", top); want = 0 }
    /^}/ && ev { if (leaf) { n++; if (top == "InlinedLeaf.mix") m++ } ev = 0 }
    END { printf "%d %.1f%%\n", n, n ? 100 * m / n : 0 }'
}
cd "$work"
echo "JDK: $("$jdk/bin/java" -version 2>&1 | head -1)"
for run in $(seq 1 "$runs"); do
  "$jdk/bin/java" "-agentpath:$lib=cpu=samples,thread=y,depth=8,cutoff=0,verbose=n,file=a.txt" -cp cls InlinedLeaf "$ms" > /dev/null
  echo "run $run hprof async     $(share_hprof a.txt)"
  "$jdk/bin/java" "-agentpath:$lib=cpu=samples,sampler=safepoint,thread=y,depth=8,cutoff=0,verbose=n,file=s.txt" -cp cls InlinedLeaf "$ms" > /dev/null
  echo "run $run hprof safepoint $(share_hprof s.txt)"
  rm -f r.jfr
  "$jdk/bin/java" "-XX:StartFlightRecording=filename=r.jfr,settings=$root/bench/jfr/execution-sample-10ms.jfc" -cp cls InlinedLeaf "$ms" > /dev/null 2>&1
  echo "run $run JFR 10 ms       $(share_jfr r.jfr)"
done

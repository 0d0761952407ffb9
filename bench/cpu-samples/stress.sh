#!/usr/bin/env bash
# Robustness of cpu=samples' async sampler (not CI): bench/cpu-samples/Stress.java (64 threads,
# deep recursion, exceptions, class loading and unloading, deoptimization, System.gc() storms,
# thread churn) sampled at interval=1 with thread=y and depth=16 for <seconds>. Fails on a
# non-zero exit, a JVM crash (hs_err file), a hang (the run takes more than <seconds> + 120 s)
# or a profile without its CPU SAMPLES section; prints the agent's verbose lines.
# Usage: stress.sh <libhprof.so> <seconds> [java]     (java: default $JAVA_HOME/bin/java)
set -euo pipefail
lib=$(readlink -f "$1")
secs=$2
java=${3:-${JAVA_HOME:+$JAVA_HOME/bin/}java}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
javac_bin="$(dirname "$(readlink -f "$(command -v "$java")")")/javac"
"$javac_bin" -d "$work/cls" "$here/Stress.java"
cd "$work"
start=$(date +%s)
set +e
timeout $((secs + 120)) "$java" -Xmx512m -Xlog:disable \
  "-agentpath:$lib=cpu=samples,interval=1,thread=y,depth=16,cutoff=0,file=$work/cpu.txt" \
  -cp "$work/cls" Stress "$secs" > out.txt 2> err.txt
rc=$?
set -e
end=$(date +%s)
cat out.txt
grep '^HPROF' err.txt || true
echo "exit $rc after $((end - start)) s (asked for $secs s); $(grep -c '^TRACE' cpu.txt || true) traces"
ok=1
[ "$rc" -eq 0 ] || { echo "FAIL: exit $rc"; ok=0; }
if ls hs_err* > /dev/null 2>&1; then echo "FAIL: JVM crash"; head -40 hs_err*; ok=0; fi
grep -q '^CPU SAMPLES END' cpu.txt || { echo "FAIL: no CPU SAMPLES section"; ok=0; }
grep -q 'stress done' out.txt || { echo "FAIL: the program did not finish"; ok=0; }
sed -n '/^CPU SAMPLES BEGIN/,+12p' cpu.txt
[ "$ok" -eq 1 ] && echo "stress PASSED" || { echo "stress FAILED"; tail -20 err.txt; exit 1; }

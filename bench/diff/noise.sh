#!/bin/sh
# hprof-diff's false-positive rate: PAIRS (default 20) pairs of runs of the same unchanged
# program (tests/diff/DiffFixedWork.java "ROUNDS 550 50 50": a fixed amount of work, alpha()
# 55% of the CPU, nine other methods 5% each) under cpu=samples at INTERVAL (default 10, the
# agent's), each pair compared at the default thresholds. Prints one line per pair (exit
# status, regressions, samples, the uniform estimate, the largest |z| of a judged stack) and
# the false-positive rate (doc/tools.md quotes it).
#
#   bench/diff/noise.sh <build dir> [PAIRS] [ROUNDS] [INTERVAL] [extra hprof-diff options...]
#
# ROUNDS 100 is about 3 s of CPU.
set -eu
build=$(cd "$1" && pwd)
pairs=${2:-20}
rounds=${3:-100}
interval=${4:-10}
[ $# -ge 4 ] && shift 4 || shift $#
src=$(cd "$(dirname "$0")/../.." && pwd)
jhome=${JAVA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/diff_noise.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
"$jhome/bin/javac" -d "$tmp/cls" "$src/tests/diff/DiffFixedWork.java"
run() {
    "$jhome/bin/java" -XX:CompileCommand=quiet -XX:CompileCommand=dontinline,DiffFixedWork::spin \
        "-agentpath:$build/agent/libhprof.so=cpu=samples,interval=$interval,verbose=n,file=$1" \
        -cp "$tmp/cls" DiffFixedWork "$rounds" 550 50 50 >/dev/null
}
echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
flagged=0
i=1
while [ "$i" -le "$pairs" ]; do
    run "$tmp/a.txt"
    run "$tmp/b.txt"
    set +e
    "$build/tools/hprof-diff" --interval "$interval" --text /dev/null --json "$tmp/d.json" "$@" \
        "$tmp/a.txt" "$tmp/b.txt"
    st=$?
    set -e
    [ "$st" = 0 ] || flagged=$((flagged + 1))
    python3 "$src/bench/diff/summary.py" "$tmp/d.json" "pair $i: exit $st"
    i=$((i + 1))
done
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "false positives: $flagged of $pairs pairs"

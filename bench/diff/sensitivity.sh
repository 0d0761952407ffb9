#!/bin/sh
# hprof-diff's sensitivity on real runs (doc/tools.md, "Sensitivity and noise"): PAIRS pairs
# (default 5) of each case, base "550 50 50" of tests/diff/DiffFixedWork.java against:
#
#   dominant1   alpha (55% of the CPU) 25% more work, cpu=samples interval=1, 200 rounds (~6 s)
#   dominant10  the same at the default interval=10 over 20 s (650 rounds)
#   minor       gamma (5% of the CPU) twice the work, interval=1, 200 rounds
#   uniform     every method 15% more work (633 58 58), interval=1, 200 rounds
#   hog         the unchanged program beside a CPU hog (a shell loop), interval=1, 200 rounds
#
# and prints, per pair, hprof-diff's exit status and what it flagged.
#
#   bench/diff/sensitivity.sh <build dir> [PAIRS] [CASE...]
set -eu
build=$(cd "$1" && pwd)
pairs=${2:-5}
[ $# -ge 2 ] && shift 2 || shift $#
[ $# -gt 0 ] || set -- dominant1 dominant10 minor uniform hog
src=$(cd "$(dirname "$0")/../.." && pwd)
jhome=${JAVA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/diff_sens.XXXXXX")
hog=
trap '[ -n "$hog" ] && kill "$hog"; rm -rf "$tmp"' EXIT INT TERM
"$jhome/bin/javac" -d "$tmp/cls" "$src/tests/diff/DiffFixedWork.java"
run() { # FILE INTERVAL ROUNDS A G O
    "$jhome/bin/java" -XX:CompileCommand=quiet -XX:CompileCommand=dontinline,DiffFixedWork::spin \
        "-agentpath:$build/agent/libhprof.so=cpu=samples,interval=$2,verbose=n,file=$1" \
        -cp "$tmp/cls" DiffFixedWork "$3" "$4" "$5" "$6" >/dev/null
}
echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
for case in "$@"; do
    iv=1
    rounds=200
    case $case in
    dominant1) new="688 50 50" ;;
    dominant10) new="688 50 50" iv=10 rounds=650 ;;
    minor) new="550 100 50" ;;
    uniform) new="633 58 58" ;;
    hog) new="550 50 50" ;;
    *) echo "unknown case $case" >&2 && exit 2 ;;
    esac
    i=1
    while [ "$i" -le "$pairs" ]; do
        run "$tmp/a.txt" $iv $rounds 550 50 50
        if [ "$case" = hog ]; then
            sh -c 'while :; do :; done' &
            hog=$!
        fi
        # shellcheck disable=SC2086 # new is three numbers
        run "$tmp/b.txt" $iv $rounds $new
        if [ -n "$hog" ]; then
            kill "$hog"
            hog=
        fi
        set +e
        "$build/tools/hprof-diff" --interval $iv --text /dev/null --json "$tmp/d.json" \
            "$tmp/a.txt" "$tmp/b.txt"
        st=$?
        set -e
        python3 "$src/bench/diff/summary.py" "$tmp/d.json" "$case $i: exit $st"
        i=$((i + 1))
    done
done
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"

#!/bin/sh
# hprof-diff's false-positive rate: PAIRS (default 10) pairs of runs of the same unchanged
# program (java-tests/programs/DiffWorkload.java "cpu SECONDS 100": alpha() and beta() in a
# 40:60 split of CPU) under cpu=samples at the default interval, each pair compared at the
# default thresholds. Prints one line per pair (exit status, regressions, the largest z of a
# judged entry, alpha's share in both runs) and the false-positive rate (doc/tools.md quotes it).
#
#   bench/diff/noise.sh <build dir> [PAIRS] [SECONDS] [extra hprof-diff options...]
set -eu
build=$(cd "$1" && pwd)
pairs=${2:-10}
secs=${3:-3}
[ $# -ge 3 ] && shift 3 || shift $#
src=$(cd "$(dirname "$0")/../.." && pwd)
jhome=${JAVA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/diff_noise.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
"$jhome/bin/javac" -d "$tmp/cls" "$src/java-tests/programs/DiffWorkload.java"
run() {
    "$jhome/bin/java" "-agentpath:$build/agent/libhprof.so=cpu=samples,verbose=n,file=$1" \
        -cp "$tmp/cls" DiffWorkload cpu "$secs" 100 >/dev/null
}
flagged=0
i=1
while [ "$i" -le "$pairs" ]; do
    run "$tmp/a.txt"
    run "$tmp/b.txt"
    set +e
    "$build/tools/hprof-diff" --json "$tmp/d.json" "$@" "$tmp/a.txt" "$tmp/b.txt"
    st=$?
    set -e
    [ "$st" = 0 ] || flagged=$((flagged + 1))
    python3 - "$tmp/d.json" "$i" "$st" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
c = d["comparisons"][0]
zs = [abs(e["z"][0]) for e in c["entries"] if e["verdict"] != "not judged" and e["z"][0] is not None]
alpha = [e for e in c["entries"] if e["group"] == "total" and e["key"] == "DiffWorkload.alpha"][0]
print("pair %s: exit %s, %d regressions, samples %d/%d, max |z| %.2f, alpha %.1f%% -> %.1f%%" % (
    sys.argv[2], sys.argv[3], d["regressions"], c["base_total"][0], c["new_total"][0], max(zs),
    100 * alpha["base_share"][0], 100 * alpha["new_share"][0]))
PY
    i=$((i + 1))
done
echo "false positives: $flagged of $pairs pairs"

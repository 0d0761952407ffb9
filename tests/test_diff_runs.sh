#!/bin/sh
# hprof-diff on real runs under the agent (doc/tools.md, "Tests"):
#  - CPU time judged as counts (tests/diff/DiffFixedWork.java, a fixed amount of work,
#    cpu=samples at interval=1, about 6 s of CPU a run; each check judged on a second, fresh
#    pair when the first errs, see below): the dominant method (55% of the CPU)
#    doing 25% more work is flagged, and only it; a method at 5% doing twice the work is
#    flagged; every method doing 15% more work is one uniform change, no regression; the
#    unchanged program beside a CPU hog is no regression; files of different intervals are
#    refused; NOISE_PAIRS (default 2) pairs of the unchanged program at the default interval
#    flag nothing (bench/diff/noise.sh measures 20 pairs);
#  - cpu=times on the same fixed work (alpha +25%: flagged on its measured ms, alone);
#  - java-tests/programs/DiffWorkload.java: one
#    site allocating 25% more objects (heap=sites): flagged, and nothing else;
#  - heap dumps: 10,000 objects kept between two dumps (HPROF: two SIGQUIT dumps of one run;
#    PHD: one dump per file, two runs): flagged with exactly that class and count;
#  - thresholds from the command line and a rules file, include/exclude, the outputs, exit 2,
#    the CI recipe of doc/ci as written.
#
#   test_diff_runs.sh <hprof-diff> <libhprof.so> <java home> <DiffWorkload.java> \
#                     <doc/ci/compare-builds.sh> <DiffFixedWork.java>
set -u

diff=$1
lib=$2
jhome=$3
src=$4
recipe=$5
fixed=$6
java="$jhome/bin/java"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_diff_runs.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
passed=0
failed=0

ok() {
    passed=$((passed + 1))
    echo "ok: $*"
}
bad() {
    failed=$((failed + 1))
    echo "FAIL: $*"
}
finish() {
    echo "SUITE diff_runs: $passed passed, $failed failed"
    [ "$failed" = 0 ]
    exit $?
}

# run NAME OPTIONS ARGS...: the workload under the agent (stdout/stderr in $tmp/NAME.out/.err)
run() {
    name=$1
    opts=$2
    shift 2
    if ! "$java" "-agentpath:$lib=$opts" -cp "$tmp/cls" DiffWorkload "$@" \
        >"$tmp/$name.out" 2>"$tmp/$name.err"; then
        cat "$tmp/$name.err"
        bad "run $name ($opts $*) failed"
        finish
    fi
}

# hd EXPECTED_STATUS ARGS...: hprof-diff, its JSON in $tmp/d.json
hd() {
    want=$1
    shift
    "$diff" --json "$tmp/d.json" --text "$tmp/d.txt" "$@" 2>"$tmp/d.err"
    got=$?
    if [ "$got" != "$want" ]; then
        cat "$tmp/d.txt" "$tmp/d.err" 2>/dev/null
        bad "hprof-diff $* exited $got, expected $want"
        return 1
    fi
    return 0
}

# flagged: "group key measure,measure" per flagged entry of $tmp/d.json, sorted
flagged() {
    python3 - "$tmp/d.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
out = []
for c in d["comparisons"]:
    for e in c["entries"]:
        if e["flagged"]:
            out.append("%s %s %s" % (e["group"], e["key"], ",".join(e["flagged"])))
print("\n".join(sorted(out)))
EOF
}

# check NAME EXPECTED: the flagged entries are exactly EXPECTED (one per line)
check() {
    got=$(flagged)
    if [ "$got" = "$2" ]; then
        ok "$1"
    else
        cat "$tmp/d.txt"
        bad "$1: flagged
$got
expected
$2"
    fi
}

mkdir -p "$tmp/cls" "$tmp/fw"
"$jhome/bin/javac" -d "$tmp/cls" "$src" && "$jhome/bin/javac" -d "$tmp/fw" "$fixed" || {
    bad "javac"
    finish
}

# ---- CPU time as counts: a fixed amount of work -----------------------------------------------
# fw NAME INTERVAL ROUNDS ALPHA GAMMA OTHERS: DiffFixedWork under cpu=samples, $tmp/NAME.txt.
# spin() is not inlined: inlined into each caller, its loop's samples land on neighbouring
# callers by tens of percent from run to run (doc/tools.md): the profile's noise, not the diff's
FW_JVM="-XX:CompileCommand=quiet -XX:CompileCommand=dontinline,DiffFixedWork::spin"
fw() {
    name=$1
    iv=$2
    shift 2
    if ! "$java" $FW_JVM "-agentpath:$lib=cpu=samples,interval=$iv,verbose=n,file=$tmp/$name.txt" \
        -cp "$tmp/fw" DiffFixedWork "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"; then
        cat "$tmp/$name.err"
        bad "run $name ($*) failed"
        finish
    fi
}
# uniform: "FINDING|accepted|none FACTOR" of the first comparison of $tmp/d.json
uniform() {
    python3 -c 'import json, sys
u = json.load(open(sys.argv[1]))["comparisons"][0]["uniform"][0]
print("FINDING" if u["finding"] else "accepted" if u["accepted"] else "none", "%.3f" % u["factor"])' \
        "$tmp/d.json"
}
F='DiffFixedWork.main;DiffFixedWork.call'
# about 6 s of CPU at interval=1. The checks on these runs are statistical: the kernel checks a
# thread's CPU timer at its tick (4 ms on Debian's kernels), so a method of 300 ms gets some 75
# signals of about four samples each, and its count scatters by 10-15% from run to run although
# its CPU time does not (measured with the program's own thread CPU clock: within 1%; doc/tools.md).
# One comparison of two such runs in ten or so errs on some entry. So each check below judges a
# pair, and when that pair errs, a second, fresh one (a new base run and a new run): it fails
# only when both err, which a wrong verdict does every time and noise about one time in a
# hundred. The first pair's error is printed either way.
# hdq STATUS ARGS...: hprof-diff, quiet; false with $why set when it exits otherwise
hdq() {
    want=$1
    shift
    "$diff" --json "$tmp/d.json" --text "$tmp/d.txt" "$@" 2>"$tmp/d.err"
    got=$?
    why="exited $got, expected $want"
    [ "$got" = "$want" ]
}
# flagged_is EXPECTED: the flagged entries are exactly EXPECTED, else false with $why
flagged_is() {
    got=$(flagged)
    why="flagged [$got], expected [$1]"
    [ "$got" = "$1" ]
}
# the verdicts: BASE NEW (names of runs)
v_alpha() {
    hdq 1 --interval 1 "$tmp/$1.txt" "$tmp/$2.txt" &&
        flagged_is "stack $F;DiffFixedWork.alpha;DiffFixedWork.spin samples
total DiffFixedWork.alpha samples"
}
v_gamma() {
    hdq 1 --interval 1 "$tmp/$1.txt" "$tmp/$2.txt" &&
        flagged_is "stack $F;DiffFixedWork.gamma;DiffFixedWork.spin samples
total DiffFixedWork.gamma samples"
}
v_none() {
    hdq 0 --interval 1 "$tmp/$1.txt" "$tmp/$2.txt" && flagged_is ""
}
v_uniform() {
    v_none "$@" || return 1
    u=$(uniform)
    why="the uniform factor $u, not about 1.15 (the median of ten noisy ratios)"
    python3 -c 'import sys; k, f = sys.argv[1].split(); sys.exit(k == "none" or not 1.05 <= float(f) <= 1.30)' "$u" ||
        return 1
    why="no uniform line in the text"
    grep -q "UNIFORM\|share a factor" "$tmp/d.txt"
}
# fw_beside NAME ARGS...: fw NAME ARGS..., beside a CPU hog when $hog is set
hog=
fw_beside() {
    hogpid=
    if [ -n "${hog:-}" ]; then
        sh -c 'while :; do :; done' &
        hogpid=$!
    fi
    fw "$@"
    [ -z "$hogpid" ] || kill $hogpid
}
# pair LABEL VERDICT NAME ARGS...: run NAME (fw ARGS), judge it against fbase; if that errs,
# judge a fresh pair (fbase2, NAME.2)
pair() {
    label=$1
    verdict=$2
    name=$3
    shift 3
    fw_beside "$name" "$@"
    if $verdict fbase "$name"; then
        ok "$label"
        return
    fi
    first=$why
    echo "note: $label: the first pair erred ($first); a second pair"
    [ -f "$tmp/fbase2.txt" ] || fw fbase2 1 200 550 50 50
    fw_beside "$name.2" "$@"
    if $verdict fbase2 "$name.2"; then
        ok "$label (on a second pair; the first $first)"
    else
        cat "$tmp/d.txt" "$tmp/d.err"
        bad "$label: the first pair $first; the second $why"
    fi
}
fw fbase 1 200 550 50 50
pair "cpu=samples: the dominant method (55%) doing 25% more work flagged, alone" v_alpha \
    falpha 1 200 688 50 50
pair "cpu=samples: a method at 5% doing twice the work flagged, alone" v_gamma \
    fgamma 1 200 550 100 50
pair "cpu=samples: every method 15% more work: no regression, one uniform factor" v_uniform \
    funif 1 200 633 58 58
hog=1
pair "cpu=samples: beside a CPU hog: no regression" v_none fhog 1 200 550 50 50
hog=
hd 2 --base-interval 1 --new-interval 10 "$tmp/fbase.txt" "$tmp/falpha.txt" &&
    [ "$(wc -l <"$tmp/d.err")" = 1 ] && grep -q "sampled every 1 ms" "$tmp/d.err" &&
    ok "different intervals: exit 2, one line" || bad "different intervals: $(cat "$tmp/d.err")"
hd 1 --base-interval 1 --new-interval 10 --normalize "$tmp/fbase.txt" "$tmp/falpha.txt" &&
    ok "--normalize: 10x the CPU time of every entry is a regression"

# ---- cpu=times (measured ms, exact calls) on the same fixed work; heap=sites on DiffWorkload ---
"$java" $FW_JVM "-agentpath:$lib=cpu=times,file=$tmp/t1.txt" -cp "$tmp/fw" DiffFixedWork 75 550 50 50 \
    >"$tmp/t1.out" 2>&1 &&
    "$java" $FW_JVM "-agentpath:$lib=cpu=times,file=$tmp/t2.txt" -cp "$tmp/fw" DiffFixedWork 75 688 50 50 \
        >"$tmp/t2.out" 2>&1 || {
    cat "$tmp/t1.out" "$tmp/t2.out"
    bad "cpu=times runs failed"
    finish
}
# time_ms only: two runs of the same work once counted 675 and 796 calls of Random.nextInt
# (the shuffle's, 675 by the program), the agent's count to look into, not the comparison's
hd 1 --judge time_ms "$tmp/t1.txt" "$tmp/t2.txt" &&
    check "cpu=times: the dominant method +25% work flagged, alone" \
"stack $F;DiffFixedWork.alpha;DiffFixedWork.spin time_ms
total DiffFixedWork.alpha time_ms"

run h1 heap=sites,file="$tmp/h1.txt" sites 50000 100
run h2 heap=sites,file="$tmp/h2.txt" sites 50000 125
SITE='DiffWorkload$Alpha @ DiffWorkload.main;DiffWorkload.sites;DiffWorkload.newAlpha'
hd 1 "$tmp/h1.txt" "$tmp/h2.txt" && check "heap=sites: one site +25% objects flagged" \
"site $SITE alloc_bytes,alloc_objects"

# ---- heap dumps ----------------------------------------------------------------------------
# HPROF: one run, a SIGQUIT dump before and one after 10,000 objects are kept
await() { # FILE TEXT COUNT
    n=0
    while [ "$(grep -c "$2" "$1" 2>/dev/null)" -lt "$3" ]; do
        n=$((n + 1))
        if [ $n -gt 1200 ]; then
            cat "$tmp"/leak.*
            bad "timeout waiting for '$2' in $1"
            kill -9 $pid 2>/dev/null # the workload waits for a file that will not come
            finish
        fi
        sleep 0.1
    done
}
"$java" "-agentpath:$lib=heap=dump,format=b,doe=n,file=$tmp/leak.hprof" -cp "$tmp/cls" \
    DiffWorkload leak "$tmp" 10000 >"$tmp/leak.out" 2>"$tmp/leak.err" &
pid=$!
await "$tmp/leak.out" ready 1
kill -QUIT $pid
await "$tmp/leak.err" "dump to" 1
touch "$tmp/go1"
await "$tmp/leak.out" leaked 1
kill -QUIT $pid
await "$tmp/leak.err" "dump to" 2
touch "$tmp/go2"
wait $pid || bad "leak run exited $?"
LEAK='class DiffWorkload$Leaked instances,bytes'
if hd 1 --base-section 1 --new-section 2 "$tmp/leak.hprof" "$tmp/leak.hprof"; then
    check "HPROF heap dumps: the leaked class flagged, alone" "$LEAK"
    if grep -q '"key":"DiffWorkload\$Leaked","verdict":"regression","flagged":\["instances","bytes"\],"base":\[0,0\],"new":\[10000,' "$tmp/d.json"; then
        ok "HPROF heap dumps: exactly 10000 instances"
    else
        bad "HPROF heap dumps: not 0 -> 10000 instances: $(grep -o '"key":"DiffWorkload.Leaked"[^}]*' "$tmp/d.json")"
    fi
fi
hd 0 --base-section 1 --new-section 1 "$tmp/leak.hprof" "$tmp/leak.hprof" &&
    ok "the same dump twice: nothing flagged"

# PHD: one dump per file, so two runs
run p0 format=phd,file="$tmp/k0.phd" keep 0
run p1 format=phd,file="$tmp/k1.phd" keep 10000
if hd 1 "$tmp/k0.phd" "$tmp/k1.phd"; then
    check "PHD heap dumps: the leaked class flagged, alone" "$LEAK"
    if grep -q '"key":"DiffWorkload\$Leaked","verdict":"regression","flagged":\["instances","bytes"\],"base":\[0,0\],"new":\[10000,' "$tmp/d.json"; then
        ok "PHD heap dumps: exactly 10000 instances"
    else
        bad "PHD heap dumps: not 0 -> 10000 instances"
    fi
fi

# ---- noise ---------------------------------------------------------------------------------
i=1
while [ $i -le "${NOISE_PAIRS:-2}" ]; do
    fw n$i.a 10 100 550 50 50
    fw n$i.b 10 100 550 50 50
    hd 0 "$tmp/n$i.a.txt" "$tmp/n$i.b.txt" && ok "noise pair $i: nothing flagged"
    i=$((i + 1))
done

# ---- thresholds, patterns, rules file --------------------------------------------------------
hd 0 --growth 30 "$tmp/h1.txt" "$tmp/h2.txt" && ok "--growth 30: a 25% growth passes"
hd 1 --growth 20 "$tmp/h1.txt" "$tmp/h2.txt" && ok "--growth 20: a 25% growth fails"
hd 0 --exclude '*Alpha*' "$tmp/h1.txt" "$tmp/h2.txt" && ok "--exclude drops the site"
hd 0 --include 'int*' "$tmp/h1.txt" "$tmp/h2.txt" && ok "--include judges only int[]"
hd 0 --delta-count 2000000 "$tmp/h1.txt" "$tmp/h2.txt" && ok "--delta-count above the growth"
hd 0 --judge alloc_objects --min-share 50 "$tmp/h1.txt" "$tmp/h2.txt" &&
    ok "--min-share 50: Alpha (40-45% of objects) not judged"
# on shares the dominant method's +25% is +10% of share: --growth 2 to see it
hd 1 --mode share --growth 2 --z 0 "$tmp/fbase.txt" "$tmp/falpha.txt" && ok "--mode share"
cat >"$tmp/rules" <<'EOF'
# a project's rules
growth 10%
[sites]
growth = 30
[cpu]
exclude *alpha*
EOF
hd 0 --rules "$tmp/rules" "$tmp/h1.txt" "$tmp/h2.txt" && ok "rules file: [sites] growth 30"
hd 1 --rules "$tmp/rules" --growth 20 "$tmp/h1.txt" "$tmp/h2.txt" &&
    ok "the command line wins over the rules file"
hd 0 --rules "$tmp/rules" --interval 1 "$tmp/fbase.txt" "$tmp/falpha.txt" &&
    ok "rules file: [cpu] exclude"
printf 'growth ten\n' >"$tmp/badrules"
hd 2 --rules "$tmp/badrules" "$tmp/h1.txt" "$tmp/h2.txt" && grep -q "badrules:1:" "$tmp/d.err" &&
    ok "bad rules file: exit 2 with its line"

# ---- outputs and bad input ---------------------------------------------------------------------
"$diff" --interval 1 --markdown "$tmp/d.md" --html "$tmp/d.html" "$tmp/fbase.txt" \
    "$tmp/falpha.txt"
[ $? = 1 ] && grep -q '^| 🔴 | total | `DiffFixedWork.alpha` | samples |' "$tmp/d.md" &&
    ok "Markdown lists the regression" || bad "Markdown: $(cat "$tmp/d.md")"
if grep -q '<iframe class="flame"' "$tmp/d.html" && grep -q '<title>CPU SAMPLES: samples</title>' "$tmp/d.html" &&
    grep -q '&quot;DiffFixedWork.alpha&quot;' "$tmp/d.html" &&
    ! grep -qi 'https\?:' "$tmp/d.html"; then
    ok "HTML: self-contained, with the stacks"
else
    bad "HTML"
fi
# the colours the page draws: tools/flame paints a frame red when its share of the total grew,
# blue when it shrank (base -> new); alpha's must grow, and some of the nine others' shrink
colours=$(python3 - "$tmp/d.html" <<'PY'
import html, json, re, sys
page = open(sys.argv[1]).read()
for doc in re.findall(r'srcdoc="([^"]*)"', page):
    inner = html.unescape(doc)
    data = re.search(r'<script type="application/json" id="data">(.*?)</script>', inner, re.S)
    d = json.loads(data.group(1))
    w, raw, names = 3 + d["nvalues"], d["nodes"], d["names"]
    nodes = [raw[i:i + w] for i in range(0, len(raw), w)]
    b0, n0 = nodes[0][3], nodes[0][4]
    for n in nodes:
        if names[n[0]] in ("DiffFixedWork.alpha", "DiffFixedWork.gamma") or \
                names[n[0]].startswith("DiffFixedWork.o"):
            print(names[n[0]], "red" if n[4] / n0 >= n[3] / b0 else "blue")
PY
)
# (alpha's share grows by about 4 points; each other method's moves by more than its expected
# loss of half a point from run to run, so only some of them need be blue)
if echo "$colours" | grep -qx "DiffFixedWork.alpha red" && echo "$colours" | grep -q ' blue$'; then
    ok "HTML: alpha red, beta blue"
else
    bad "HTML colours: $colours"
fi
# the flame page's script draws the graph: a headless browser marks the frame rendered
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -n "$browser" ]; then
    timeout 120 "$browser" --headless --no-sandbox --disable-gpu --dump-dom "file://$tmp/d.html" \
        >"$tmp/dom.html" 2>/dev/null
    if grep -q 'data-state="rendered" data-title="CPU SAMPLES: samples"' "$tmp/dom.html"; then
        ok "HTML drawn by chromium"
    else
        bad "HTML not drawn: $(head -c 500 "$tmp/dom.html")"
    fi
else
    echo "skipped: no chromium to draw the HTML"
fi
hd 2 "$tmp/none.txt" "$tmp/falpha.txt" && ok "missing file: exit 2"
hd 2 "$tmp/k0.phd" "$tmp/falpha.txt" && ok "PHD against a profile: exit 2"
hd 2 --kind heap "$tmp/fbase.txt" "$tmp/falpha.txt" && ok "a kind the files lack: exit 2"
hd 2 "$tmp/fbase.txt" "$tmp/h2.txt" && ok "no kind in common: exit 2"
hd 2 --growth x "$tmp/fbase.txt" "$tmp/falpha.txt" && ok "bad option value: exit 2"
# ---- the CI recipe, as written in doc/tools.md, on two builds -----------------------------------
mkdir -p "$tmp/src2" "$tmp/cls2"
sed 's/int a = 4 \* aPercent/int a = 5 * aPercent/' "$src" >"$tmp/src2/DiffWorkload.java"
"$jhome/bin/javac" -d "$tmp/cls2" "$tmp/src2/DiffWorkload.java"
GITHUB_STEP_SUMMARY="$tmp/summary.md" "$recipe" -a "$lib" -d "$diff" -j "$java" -p heap=sites \
    -o "$tmp/ci" "$tmp/cls" "$tmp/cls2" DiffWorkload sites 20000 100 >"$tmp/ci.out" 2>&1
st=$?
if [ $st = 1 ] && grep -q '^## hprof-diff: regression' "$tmp/summary.md" &&
    grep -q 'DiffWorkload\$Alpha @' "$tmp/ci/diff.md" && [ -s "$tmp/ci/diff.html" ] &&
    [ -s "$tmp/ci/diff.json" ] && grep -q '^  REGRESSION: 1 regression' "$tmp/ci.out"; then
    ok "CI recipe: the new build's site +25% fails the step, summary written"
else
    cat "$tmp/ci.out"
    bad "CI recipe (exit $st)"
fi
GITHUB_STEP_SUMMARY= "$recipe" -a "$lib" -d "$diff" -j "$java" -p heap=sites -o "$tmp/ci2" \
    "$tmp/cls" "$tmp/cls" DiffWorkload sites 20000 100 >"$tmp/ci.out" 2>&1 &&
    ok "CI recipe: the same build passes" || bad "CI recipe, same build: $(cat "$tmp/ci.out")"
"$recipe" -a "$lib" -d "$diff" -j "$java" -p cpu=samples,interval=1 -o "$tmp/ci4" "$tmp/fw" \
    "$tmp/fw" DiffFixedWork 50 550 50 50 >"$tmp/ci.out" 2>&1
st=$?
if [ $st != 2 ] && grep -q 'interval: base 1 ms, new 1 ms (given' "$tmp/ci4/diff.txt"; then
    ok "CI recipe: cpu=samples,interval=1 tells hprof-diff the interval (exit $st)"
else
    bad "CI recipe, cpu=samples (exit $st): $(cat "$tmp/ci.out")"
fi
"$recipe" -a "$lib" -d "$diff" -j "$java" -o "$tmp/ci3" "$tmp/cls" "$tmp/cls" NoSuchMain \
    >"$tmp/ci.out" 2>&1
[ $? = 2 ] && ok "CI recipe: a failed run is exit 2" || bad "CI recipe, failed run"

head -c 3000 "$tmp/fbase.txt" >"$tmp/cut.txt"
hd 2 "$tmp/cut.txt" "$tmp/falpha.txt" && ok "truncated profile: exit 2"
finish

#!/bin/sh
# CI recipe (doc/tools.md, "hprof-diff in CI"): runs one Java program under the hprof agent on
# the base build and on the new build, compares the two profiles with hprof-diff, writes
# diff.txt, diff.md, diff.json and diff.html into the output directory, appends the Markdown to
# $GITHUB_STEP_SUMMARY when that is set, and exits with hprof-diff's status: 0 nothing crossed
# a threshold, 1 regression, 2 usage or unreadable input (or a run that failed).
#
#   compare-builds.sh [options] BASE_CLASSPATH NEW_CLASSPATH MAIN [ARGS...]
#
#   -a LIB      the agent, libhprof.so (default $HPROF_AGENT)
#   -p OPTIONS  agent options (default cpu=samples); file= is set by the script
#   -r RULES    hprof-diff rules file (default: none)
#   -o DIR      output directory (default hprof-diff-out)
#   -d PROGRAM  hprof-diff (default $HPROF_DIFF, else hprof-diff on PATH)
#   -j JAVA     the java launcher (default $JAVA_HOME/bin/java, else java on PATH)
#   -J OPTION   one more JVM option for both runs (repeatable)
#   -D OPTION   one more hprof-diff option (repeatable, e.g. -D --growth=15)
set -u

agent=${HPROF_AGENT:-}
opts=cpu=samples
rules=
out=hprof-diff-out
hd=${HPROF_DIFF:-hprof-diff}
if [ -n "${JAVA_HOME:-}" ]; then java=$JAVA_HOME/bin/java; else java=java; fi
jvm_opts=
diff_opts=
usage() {
    sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}
while getopts a:p:r:o:d:j:J:D:h o; do
    case $o in
    a) agent=$OPTARG ;;
    p) opts=$OPTARG ;;
    r) rules=$OPTARG ;;
    o) out=$OPTARG ;;
    d) hd=$OPTARG ;;
    j) java=$OPTARG ;;
    J) jvm_opts="$jvm_opts $OPTARG" ;;
    D) diff_opts="$diff_opts $OPTARG" ;;
    *) usage ;;
    esac
done
shift $((OPTIND - 1))
[ $# -ge 3 ] || usage
[ -n "$agent" ] && [ -f "$agent" ] || {
    echo "compare-builds.sh: the agent (-a or HPROF_AGENT) is missing: '$agent'" >&2
    exit 2
}
base_cp=$1
new_cp=$2
shift 2
mkdir -p "$out" || exit 2
case ",$opts," in
*,format=b,*) ext=hprof ;;
*) ext=txt ;;
esac

# profile NAME CLASSPATH MAIN ARGS...: one run; the profile is $out/NAME.$ext
profile() {
    name=$1
    cp=$2
    shift 2
    rm -f "$out/$name.$ext"
    # shellcheck disable=SC2086 # jvm_opts is a list of words
    if ! "$java" $jvm_opts "-agentpath:$agent=$opts,file=$out/$name.$ext" -cp "$cp" "$@" \
        >"$out/$name.out" 2>"$out/$name.err"; then
        echo "compare-builds.sh: the $name run failed (exit $?):" >&2
        tail -n 20 "$out/$name.err" >&2
        exit 2
    fi
}
profile base "$base_cp" "$@"
profile new "$new_cp" "$@"

set -- --text "$out/diff.txt" --markdown "$out/diff.md" --json "$out/diff.json" \
    --html "$out/diff.html"
[ -n "$rules" ] && set -- "$@" --rules "$rules"
# no profile records its sampling interval: tell hprof-diff the one both runs used
case ",$opts," in
*,interval=*)
    interval=$(printf '%s\n' ",$opts," | sed 's/.*,interval=\([^,]*\),.*/\1/')
    set -- "$@" --interval "$interval"
    ;;
esac
# shellcheck disable=SC2086 # diff_opts is a list of words
"$hd" "$@" $diff_opts "$out/base.$ext" "$out/new.$ext"
status=$?
[ -f "$out/diff.txt" ] && cat "$out/diff.txt"
if [ -n "${GITHUB_STEP_SUMMARY:-}" ] && [ -f "$out/diff.md" ]; then
    cat "$out/diff.md" >>"$GITHUB_STEP_SUMMARY"
fi
exit $status

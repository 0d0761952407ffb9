#!/usr/bin/env bash
# The soak (issue 31, not CI): Soak.java makes 10 new classes a second (8 methods of unique
# names each, a loader thrown away every 5 classes, System.gc() every 30 s) for NEW seconds,
# then runs QUIET seconds with no new code. Each configuration runs once, all of them at the
# same time (so machine load hits them alike); prints per configuration the RSS growth in MB/min
# while new classes appear (least-squares slope from t=120 s on: the VM's own
# growth settles in the first two minutes), the same minus the slope with
# no agent, and the slope of the quiet part. The Java heap is fixed and pre-touched
# (-Xms=-Xmx=128m, AlwaysPreTouch), so RSS growth is native memory: the VM's and the agent's.
#
#   bench/soak/soak.sh <libhprof.so> [java] [new_s] [quiet_s] [configs...]
#   e.g. bench/soak/soak.sh build/agent/libhprof.so java 360 60
#        bench/soak/soak.sh build/agent/libhprof.so /usr/lib/jvm/temurin-25-jdk-amd64/bin/java 120 30
# A configuration is "none", an option string of the agent, "sigquit:<options>" (with no
# new classes after NEW s, three SIGQUIT dumps 20 s apart in the quiet part; QUIET >= 90), or
# "floor:<ids|cml|ids,cml>": not the agent but bench/cpu-samples/floor_samples_agent.c, what the
# VM itself keeps for an agent (ids: a jmethodID for every method at ClassPrepare, as
# cpu=samples asks; heap=sites and cpu=times make them for the methods they meet), or
# "floor:tags": bench/soak/floor_tags_agent.c, the JVMTI tag maps heap=sites fills (every
# allocated object tagged through 4 environments).
# The default configurations are the issue's: none, heap=sites,cpu=samples,monitor=y,depth=8,
# heap=sites,format=b, cpu=times. Raw outputs stay in $SOAK_KEEP if set.
set -euo pipefail
lib=$(readlink -f "${1:?usage: $0 <libhprof.so> [java] [new_s] [quiet_s] [configs...]}")
java=${2:-java}
new_s=${3:-120}
quiet_s=${4:-30}
shift $(($# < 4 ? $# : 4))
configs=("$@")
[ ${#configs[@]} -gt 0 ] ||
  configs=(none "heap=sites,cpu=samples,monitor=y,depth=8" "heap=sites,format=b" "cpu=times")
here=$(cd "$(dirname "$0")" && pwd)
work=${SOAK_KEEP:-$(mktemp -d)}
mkdir -p "$work"
[ -n "${SOAK_KEEP:-}" ] || trap 'rm -rf "$work"' EXIT
jhome=$(dirname "$(dirname "$(readlink -f "$(command -v "$java")")")")
"$jhome/bin/javac" --release 17 -d "$work/classes" "$here"/*.java
cc -O2 -shared -fPIC -I"$jhome/include" -I"$jhome/include/linux" -o "$work/libfloor.so" \
  "$here/../cpu-samples/floor_samples_agent.c"
cc -O2 -shared -fPIC -I"$jhome/include" -I"$jhome/include/linux" -o "$work/libfloortags.so" \
  "$here/floor_tags_agent.c"

pids=()
for i in "${!configs[@]}"; do
  c=${configs[$i]}
  opts=${c#sigquit:}
  agent=()
  case $opts in
    none) ;;
    floor:tags) agent=("-agentpath:$work/libfloortags.so") ;;
    floor:*) agent=("-agentpath:$work/libfloor.so=${opts#floor:}") ;;
    *) agent=("-agentpath:$lib=$opts,file=$work/out$i.hprof") ;;
  esac
  "$jhome/bin/java" -Xms128m -Xmx128m -XX:+AlwaysPreTouch "${agent[@]}" -cp "$work/classes" \
    Soak "$new_s" "$quiet_s" > "$work/rss$i.txt" 2> "$work/err$i.txt" &
  pids[$i]=$!
  if [ "$c" != "$opts" ]; then
    (sleep $((new_s + 30)); for k in 1 2 3; do kill -QUIT "${pids[$i]}" 2>/dev/null || true; sleep 20; done) &
  fi
done
for p in "${pids[@]}"; do wait "$p" || echo "a run failed: $p" >&2; done

printf '%s\n' "${configs[@]}" > "$work/configs.txt"
echo "$new_s $quiet_s" > "$work/times.txt"
"$here/report.sh" "$work"

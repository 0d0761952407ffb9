#!/usr/bin/env bash
# Where a soak run's native growth goes (issue 31, not CI): one configuration of the soak
# (soak.sh's forms: none, agent options, floor:tags, floor:<ids|cml>) under
# -XX:NativeMemoryTracking=summary; at T1 and T2 seconds it takes `jcmd VM.native_memory summary`
# and the RSS, then prints per NMT category the committed KB at both times and the change, and
# the RSS change that NMT does not see (malloc outside the VM, such as the agent's tables, and
# memory the allocator keeps). NMT itself costs a little memory per malloc of the VM.
#
#   bench/soak/nmt.sh <libhprof.so> [java] <config> [new_s] [T1] [T2]
#   e.g. bench/soak/nmt.sh build/agent/libhprof.so java cpu=times 360 120 350
set -euo pipefail
lib=$(readlink -f "${1:?usage: $0 <libhprof.so> [java] <config> [new_s] [T1] [T2]}")
java=${2:-java}
config=${3:?a configuration}
new_s=${4:-360}
t1=${5:-120}
t2=${6:-350}
here=$(cd "$(dirname "$0")" && pwd)
work=${SOAK_KEEP:-$(mktemp -d)}
mkdir -p "$work"
[ -n "${SOAK_KEEP:-}" ] || trap 'rm -rf "$work"' EXIT
jhome=$(dirname "$(dirname "$(readlink -f "$(command -v "$java")")")")
"$jhome/bin/javac" --release 17 -d "$work/classes" "$here"/*.java
agent=()
case $config in
  none) ;;
  floor:tags)
    cc -O2 -shared -fPIC -I"$jhome/include" -I"$jhome/include/linux" -o "$work/libfloortags.so" \
      "$here/floor_tags_agent.c"
    agent=("-agentpath:$work/libfloortags.so") ;;
  floor:*)
    cc -O2 -shared -fPIC -I"$jhome/include" -I"$jhome/include/linux" -o "$work/libfloor.so" \
      "$here/../cpu-samples/floor_samples_agent.c"
    agent=("-agentpath:$work/libfloor.so=${config#floor:}") ;;
  *) agent=("-agentpath:$lib=$config,file=$work/out.hprof") ;;
esac
"$jhome/bin/java" -XX:NativeMemoryTracking=summary -Xms128m -Xmx128m -XX:+AlwaysPreTouch \
  "${agent[@]}" -cp "$work/classes" Soak "$new_s" 10 > "$work/rss.txt" 2> "$work/err.txt" &
pid=$!
start=$(date +%s)
snap() { # $1: seconds since start, $2: file
  while [ $(($(date +%s) - start)) -lt "$1" ]; do sleep 1; done
  "$jhome/bin/jcmd" "$pid" VM.native_memory summary > "$2"
  awk '/^VmRSS/ { print "RSS (committed=" $2 "KB)" }' "/proc/$pid/status" >> "$2"
}
snap "$t1" "$work/nmt1.txt"
snap "$t2" "$work/nmt2.txt"
wait "$pid" || true
# "-  Class (reserved=..KB, committed=..KB)" and "Total: reserved=..KB, committed=..KB"
parse() {
  awk '/committed=/ {
      name = $0; sub(/^[- ]*/, "", name); sub(/ *\(.*$/, "", name); sub(/:.*$/, "", name)
      match($0, /committed=[0-9]+KB/); v = substr($0, RSTART + 10, RLENGTH - 12)
      if (name != "" && !(name in seen)) { seen[name] = 1; print name "\t" v }
    }' "$1"
}
join -t $'\t' <(parse "$work/nmt1.txt" | sort) <(parse "$work/nmt2.txt" | sort) |
  awk -F'\t' -v t1="$t1" -v t2="$t2" '
    BEGIN { printf "%-28s %12s %12s %10s\n", "NMT category", "KB at " t1 " s", "KB at " t2 " s", "MB/min" }
    { d = ($3 - $2) / 1024 * 60 / (t2 - t1); printf "%-28s %12d %12d %10.2f\n", $1, $2, $3, d
      if ($1 == "RSS") rss = $3 - $2; if ($1 == "Total") tot = $3 - $2 }
    END { printf "%-28s %12s %12s %10.2f\n", "RSS not in NMT", "", "", (rss - tot) / 1024 * 60 / (t2 - t1) }'

#!/usr/bin/env bash
# The main job: profile the bundled demo program with heap=sites,format=b, write java.hprof,
# show a summary of it, and write its flame graph (hprof-convert, doc/tools.md).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
[ -f build/agent/libhprof.so ] || ./scripts/setup.sh
ninja -C build >/dev/null
out="$root/build/demo"
mkdir -p "$out/classes"
javac -d "$out/classes" java-tests/programs/Demo.java
cd "$out"
rm -f java.hprof
java -agentpath:"$root/build/agent/libhprof.so=heap=sites,format=b" -cp classes Demo
echo
echo "profile written to $out/java.hprof ($(stat -c %s java.hprof) bytes)"
echo
"$root/build/tools/hprof-read" --top 10 java.hprof
echo
"$root/build/tools/hprof-convert" -k sites -o java-sites.html java.hprof
echo "flame graph of the allocation sites written to $out/java-sites.html (open it in a browser)"

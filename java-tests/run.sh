#!/usr/bin/env bash
# Compiles the Java test programs and the JUnit 5 tests, then runs every test with the JUnit
# console launcher. Environment (set by meson test): HPROF_LIB, HPROF_SOURCE_ROOT,
# HPROF_BUILD_ROOT, HPROF_JAVA_HOME, HPROF_READ. Extra arguments go to the launcher
# (e.g. --select-class hprof.tests.OptionsTest).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
: "${HPROF_LIB:?set HPROF_LIB to the built libhprof.so}"
: "${HPROF_BUILD_ROOT:?}"
jdk=${HPROF_JAVA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v javac)")")")}
out="$HPROF_BUILD_ROOT/java-tests-out"
rm -rf "$out"
mkdir -p "$out/programs" "$out/tests" "$out/work"

junit=/usr/share/java/junit-platform-console-standalone.jar
visualvm_heap=/usr/share/visualvm/visualvm/modules/org-graalvm-visualvm-lib-jfluid-heap.jar
for jar in "$junit" "$visualvm_heap"; do
  [ -f "$jar" ] || { echo "missing $jar: apt-get install junit5 visualvm" >&2; exit 1; }
done

# Programs target Java 17 so the same classes run on JDK 17, 21 and 25.
mapfile -t programs < <(find "$here/programs" -name '*.java' | sort)
"$jdk/bin/javac" -g --release 17 -d "$out/programs" "${programs[@]}"
mapfile -t tests < <(find "$here/src" -name '*.java' | sort)
"$jdk/bin/javac" -g --release 17 -cp "$junit:$visualvm_heap" -d "$out/tests" "${tests[@]}"

export HPROF_PROGRAMS="$out/programs"
export HPROF_WORK="$out/work"
cd "$out/work"
# With arguments (e.g. --select-class hprof.tests.StartupTest) run just those; else scan all.
if [ $# -eq 0 ]; then
  set -- --scan-class-path="$out/tests"
fi
# --reports-dir: JUnit's XML report, with each case's time (doc/testing.md: time per JDK).
exec "$jdk/bin/java" -jar "$junit" \
  --class-path "$out/tests:$visualvm_heap" --reports-dir="$out/reports" \
  --disable-banner --disable-ansi-colors --details=tree --details-theme=ascii \
  --fail-if-no-tests "$@"

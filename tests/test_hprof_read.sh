#!/bin/sh
# hprof-read on real HotSpot heap dumps: one written by HotSpotDiagnosticMXBean.dumpHeap and one
# by `jcmd <pid> GC.heap_dump -gz=1` (independent gzip members), both from a VM run with
# -Xshare:off (CDS-archived objects can make HotSpot dumps reference objects they do not dump).
#
#   test_hprof_read.sh <hprof-read> <java home>
#
# What HotSpot writes, and what this test pins down (see doc/tools.md):
#  - LOAD CLASS records name stack trace serial 1 before the (empty) STACK TRACE 1 record that
#    follows them: an error by default, accepted with --lenient-traces; nothing else is wrong;
#  - no START THREAD records: the thread serials of STACK TRACE and root records are warnings
#    (errors with --strict-threads).
set -eu

reader=$1
jhome=$2
java="$jhome/bin/java"
jcmd="$jhome/bin/jcmd"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_hprof_read.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

fail() {
    echo "FAIL: $*" >&2
    echo "SUITE hprof_read_hotspot: 0 passed, 1 failed"
    exit 1
}

# json_num KEY FILE: the first numeric value of "KEY": in a one-line JSON file
json_num() {
    grep -o "\"$1\":[0-9]*" "$2" | head -n 1 | cut -d: -f2
}

# expect STATUS CMD...: run CMD, check its exit status
expect() {
    want=$1
    shift
    set +e
    "$@" >"$tmp/out" 2>"$tmp/err"
    got=$?
    set -e
    if [ "$got" != "$want" ]; then
        cat "$tmp/err" >&2
        fail "exit status $got, expected $want: $*"
    fi
}

cat >"$tmp/DumpSelf.java" <<'EOF'
import com.sun.management.HotSpotDiagnosticMXBean;
import java.lang.management.ManagementFactory;
import java.util.*;

public class DumpSelf {
    static Object keep;

    public static void main(String[] args) throws Exception {
        String dir = args[0], jcmd = args[1];
        List<Object> l = new ArrayList<>();
        Map<String, int[]> m = new HashMap<>();
        for (int i = 0; i < 20000; i++) {
            m.put("k" + i, new int[i % 13]);
            if (i % 10 == 0)
                l.add(new Object[] {Integer.valueOf(i), "s" + i, new long[3], new char[] {'x'}});
        }
        l.add(m);
        l.add(new double[7]);
        l.add(new boolean[5]);
        l.add(new Thread("parked"));
        keep = l;
        HotSpotDiagnosticMXBean bean =
            ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
        bean.dumpHeap(dir + "/plain.hprof", true);
        long pid = ProcessHandle.current().pid();
        Process p = new ProcessBuilder(jcmd, Long.toString(pid), "GC.heap_dump", "-gz=1",
                                       dir + "/jcmd.hprof.gz")
                        .inheritIO()
                        .start();
        if (p.waitFor() != 0)
            throw new IllegalStateException("jcmd failed");
        System.out.println(keep.hashCode() != 0 ? "dumped" : "");
    }
}
EOF

"$java" -Xshare:off -Xmx128m "$tmp/DumpSelf.java" "$tmp" "$jcmd" >"$tmp/java.out" 2>&1 ||
    { cat "$tmp/java.out" >&2; fail "the Java program could not dump its heap"; }
[ -s "$tmp/plain.hprof" ] || fail "no plain.hprof"
[ -s "$tmp/jcmd.hprof.gz" ] || fail "no jcmd.hprof.gz"

for f in plain.hprof jcmd.hprof.gz; do
    # accepted with --lenient-traces, with no error at all
    expect 0 "$reader" --lenient-traces --json "$tmp/$f"
    cp "$tmp/out" "$tmp/$f.json"
    [ "$(json_num errors "$tmp/$f.json")" = 0 ] || fail "$f: errors in $(cat "$tmp/$f.json")"
    [ "$(json_num dangling "$tmp/$f.json")" = 0 ] || fail "$f: dangling references"
    [ "$(json_num instances "$tmp/$f.json")" -gt 10000 ] || fail "$f: too few instances"
    [ "$(json_num segments "$tmp/$f.json")" -ge 1 ] || fail "$f: no heap dump segments"
    grep -q '"complete":true' "$tmp/$f.json" || fail "$f: heap dump not completely parsed"
    # without it, the only errors are the LOAD CLASS trace serials defined later
    expect 1 "$reader" --json --max-reports 1 "$tmp/$f"
    errors=$(json_num errors "$tmp/out")
    [ "$errors" = "$(json_num undefined-trace "$tmp/out")" ] ||
        fail "$f: errors other than undefined-trace: $(cat "$tmp/out")"
    [ "$errors" = "$(json_num 'LOAD CLASS' "$tmp/out")" ] ||
        fail "$f: undefined-trace errors ($errors) are not one per LOAD CLASS"
    grep -q '"kind":"undefined-trace","offset":[0-9]*,"message":"LOAD CLASS' "$tmp/out" ||
        fail "$f: the trace errors are not on LOAD CLASS records"
    # no START THREAD records: thread serials are warnings, errors with --strict-threads
    expect 1 "$reader" --lenient-traces --strict-threads -q "$tmp/$f"
    grep -q 'undefined-thread' "$tmp/err" || fail "$f: no thread serial errors with --strict-threads"
done
grep -q '"gzip":true' "$tmp/jcmd.hprof.gz.json" || fail "jcmd dump not seen as gzip"
grep -q '"gzip":false' "$tmp/plain.hprof.json" || fail "plain dump seen as gzip"

# stdin, plain and gzip; the text summary
expect 0 "$reader" --lenient-traces - <"$tmp/plain.hprof"
grep -q '^heap dump 1 at offset' "$tmp/out" || fail "no heap dump in the text summary"
grep -q '^0 errors' "$tmp/out" || fail "text summary does not end with 0 errors"
expect 0 "$reader" --lenient-traces -q - <"$tmp/jcmd.hprof.gz"
[ ! -s "$tmp/out" ] || fail "--quiet printed a summary"

# the same dump truncated: found
head -c 1000000 "$tmp/plain.hprof" >"$tmp/cut.hprof"
expect 1 "$reader" --lenient-traces -q "$tmp/cut.hprof"
grep -q '\[truncated\]' "$tmp/err" || fail "truncation not reported"

echo "ok: $(json_num records "$tmp/plain.hprof.json") records, $(json_num instances "$tmp/plain.hprof.json") instances (plain); $(json_num instances "$tmp/jcmd.hprof.gz.json") instances (jcmd -gz=1)"
echo "SUITE hprof_read_hotspot: 1 passed, 0 failed"

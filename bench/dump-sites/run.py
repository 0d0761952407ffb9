#!/usr/bin/env python3
"""What linking objects to their allocation sites costs a dump (issue 30).

    bench/dump-sites/run.py LIB JDK_HOME MB [runs]

Runs bench/heap-dump/MixedHeap (about MB megabytes of mixed live objects, then exit) with
heap=all,format=b (exact heap=sites), once as is (the heap dump's objects carry their sites)
and once with HPROF_DUMP_SITES=n (they do not), interleaved, `runs` times each, output in
/dev/shm. For each run: the heap dump section's own time (its summary line, "HPROF: heap dump:
... s") and the whole exit dump's wall time (from "HPROF: dumping profile" to "HPROF: dump to
... done", read as the lines arrive: heap dump, SITES and the rest), then the medians.
"""
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def run(java, lib, work, mb, sites):
    env = dict(os.environ)
    if not sites:
        env["HPROF_DUMP_SITES"] = "n"
    cmd = [java, "-Xms2g", "-Xmx2g", "-XX:+UseG1GC",
           f"-agentpath:{lib}=heap=all,format=b,file={work}/out.hprof", "-cp", work, "MixedHeap",
           str(mb), "0"]
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    start = end = None
    heap = None
    summary = ""
    for line in p.stderr:
        now = time.monotonic()
        if "HPROF: dumping profile" in line:
            start = now
        elif re.search(r"HPROF: dump to .* done", line):
            end = now
        m = re.search(r"HPROF: heap dump: \d+ objects .*, ([0-9.]+) s$", line.strip())
        if m:
            heap = float(m.group(1))
            summary = line.strip()
    p.wait()
    os.unlink(f"{work}/out.hprof")
    if p.returncode != 0 or start is None or end is None or heap is None:
        sys.exit(f"run failed: {cmd}")
    return heap, end - start, summary


def main():
    lib, jdk, mb = sys.argv[1], sys.argv[2], int(sys.argv[3])
    runs = int(sys.argv[4]) if len(sys.argv) > 4 else 5
    here = os.path.dirname(os.path.abspath(__file__))
    work = tempfile.mkdtemp(prefix="hprof-dump-sites.", dir="/dev/shm")
    try:
        subprocess.run([f"{jdk}/bin/javac", "-d", work, f"{here}/../heap-dump/MixedHeap.java"],
                       check=True)
        res = {True: [], False: []}
        for r in range(1, runs + 1):
            for sites in (True, False):
                heap, total, summary = run(f"{jdk}/bin/java", lib, work, mb, sites)
                res[sites].append((heap, total))
                print(f"run {r} {'sites   ' if sites else 'no sites'}: heap dump {heap:.2f} s, "
                      f"exit dump {total:.2f} s  ({summary})", flush=True)
        for i, what in ((0, "heap dump"), (1, "exit dump")):
            w = statistics.median(x[i] for x in res[True])
            wo = statistics.median(x[i] for x in res[False])
            print(f"median {what}: with sites {w:.2f} s, without {wo:.2f} s, ratio {w / wo:.3f}")
        print("load average:", open("/proc/loadavg").read().split()[:3])
    finally:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()

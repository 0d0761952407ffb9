#!/usr/bin/env python3
"""What linking objects to their allocation sites costs a dump (issue 30).

    bench/dump-sites/run.py LIB JDK_HOME MB [runs] [--walks] [--compare LIB2]

Runs bench/heap-dump/MixedHeap (about MB megabytes of mixed live objects, then exit) with
heap=all,format=b (exact heap=sites), once as is (the heap dump's objects carry their sites)
and once with HPROF_DUMP_SITES=n (they do not), interleaved, `runs` times each, output in
/dev/shm. With --walks, a third run each time with HPROF_DUMP_SITES=walks: heap=sites' walks
run where they do with sites, but nothing is kept and nothing looked up (the floor: what the
VM costs for the walks' place, whatever the map does). With --compare, every configuration
runs with LIB2 too, in the same rounds (a build before a change against one after it).

For each run: the heap dump section's own time (its summary line, "HPROF: heap dump: ... s")
and the whole exit dump's wall time (from "HPROF: dumping profile" to "HPROF: dump to ...
done", read as the lines arrive: heap dump, SITES and the rest), the CPU time the VM thread
and the whole process spent over the same span (/proc schedstat of each thread: the heap walks
and the records they write run on the VM thread, the rest of the dump on the thread that asked
for it; CPU time leaves out the time the dump waited for a CPU on a loaded machine), then the
medians and each configuration's ratios to the run without sites of the same library.
"""
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time


def vm_thread_cpu(pid):
    """Nanoseconds the process's "VM Thread" and all its threads have run, as a pair (None if
    the process is gone or going: a process that has exited but is not reaped yet lists only
    its main thread)."""
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return None
    vm, total = None, 0
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                comm = f.read().strip()
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                ns = int(f.read().split()[0])
        except OSError:
            continue
        total += ns
        if comm == "VM Thread":
            vm = ns
    return None if vm is None else (vm, total)


class CpuWatch(threading.Thread):
    """Reads the VM thread's CPU time every few ms while the process runs: its "done" line
    may be read after the process has exited, and the last reading stands in for that moment
    (the VM thread does little between the two)."""

    def __init__(self, pid):
        super().__init__(daemon=True)
        self.pid, self.last, self.stopped = pid, None, False

    def run(self):
        while not self.stopped:
            v = vm_thread_cpu(self.pid)
            if v is None and self.last is not None:
                return
            self.last = v if v is not None else self.last
            time.sleep(0.005)


def run(java, lib, work, mb, mode):
    env = dict(os.environ)
    if mode != "sites":
        env["HPROF_DUMP_SITES"] = "n" if mode == "no sites" else "walks"
    cmd = [java, "-Xms2g", "-Xmx2g", "-XX:+UseG1GC",
           f"-agentpath:{lib}=heap=all,format=b,file={work}/out.hprof", "-cp", work, "MixedHeap",
           str(mb), "0"]
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    watch = CpuWatch(p.pid)
    watch.start()
    start = end = None
    cpu_start = cpu_end = None
    heap = None
    summary = ""
    for line in p.stderr:
        now = time.monotonic()
        if "HPROF: dumping profile" in line:
            start = now
            cpu_start = vm_thread_cpu(p.pid)
            if cpu_start is None:
                cpu_start = watch.last
        elif re.search(r"HPROF: dump to .* done", line):
            end = now
            cpu_end = vm_thread_cpu(p.pid)
            if cpu_end is None:
                watch.join()
                cpu_end = watch.last
        m = re.search(r"HPROF: heap dump: \d+ objects .*, ([0-9.]+) s$", line.strip())
        if m:
            heap = float(m.group(1))
            summary = line.strip()
    p.wait()
    watch.stopped = True
    os.unlink(f"{work}/out.hprof")
    if (p.returncode != 0 or start is None or end is None or heap is None or cpu_start is None or
            cpu_end is None):
        sys.exit(f"run failed: {cmd}")
    return (heap, end - start, (cpu_end[0] - cpu_start[0]) / 1e9,
            (cpu_end[1] - cpu_start[1]) / 1e9, summary)


MEASURES = ("heap dump", "exit dump", "exit dump's VM thread CPU", "exit dump's CPU")


def main():
    args = sys.argv[1:]
    walks = "--walks" in args
    args = [a for a in args if a != "--walks"]
    usage = "usage: bench/dump-sites/run.py LIB JDK_HOME MB [runs] [--walks] [--compare LIB2]"
    libs = {}
    if "--compare" in args:
        i = args.index("--compare")
        if i + 1 >= len(args):
            sys.exit(usage)
        libs["LIB2"] = args[i + 1]
        del args[i:i + 2]
    if len(args) < 3 or not args[2].isdigit() or (len(args) > 3 and not args[3].isdigit()):
        sys.exit(usage)
    lib, jdk, mb = args[0], args[1], int(args[2])
    libs = {"LIB": lib, **libs}
    runs = int(args[3]) if len(args) > 3 else 5
    modes = ("sites", "no sites") + (("walks",) if walks else ())
    here = os.path.dirname(os.path.abspath(__file__))
    work = tempfile.mkdtemp(prefix="hprof-dump-sites.", dir="/dev/shm")
    try:
        subprocess.run([f"{jdk}/bin/javac", "-d", work, f"{here}/../heap-dump/MixedHeap.java"],
                       check=True)
        res = {(name, mode): [] for name in libs for mode in modes}
        for r in range(1, runs + 1):
            for name, path in libs.items():
                for mode in modes:
                    heap, total, vm, cpu, summary = run(f"{jdk}/bin/java", path, work, mb, mode)
                    res[(name, mode)].append((heap, total, vm, cpu))
                    print(f"run {r} {name} {mode:8s}: heap dump {heap:.2f} s, exit dump "
                          f"{total:.2f} s, CPU {cpu:.3f} s (VM thread {vm:.3f} s)  ({summary})",
                          flush=True)
        print(f"\nmedians of {runs} runs ({', '.join(f'{n} = {p}' for n, p in libs.items())}), "
              f"and ratios to the same library without sites:")
        for name in libs:
            for i, what in enumerate(MEASURES):
                base = statistics.median(x[i] for x in res[(name, "no sites")])
                cells = []
                for mode in modes:
                    m = statistics.median(x[i] for x in res[(name, mode)])
                    cells.append(f"{mode} {m:.3f} s" +
                                 ("" if mode == "no sites" else f" (ratio {m / base:.3f})"))
                print(f"{name} {what:27s}: " + ", ".join(cells))
        print("load average:", open("/proc/loadavg").read().split()[:3])
    finally:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()

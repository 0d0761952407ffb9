#!/usr/bin/env python3
"""What whole-process sampling (cpu=samples, vmthreads=y, the default) costs over Java-only
sampling (vmthreads=n): process CPU, paired runs, a confidence interval and a verdict.

    bench/cpu-samples/vmthreads_overhead.py --agent build/agent/libhprof.so \\
        [--jdk 17 --jdk 21 --jdk 25] [--workloads javac,h2] [--pairs 6] [--target 2]
        [--concurrent] [--raw FILE.jsonl]        (and --report FILE.jsonl: the tables of a raw file;
                                                  --self-test: the statistics, no JVM)

Design (doc/cpu-samples.md, "Whole-process sampling: a paired measurement"):
- each run is one JVM that runs the workload several times (bench/cpu-samples/Repeat.java):
  the first iterations (JIT warm-up) are left out and the process's CPU time (all threads) of
  the later ones is the run's figure, so start-up, class loading and most JIT work fall out;
- runs come in pairs, one vmthreads=y and one vmthreads=n, back to back, the order
  alternating from pair to pair; the pairs of all JDKs and workloads are interleaved, so a
  change of machine load falls on both halves of a pair; with --concurrent the two JVMs of a
  pair run at the same time (on a loaded machine both then see the same load);
- each pair gives the ratio y/n; a cell (JDK x workload) reports the median ratio and a
  distribution-free confidence interval for it (sign test: order statistics of the ratios,
  coverage >= 90%); all pairs of all cells together give the pooled figure;
- the verdict is on the process's CPU over the whole run (the issue's measure; the steady
  state's figure is printed too: on a loaded machine the JIT's work slips from the warm-up
  into the measured iterations and makes it noisier, not steadier; and so is the steady state
  less the JIT compiler threads' CPU, the largest noise, which vmthreads=y does not touch:
  no signal goes to them, their CPU clocks are only read; the JVMs run with
  -XX:-UseDynamicNumberOfCompilerThreads so that no compiler thread exits with its time);
- verdict: PASS when the interval's upper end is at most 1 + target, FAIL when its lower end
  is above it, UNRESOLVED otherwise (the run cannot tell: more pairs or a quieter machine).
Also per cell: the whole process's CPU (wait4, start-up and exit dump included), the agent's
own account of the scan of /proc/self/task (scans x CPU per scan, from its verbose line, as a
share of the process's CPU), and the peak RSS with the heap's peak committed size (to tell G1's
heap sizing from memory the agent keeps).
Not run by meson test or CI.
"""
import argparse
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
WORKLOADS_DIR = HERE.parent / "workloads"
H2_JAR = "/usr/share/java/h2.jar"
JDKS = {"17": "/usr/lib/jvm/java-17-openjdk-amd64",
        "21": os.path.expanduser("~/.cache/hprof-jdks/homes/jdk-21"),
        "25": os.path.expanduser("~/.cache/hprof-jdks/homes/jdk-25")}
# name: (main class, args (work dir substituted), warm-up iterations, measured iterations)
WORKLOADS = {"javac": ("JavacMany", ["60", "{work}/javac"], 3, 3),
             "h2": ("H2Jdbc", ["20000"], 3, 3)}
SCAN_RE = re.compile(r"(\d+) scans of /proc/self/task, ([0-9.]+) us of CPU each")


def sign_test_ci(values, coverage=0.90):
    """Distribution-free interval for the median: [x(k), x(n+1-k)] with the largest k whose
    coverage 1 - 2 P(Binomial(n, 1/2) < k) is at least `coverage`; None if n is too small."""
    xs = sorted(values)
    n = len(xs)
    best = None
    tail = 0.0
    for k in range(1, n // 2 + 1):
        tail += math.comb(n, k - 1) / 2 ** n  # P(B <= k-1)
        if 1 - 2 * tail < coverage:
            break
        best = (xs[k - 1], xs[n - k], 1 - 2 * tail)
    return best


def verdict(ci, target):
    if ci is None:
        return "UNRESOLVED"
    lo, hi, _ = ci
    if hi <= 1 + target:
        return "PASS"
    if lo > 1 + target:
        return "FAIL"
    return "UNRESOLVED"


def pct(r):
    return f"{(r - 1) * 100:+.1f}%"


def start(java, classes, agent, mode, wl, scratch):
    """Starts one run; finish() waits for it."""
    main, args, warm, measured = WORKLOADS[wl]
    work = scratch / mode  # each mode its own directory: concurrent pairs run side by side
    work.mkdir(exist_ok=True)
    out = work / "hprof.txt"
    cp = str(classes) + (":" + H2_JAR if wl == "h2" else "")
    cmd = [java, "-Xmx1g", "-XX:+UseG1GC", "-XX:-UseDynamicNumberOfCompilerThreads",
           f"-agentpath:{agent}=cpu=samples,interval=10,vmthreads={mode},file={out}",
           "-cp", cp, "Repeat", str(warm), str(measured), main] + [a.format(work=work) for a in args]
    env = {k: v for k, v in os.environ.items() if k not in ("JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS")}
    so, se = tempfile.TemporaryFile(), tempfile.TemporaryFile()
    p = subprocess.Popen(cmd, stdout=so, stderr=se, env=env)
    return {"p": p, "so": so, "se": se, "out": out, "what": f"{wl} vmthreads={mode}", "t0": time.monotonic()}


def finish(h, timeout):
    """Waits for the run (wait4: its own rusage, exactly the JVM's) and reads its figures."""
    p = h["p"]
    while True:
        pid, status, ru = os.wait4(p.pid, os.WNOHANG)
        if pid:
            break
        if time.monotonic() - h["t0"] > timeout:
            p.kill()
            os.wait4(p.pid, 0)
            raise SystemExit(f"{h['what']}: over {timeout} s")
        time.sleep(0.05)
    p.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
    wall = time.monotonic() - h["t0"]
    for f in (h["so"], h["se"]):
        f.seek(0)
    stdout, stderr = (f.read().decode(errors="replace") for f in (h["so"], h["se"]))
    h["so"].close()
    h["se"].close()
    if p.returncode != 0:
        raise SystemExit(f"{h['what']}: exit {p.returncode}\n{stderr[-2000:]}")
    m = re.search(r"^measured cpu_ns=(\d+) wall_ns=(\d+) jit_cpu_ns=(\d+)", stdout, re.M)
    mem = re.search(r"^memory heap_peak_committed_kb=(\d+) vmhwm_kb=(\d+)", stdout, re.M)
    out = h["out"]
    if not m or not mem or not out.exists() or "CPU SAMPLES BEGIN" not in out.read_text(errors="replace"):
        raise SystemExit(f"{h['what']}: no measurement or no CPU SAMPLES\n{stdout[-1000:]}{stderr[-1000:]}")
    scan = SCAN_RE.search(stderr)
    out.unlink()
    return {"steady": int(m.group(1)) / 1e9, "nojit": (int(m.group(1)) - int(m.group(3))) / 1e9, "wall": wall, "heap_kb": int(mem.group(1)),
            "hwm_kb": int(mem.group(2)), "results": tuple(re.findall(r"^result: .*$", stdout, re.M)),
            "process": ru.ru_utime + ru.ru_stime,
            "scan_s": int(scan.group(1)) * float(scan.group(2)) / 1e6 if scan else None}


def run_pair(java, classes, agent, order, wl, scratch, timeout, concurrent):
    if not concurrent:
        return {m: finish(start(java, classes, agent, m, wl, scratch), timeout) for m in order}
    hs = {m: start(java, classes, agent, m, wl, scratch) for m in order}
    return {m: finish(h, timeout) for m, h in hs.items()}


def load():
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def self_test():
    """The statistics on made-up ratios, against a brute-force count of the sign test."""
    import itertools
    failed = 0
    for n in range(1, 13):
        xs = [1 + 0.01 * k for k in range(n)]
        ci = sign_test_ci(list(reversed(xs)))
        # brute force: the coverage of [x(k), x(n+1-k)] is the share of the 2^n sign patterns
        # with at least k and at most n-k values below the median
        best = None
        for k in range(1, n // 2 + 1):
            cover = sum(k <= sum(signs) <= n - k for signs in itertools.product((0, 1), repeat=n)) / 2 ** n
            if cover >= 0.90:
                best = (xs[k - 1], xs[n - k], cover)
        if (ci is None) != (best is None) or (ci and any(abs(a - b) > 1e-12 for a, b in zip(ci, best))):
            print(f"FAIL sign_test_ci n={n}: {ci} != {best}")
            failed += 1
    cases = [((0.99, 1.019, 0.9), "PASS"), ((1.021, 1.05, 0.9), "FAIL"), ((0.99, 1.03, 0.9), "UNRESOLVED"),
             (None, "UNRESOLVED")]
    for ci, want in cases:
        if verdict(ci, 0.02) != want:
            print(f"FAIL verdict {ci}: {verdict(ci, 0.02)} != {want}")
            failed += 1
    print(f"self-test: {'ok' if not failed else f'{failed} failed'}")
    return 1 if failed else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--agent", help="libhprof.so")
    ap.add_argument("--jdk", action="append", help="17, 21, 25 or a JDK home (repeat; default 17, 21, 25)")
    ap.add_argument("--workloads", default="javac,h2")
    ap.add_argument("--pairs", type=int, default=6, help="pairs per JDK and workload (default 6)")
    ap.add_argument("--target", type=float, default=2.0, help="allowed cost, per cent (default 2)")
    ap.add_argument("--concurrent", action="store_true",
                    help="run the two JVMs of a pair at the same time (for a loaded machine: both see the same load)")
    ap.add_argument("--raw", help="append each pair's figures to this file (JSON lines) as they come")
    ap.add_argument("--report", help="print the tables of a --raw file (of a run cut short) and exit")
    ap.add_argument("--self-test", action="store_true", help="check the statistics on made-up ratios (no JVM)")
    ap.add_argument("--timeout", type=int, default=900, help="limit of one run, seconds")
    a = ap.parse_args()
    if a.self_test:
        sys.exit(self_test())
    if a.report:
        pairs = {}
        for line in open(a.report):
            r = json.loads(line)
            pairs.setdefault((r["jdk"], r["workload"]), []).append(r["runs"])
        report(pairs, a.target / 100, 0)
        return
    if not a.agent:
        ap.error("--agent is required")
    agent = os.path.realpath(a.agent)
    jdks = [JDKS.get(j, j) for j in (a.jdk or ["17", "21", "25"])]
    jdks = [j for j in jdks if Path(j, "bin", "java").exists() or print(f"skipped, no JDK: {j}")]
    wls = a.workloads.split(",")
    target = a.target / 100
    scratch = Path(tempfile.mkdtemp(prefix="vmthreads-bench-"))
    try:
        classes = scratch / "classes"
        javac = shutil.which("javac") or str(Path(jdks[0], "bin", "javac"))
        subprocess.run([javac, "--release", "17", "-nowarn", "-cp", H2_JAR, "-d", str(classes),
                        str(WORKLOADS_DIR / "JavacMany.java"), str(WORKLOADS_DIR / "H2Jdbc.java"),
                        str(HERE / "Repeat.java")], check=True)
        print(f"# vmthreads=y against vmthreads=n, cpu=samples,interval=10; {a.pairs} pairs per cell"
              f"{', the two runs of a pair concurrent' if a.concurrent else ''}; "
              f"load {load()} at start; {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}", flush=True)
        pairs = {}
        t_start = time.monotonic()
        for i in range(a.pairs):
            for ji, jdk in enumerate(jdks):
                for wi, wl in enumerate(wls):
                    order = ("y", "n") if (i + ji + wi) % 2 == 0 else ("n", "y")
                    got = run_pair(str(Path(jdk, "bin", "java")), classes, agent, order, wl, scratch,
                                   a.timeout, a.concurrent)
                    pairs.setdefault((jdk, wl), []).append(got)
                    if a.raw:
                        with open(a.raw, "a") as f:
                            f.write(json.dumps({"jdk": jdk, "workload": wl, "pair": i + 1, "order": order,
                                                "runs": got}) + "\n")
                    y, n = got["y"], got["n"]
                    if y["results"] != n["results"]:
                        raise SystemExit(f"{wl} on {jdk}: the two modes computed different results")
                    print(f"pair {i + 1} {Path(jdk).name} {wl} ({order[0]} first): steady CPU y {y['steady']:.2f} s "
                          f"n {n['steady']:.2f} s ({pct(y['steady'] / n['steady'])}); process CPU "
                          f"{pct(y['process'] / n['process'])}; peak RSS {y['hwm_kb'] / 1024:.0f}/{n['hwm_kb'] / 1024:.0f} MiB "
                          f"(heap {y['heap_kb'] / 1024:.0f}/{n['heap_kb'] / 1024:.0f}); "
                          f"load {load()}; {time.monotonic() - t_start:.0f} s", flush=True)
        report(pairs, target, time.monotonic() - t_start)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def report(pairs, target, elapsed):
    print("\n# process CPU = user + system CPU of the whole JVM (wait4: start-up, warm-up and exit dump included);"
          " steady CPU = process CPU of the measured iterations only; ratio = vmthreads=y / vmthreads=n of one"
          " pair; CI = sign-test interval of the median ratio\n")
    print("| JDK | workload | pairs | process CPU y / n s | median ratio | CI (coverage) | verdict "
          "| steady CPU y / n s | median ratio | CI | steady CPU without JIT y / n s | median ratio | CI "
          "| scan CPU / process CPU | peak RSS ratio "
          "| heap peak committed ratio | pairs with y's peak RSS higher |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    pooled = {"process": [], "steady": [], "nojit": []}
    for (jdk, wl), ps in pairs.items():
        cols = []
        for key in ("process", "steady", "nojit"):
            if any(key not in p["y"] for p in ps):  # a --raw file of an earlier version
                cols.append("n/a | n/a | n/a")
                continue
            ratios = [p["y"][key] / p["n"][key] for p in ps]
            pooled[key] += ratios
            ci = sign_test_ci(ratios)
            cols.append(f"{statistics.median(p['y'][key] for p in ps):.2f} / "
                        f"{statistics.median(p['n'][key] for p in ps):.2f} | {pct(statistics.median(ratios))} | "
                        + (f"{pct(ci[0])} .. {pct(ci[1])} ({ci[2]:.0%})" if ci else "too few pairs")
                        + (f" | {verdict(ci, target)}" if key == "process" else ""))
        scan = [p["y"]["scan_s"] / p["y"]["process"] for p in ps if p["y"]["scan_s"] is not None]
        print(f"| {Path(jdk).name} | {wl} | {len(ps)} | {cols[0]} | {cols[1]} | {cols[2]} | "
              f"{statistics.median(scan) * 100 if scan else float('nan'):.3f}% | "
              f"{statistics.median(p['y']['hwm_kb'] / p['n']['hwm_kb'] for p in ps):.3f} | "
              f"{statistics.median(p['y']['heap_kb'] / p['n']['heap_kb'] for p in ps):.3f} | "
              f"{sum(p['y']['hwm_kb'] > p['n']['hwm_kb'] for p in ps)} of {len(ps)} |")
    print()
    for key, what in (("nojit", "steady-state process CPU less the JIT compiler threads'"),
                      ("steady", "steady-state process CPU (measured iterations)"),
                      ("process", "process CPU (whole run)")):
        if not pooled[key]:
            continue
        ci = sign_test_ci(pooled[key])
        v = verdict(ci, target)
        ci_s = f"{pct(ci[0])} .. {pct(ci[1])} ({ci[2]:.0%} CI)" if ci else "no CI"
        word = {"PASS": "resolved, within", "FAIL": "resolved, above", "UNRESOLVED": "not resolved against"}[v]
        print(f"{'VERDICT' if key == 'process' else key}: {v}: vmthreads=y costs "
              f"{pct(statistics.median(pooled[key]))} of {what} over vmthreads=n (median of {len(pooled[key])} "
              f"paired ratios, {ci_s}): {word} the +{target * 100:g}% target")
    print(f"load {load()} at the end; {elapsed / 60:.1f} min")


if __name__ == "__main__":
    main()

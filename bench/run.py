#!/usr/bin/env python3
"""hprof benchmark: the agent's overhead against no agent and against JFR, on real workloads.

For each workload and each agent mode it runs the workload without an agent, with the agent
(-agentpath:<libhprof.so>=<mode>,file=<temp>) and with the comparable JFR setting, alternating
the configurations run after run, several times, and prints a table of the median wall time,
CPU time (user + system of the JVM process) and peak RSS, with ratios to the run without an
agent, and pass/fail against each profile's overhead target. The heap=dump mode has its own
table: the agent's dump of a large live heap against `jcmd <pid> GC.heap_dump` (plain and
-gz=1) on the same heap. The results also go to bench/results/<date>-jdk<N>[-quick].md.

    bench/run.py                         # the full benchmark on the default JDK (17)
    bench/run.py --jdk 17 --jdk 25       # both JDKs, one results file each
    bench/run.py --quick                 # a few minutes: small workloads, 1 run each
    bench/run.py --modes sites,samples --workloads h2,javac
    bench/run.py --self-test             # seconds: checks the harness itself (meson test)

See doc/bench.md for the methodology and what each column means.
"""

import argparse
import datetime
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
WORKLOAD_DIR = BENCH / "workloads"
JFR_DIR = BENCH / "jfr"
RESULTS_DIR = BENCH / "results"
DOC = REPO / "doc" / "bench.md"

JDK_ALIASES = {
    "17": "/usr/lib/jvm/java-17-openjdk-amd64",
    "21": "/usr/lib/jvm/java-21-openjdk-amd64",
    "25": "/usr/lib/jvm/temurin-25-jdk-amd64",
}

SHARE = "/usr/share/java"

# Which modes run on which workload by default (--modes overrides): each profile on the
# workloads its targets name, and on a few more where its cost tells something.
SITES = ("sites", "sites-sampled")
CPU = ("samples", "samples-1ms", "times")

# ---- what is measured ---------------------------------------------------------------------


@dataclass
class Workload:
    name: str
    main: str  # class name; its source is bench/workloads/<main>.java
    what: str
    full: list  # program arguments; "{work}" is replaced by a scratch directory
    quick: list
    xmx: str = "1g"
    xmx_quick: str = "1g"
    jars: list = field(default_factory=list)
    packages: list = field(default_factory=list)  # Debian packages that provide the jars
    kind: str = "fixed"  # fixed: fixed work, compare times; rate: fixed time, compare throughput; dump
    rate_re: str = ""  # kind=rate: regex with one group, the throughput (higher is better)
    rate_unit: str = ""
    modes: tuple = ()  # the modes run on it when --modes is not given


WORKLOADS = [
    Workload("h2", "H2Jdbc", "H2 database (libh2-java) through JDBC, in-memory: inserts, indexed queries, "
             "joins, updates", ["80000"], ["10000"],
             jars=[f"{SHARE}/h2.jar"], packages=["libh2-java"], modes=SITES + CPU + ("monitor",)),
    Workload("javac", "JavacMany", "javac in-process (javax.tools) compiling generated sources (200 files full, "
             "40 quick)", ["200", "{work}/javac"], ["40", "{work}/javac"], modes=SITES + CPU),
    Workload("xalan", "XalanTransform", "Xalan-J (libxalan2-java) XSLT: grouping/sorting transform of a "
             "generated XML document", ["15000", "4"], ["2000", "2"],
             jars=[f"{SHARE}/xalan2.jar", f"{SHARE}/serializer.jar"], packages=["libxalan2-java"],
             modes=SITES + CPU),
    Workload("alloc", "AllocDense", "allocation-dense microbenchmark, 2 threads", ["2", "12"], ["2", "3"],
             modes=SITES + ("samples",)),
    Workload("cpu", "CpuBound", "CPU-bound microbenchmark (recursion, loops, floating point), 2 threads",
             ["2", "2000"], ["2", "200"], modes=("sites-sampled",) + CPU),
    Workload("locks", "LockContended", "fixed work on one contended monitor, 4 threads (+ wait/notify pair)",
             ["4", "1500"], ["4", "300"], modes=("sites-sampled", "samples", "monitor")),
    # The monitor profile's own lock benchmark (runs for a fixed time, reports a throughput);
    # used when bench/workloads/LockHeavy.java exists on this branch.
    Workload("lockheavy", "LockHeavy", "LockHeavy yield 4 (monitor profile's benchmark): fixed time, "
             "throughput compared", ["yield", "4", "5000"], ["yield", "4", "1000"],
             kind="rate", rate_re=r"ops_per_ms=([0-9.]+)", rate_unit="ops/ms", modes=("monitor",)),
    Workload("heap", "BigHeap", "about 1 GiB live heap (200 MiB quick), dumped while it waits",
             ["1024"], ["200"], xmx="2560m", xmx_quick="640m", kind="dump", modes=("dump",)),
]


@dataclass
class Mode:
    name: str
    opts: str  # agent options (the harness adds file=)
    marker: str  # texts (separated by ";") the agent's output must contain, else the mode had no effect
    jfr: Optional[str]  # comparable JFR configuration
    targets: dict  # workload name (or "*") -> largest allowed slowdown
    note: str = ""


MODES = [
    Mode("sites", "heap=sites", "SITES BEGIN", "jfr-profile", {"h2": 4.0, "javac": 3.0, "alloc": 20.0}),
    Mode("sites-sampled", "heap=sites,sites_interval=524288", "SITES BEGIN", "jfr-profile", {"*": 1.05}),
    Mode("samples", "cpu=samples,interval=10", "CPU SAMPLES BEGIN", "jfr-exec10", {"h2": 1.03, "javac": 1.03}),
    Mode("samples-1ms", "cpu=samples,interval=1", "CPU SAMPLES BEGIN", "jfr-exec10", {},
         note="no JFR setting samples every 1 ms: compared with JFR at 10 ms"),
    # Java threads only (vmthreads=n: cpu=samples before issue 28), to price the GC/JIT/VM
    # threads' accounting; on no workload by default.
    Mode("samples-java", "cpu=samples,interval=10,vmthreads=n", "CPU SAMPLES BEGIN", "jfr-exec10", {}),
    # The old safepoint sampler (sampler=safepoint), for comparison; on no workload by default.
    Mode("samples-safepoint", "cpu=samples,interval=10,sampler=safepoint", "CPU SAMPLES BEGIN", "jfr-exec10", {}),
    Mode("times", "cpu=times", "CPU TIME (ms) BEGIN", "jfr-profile", {"javac": 3.0},
         note="JFR has no exact method times: compared with settings=profile"),
    Mode("monitor", "monitor=y", "MONITOR TIME BEGIN", "jfr-monitor", {}),
    Mode("dump", "heap=dump,format=b", "", None, {}),  # the heap workload's own flow, below
    # Hadoop's task profiler default; on no workload by default (--modes hadoop).
    Mode("hadoop", "cpu=samples,heap=sites,force=n,thread=y,verbose=n", "SITES BEGIN;CPU SAMPLES BEGIN",
         "jfr-profile", {}),
]

# JFR configurations; {out} is the run's scratch directory.
JFR = {
    "jfr-profile": ("settings=profile", "-XX:StartFlightRecording=settings=profile,filename={out}/rec.jfr"),
    "jfr-exec10": ("jdk.ExecutionSample 10 ms",
                   "-XX:StartFlightRecording=settings=" + str(JFR_DIR / "execution-sample-10ms.jfc")
                   + ",filename={out}/rec.jfr"),
    "jfr-monitor": ("JavaMonitorEnter/Wait threshold 0",
                    "-XX:StartFlightRecording=settings=" + str(JFR_DIR / "monitor-enter.jfc")
                    + ",filename={out}/rec.jfr"),
}

# Targets of the heap=dump profile (see the heap table).
DUMP_TIME_LIMIT = 2.0  # agent dump time <= 2x jcmd GC.heap_dump
DUMP_GZ_LIMIT = 1.0  # agent gz=y dump time <= jcmd GC.heap_dump -gz=1
DUMP_MEMORY_LIMIT = 0.20  # extra peak RSS during the dump <= 20% of the live heap

# ---- running one JVM ----------------------------------------------------------------------


class Child:
    """A child process whose stdout and stderr are read line by line in the background, timed
    from start to exit with a monotonic clock, and reaped with wait4 for its rusage."""

    def __init__(self, argv, cwd, env, stdin_pipe=False):
        self.argv = argv
        self.lines = {"out": [], "err": []}
        self.closed = set()
        self.cond = threading.Condition()
        self.start = time.monotonic()
        self.p = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  stdin=subprocess.PIPE if stdin_pipe else subprocess.DEVNULL)
        self.pid = self.p.pid
        self.readers = [threading.Thread(target=self._read, args=(s, n), daemon=True)
                        for s, n in ((self.p.stdout, "out"), (self.p.stderr, "err"))]
        for t in self.readers:
            t.start()
        self.status = None

    def _read(self, stream, name):
        for raw in stream:
            line = raw.decode("utf-8", "replace").rstrip("\n")
            with self.cond:
                self.lines[name].append((time.monotonic(), line))
                self.cond.notify_all()
        with self.cond:
            self.closed.add(name)
            self.cond.notify_all()

    def wait_line(self, name, pattern, timeout, start_index=0):
        """The first line of stream `name` (from start_index on) matching pattern, as
        (time it was read, match), or None on timeout or end of the stream."""
        rx = re.compile(pattern)
        deadline = time.monotonic() + timeout
        i = start_index
        with self.cond:
            while True:
                while i < len(self.lines[name]):
                    t, line = self.lines[name][i]
                    m = rx.search(line)
                    if m:
                        return t, m
                    i += 1
                left = deadline - time.monotonic()
                if name in self.closed or left <= 0:
                    return None
                self.cond.wait(left)

    def send(self, text):
        try:
            self.p.stdin.write(text.encode())
            self.p.stdin.flush()
        except (BrokenPipeError, OSError):
            pass

    def finish(self, timeout):
        """Waits for the exit (killing the process after timeout seconds). Returns
        (exit code or -signal, wall seconds, CPU seconds, peak RSS in KiB, timed out)."""
        if self.p.stdin:
            try:
                self.p.stdin.close()
            except OSError:
                pass
        timed_out = threading.Event()

        def kill():
            timed_out.set()
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

        timer = threading.Timer(timeout, kill)
        timer.start()
        # Wait without reaping first, so the timer can never signal a recycled pid.
        while True:
            try:
                os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOWAIT)
                break
            except InterruptedError:
                continue
        wall = time.monotonic() - self.start
        timer.cancel()
        _, status, ru = os.wait4(self.pid, 0)
        self.p.returncode = os.waitstatus_to_exitcode(status)
        for t in self.readers:
            t.join(10)
        self.status = self.p.returncode
        return self.p.returncode, wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss, timed_out.is_set()

    def out(self, name):
        with self.cond:
            return [line for _, line in self.lines[name]]


def proc_cpu_seconds(pid):
    """User + system CPU of a live process so far, from /proc/<pid>/stat."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def proc_status_kib(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def child_env():
    env = dict(os.environ)
    for k in ("JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "LD_PRELOAD"):
        env.pop(k, None)
    env["LC_ALL"] = "C"
    return env


def dir_bytes(d):
    total = 0
    for root, _, files in os.walk(d):
        for f in files:
            try:
                total += os.path.getsize(os.path.join(root, f))
            except OSError:
                pass
    return total


def file_contains(path, text):
    needle = text.encode()
    try:
        with open(path, "rb") as f:
            tail = b""
            while True:
                chunk = f.read(1 << 20)
                if not chunk:
                    return False
                if needle in tail + chunk:
                    return True
                tail = chunk[-len(needle):]
    except OSError:
        return False


# ---- configurations and results -------------------------------------------------------------


@dataclass
class Config:
    key: str  # "none", a mode name, or a JFR key
    label: str  # what the table shows
    jvm_args: list  # extra JVM arguments ({out} replaced per run)
    mode: Optional[Mode] = None
    jfr: Optional[str] = None
    runs: list = field(default_factory=list)
    problem: str = ""  # set when the configuration failed: no more runs of it


@dataclass
class Run:
    wall: float
    cpu: float
    rss_kib: int
    out_bytes: int
    rate: Optional[float] = None


def describe_failure(code, timed_out, timeout, err_lines, out_lines, hs_err):
    if timed_out:
        return f"timeout (killed after {timeout:.0f} s)"
    hprof_err = [l for l in err_lines if "HPROF ERROR" in l]
    if hs_err or (code is not None and code < 0) or code in (134, 139):
        sig = -code if code is not None and code < 0 else None
        what = f"signal {signal.Signals(sig).name}" if sig else f"exit {code}"
        return f"crashed ({what}{', hs_err file' if hs_err else ''})"
    if hprof_err:
        return f"refused (exit {code}): {hprof_err[0].strip()}"
    tail = [l.strip() for l in err_lines + out_lines if l.strip()]
    return f"failed (exit {code}): {tail[-1][:160] if tail else 'no output'}"


# ---- the harness ----------------------------------------------------------------------------


class Bench:
    def __init__(self, args, jdk, agent, scratch):
        self.args = args
        self.jdk = Path(jdk)
        self.java = str(self.jdk / "bin" / "java")
        self.agent = agent
        self.scratch = Path(scratch)
        self.classes = self.scratch / "classes"
        self.env = child_env()
        self.run_counter = 0

    def log(self, msg):
        print(msg, flush=True)

    def compile(self, workloads):
        self.classes.mkdir(parents=True, exist_ok=True)
        sources = [str(WORKLOAD_DIR / f"{w.main}.java") for w in workloads]
        cp = ":".join(j for w in workloads for j in w.jars)
        cmd = [str(self.jdk / "bin" / "javac"), "--release", "17", "-nowarn", "-d", str(self.classes)]
        if cp:
            cmd += ["-cp", cp]
        r = subprocess.run(cmd + sources, capture_output=True, text=True, env=self.env)
        if r.returncode != 0:
            raise SystemExit(f"compiling the workloads failed:\n{r.stdout}{r.stderr}")

    def base_cmd(self, w, extra):
        cp = ":".join([str(self.classes)] + w.jars)
        xmx = w.xmx_quick if self.args.quick else w.xmx
        return [self.java, f"-Xmx{xmx}", "-XX:+UseG1GC"] + extra + ["-cp", cp, w.main]

    def program_args(self, w, work):
        return [a.replace("{work}", str(work)) for a in (w.quick if self.args.quick else w.full)]

    def new_rundir(self):
        self.run_counter += 1
        d = self.scratch / f"run-{self.run_counter}"
        d.mkdir()
        return d

    def config_args(self, cfg, out):
        return [a.replace("{out}", str(out)) for a in cfg.jvm_args]

    # -- fixed-work and throughput workloads --

    def run_once(self, w, cfg, expected, timeout):
        """One run of workload w in configuration cfg. Returns (Run, problem text or "",
        the result line)."""
        out = self.new_rundir()
        work = self.scratch / "work"
        cmd = self.base_cmd(w, self.config_args(cfg, out)) + self.program_args(w, work)
        child = Child(cmd, cwd=out, env=self.env)
        code, wall, cpu, rss, timed_out = child.finish(timeout)
        out_lines, err_lines = child.out("out"), child.out("err")
        hs_err = any(p.name.startswith("hs_err") for p in out.iterdir())
        size = dir_bytes(out)
        problem = ""
        result = next((l for l in out_lines if l.startswith("result:")), None)
        rate = None
        if code != 0 or timed_out or hs_err:
            problem = describe_failure(code, timed_out, timeout, err_lines, out_lines, hs_err)
        elif w.kind == "rate":
            m = next((re.search(w.rate_re, l) for l in out_lines if re.search(w.rate_re, l)), None)
            if not m:
                problem = "failed: no throughput line in the output"
            else:
                rate = float(m.group(1))
        elif result is None:
            problem = "failed: no result line in the output"
        elif expected is not None and result != expected:
            problem = f"wrong result: {result!r}, without agent {expected!r}"
        if not problem and cfg.mode and cfg.mode.marker:
            absent = [t for t in cfg.mode.marker.split(";") if not file_contains(out / "hprof.txt", t)]
            if absent:
                problem = f"no effect: no '{absent[0]}' in the agent's output"
                warning = next((l.strip() for l in err_lines if "HPROF WARNING" in l), None)
                if warning:
                    problem += f" ({warning[:160]})"
        shutil.rmtree(out, ignore_errors=True)
        shutil.rmtree(work, ignore_errors=True)
        return Run(wall, cpu, rss, size, rate), problem, result

    def bench_workload(self, w, modes, reps):
        configs = [Config("none", "no agent", [])]
        jfr_keys = []
        for m in modes:
            opts = f"{m.opts},file={{out}}/hprof.txt"
            configs.append(Config(m.name, f"hprof {m.opts}", [f"-agentpath:{self.agent}={opts}"], mode=m, jfr=m.jfr))
            if m.jfr and m.jfr not in jfr_keys:
                jfr_keys.append(m.jfr)
        for k in jfr_keys:
            configs.append(Config(k, f"JFR {JFR[k][0]}", [JFR[k][1]]))

        # Warm-up without an agent: fills the page cache, gives the expected result line and
        # the time the timeouts scale from. Not counted.
        warm, problem, expected = self.run_once(w, configs[0], None, self.args.timeout)
        if problem:
            return configs, f"the run without an agent failed: {problem}"
        timeout = min(self.args.timeout, max(300.0, 100 * warm.wall))
        self.log(f"  warm-up {warm.wall:.2f} s; {len(configs)} configurations x {reps} runs, "
                 f"timeout {timeout:.0f} s per run")
        for rep in range(reps):
            # A B C, then B C A, ...: no configuration always runs first in a round (or right
            # after the same other one).
            for cfg in configs[rep % len(configs):] + configs[:rep % len(configs)]:
                if cfg.problem:
                    continue
                run, problem, _ = self.run_once(w, cfg, expected, timeout)
                rate = f" {run.rate:.1f} {w.rate_unit}" if run.rate is not None else ""
                self.log(f"  [{rep + 1}/{reps}] {cfg.label:<55} {run.wall:7.2f} s wall {run.cpu:7.2f} s cpu "
                         f"{run.rss_kib / 1024:7.0f} MiB{rate}{'  ' + problem if problem else ''}")
                if problem:
                    cfg.problem = problem
                    if problem.startswith("no effect"):
                        cfg.runs.append(run)  # measured, but the profile did nothing
                else:
                    cfg.runs.append(run)
        return configs, ""

    # -- the heap dump workload --

    def dump_once(self, w, kind, timeout):
        """One run of the dump workload: kind is none, hprof, hprof-gz, jcmd or jcmd-gz.
        Returns a dict of measurements, or raises RuntimeError with the problem."""
        out = self.new_rundir()
        extra = []
        target = out / ("dump.hprof.gz" if kind.endswith("gz") else "dump.hprof")
        if kind.startswith("hprof"):
            opts = "heap=dump,format=b,doe=n,verbose=y" + (",gz=y" if kind == "hprof-gz" else "") + f",file={target}"
            extra = [f"-agentpath:{self.agent}={opts}"]
        cmd = self.base_cmd(w, extra) + self.program_args(w, out)
        child = Child(cmd, cwd=out, env=self.env, stdin_pipe=True)
        res = {}
        try:
            ready = child.wait_line("out", r"^READY used=(\d+) objects=(\d+)", timeout)
            if not ready:
                code, _, _, _, t = child.finish(10)
                raise RuntimeError(describe_failure(code, t, timeout, child.out("err"), child.out("out"), False)
                                   if code != 0 else "failed: no READY line")
            res["build"] = ready[0] - child.start
            res["used"] = int(ready[1].group(1))
            res["objects"] = int(ready[1].group(2))
            # Reset the peak RSS to the current RSS (Linux: "5" to clear_refs), so the peak after
            # the dump is the dump's own, not the heap build's; else compare with the old peak.
            try:
                with open(f"/proc/{child.pid}/clear_refs", "w") as f:
                    f.write("5")
            except OSError:
                pass
            res["rss_before"] = proc_status_kib(child.pid, "VmRSS")
            hwm_before = max(res["rss_before"], proc_status_kib(child.pid, "VmHWM"))
            cpu_before = proc_cpu_seconds(child.pid)
            if kind.startswith("hprof"):
                mark = len(child.out("err"))
                t0 = time.monotonic()
                os.kill(child.pid, signal.SIGQUIT)
                done = child.wait_line("err", r"^HPROF: dump to .* done", timeout, mark)
                if not done:
                    raise RuntimeError("failed: no 'HPROF: dump to ... done' line after SIGQUIT")
                res["dump"] = done[0] - t0
            elif kind.startswith("jcmd"):
                cmd = [str(self.jdk / "bin" / "jcmd"), str(child.pid), "GC.heap_dump"]
                if kind == "jcmd-gz":
                    cmd.append("-gz=1")
                t0 = time.monotonic()
                try:
                    r = subprocess.run(cmd + [str(target)], capture_output=True, text=True, env=self.env,
                                       timeout=timeout)
                except subprocess.TimeoutExpired:
                    raise RuntimeError(f"timeout: jcmd did not finish in {timeout:.0f} s")
                res["command"] = time.monotonic() - t0
                m = re.search(r"Heap dump file created \[(\d+) bytes in ([0-9.]+) secs\]", r.stdout)
                if r.returncode != 0 or not m:
                    raise RuntimeError(f"jcmd failed: {(r.stdout + r.stderr).strip()[-200:]}")
                res["dump"] = float(m.group(2))
            if kind != "none":
                res["dump_cpu"] = proc_cpu_seconds(child.pid) - cpu_before
                res["extra_kib"] = proc_status_kib(child.pid, "VmHWM") - hwm_before
                res["file"] = target.stat().st_size if target.exists() else 0
                if res["file"] < res["used"] / 100:
                    raise RuntimeError(f"no effect: the dump file has {res['file']} bytes for a "
                                       f"{res['used'] >> 20} MiB heap")
            child.send("exit\n")
            code, wall, cpu, rss, timed_out = child.finish(timeout)
            if code != 0 or timed_out:
                raise RuntimeError(describe_failure(code, timed_out, timeout, child.out("err"), child.out("out"),
                                                    any(p.name.startswith("hs_err") for p in out.iterdir())))
            res.update(wall=wall, cpu=cpu, rss_kib=rss)
            return res
        finally:
            if child.status is None:
                try:
                    os.kill(child.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                child.finish(30)
            shutil.rmtree(out, ignore_errors=True)

    def bench_dump(self, w, reps):
        kinds = ["none", "hprof", "hprof-gz", "jcmd", "jcmd-gz"]
        results = {k: [] for k in kinds}
        problems = {}
        for rep in range(reps):
            for k in kinds[rep % len(kinds):] + kinds[:rep % len(kinds)]:
                if k in problems:
                    continue
                try:
                    r = self.dump_once(w, k, self.args.timeout)
                except (RuntimeError, OSError) as e:  # OSError: the process went away under /proc
                    problems[k] = str(e)
                    self.log(f"  [{rep + 1}/{reps}] {k:<9} {e}")
                    continue
                results[k].append(r)
                dump = f"dump {r['dump']:6.2f} s, +{r['extra_kib'] / 1024:.0f} MiB, file {r['file'] >> 20} MiB" \
                    if k != "none" else ""
                self.log(f"  [{rep + 1}/{reps}] {k:<9} heap {r['used'] >> 20} MiB built in {r['build']:.1f} s {dump}")
        return results, problems


# ---- tables -----------------------------------------------------------------------------------


def med(values):
    return statistics.median(values) if values else None


def fmt(v, spec=".2f", none="—"):
    return none if v is None else format(v, spec)


def ratio(a, b):
    return a / b if a is not None and b else None


def summarize(w, configs):
    """Rows for the workload table and the target checks."""
    none = configs[0]
    base = {k: med([getattr(r, k) for r in none.runs]) for k in ("wall", "cpu", "rss_kib")}
    base_rate = med([r.rate for r in none.runs if r.rate is not None])
    by_key = {c.key: c for c in configs}

    def slowdown(cfg):
        if not cfg.runs:
            return None
        if w.kind == "rate":
            rate = med([r.rate for r in cfg.runs if r.rate is not None])
            return ratio(base_rate, rate)
        return ratio(med([r.wall for r in cfg.runs]), base["wall"])

    rows, checks = [], []
    for cfg in configs:
        runs = cfg.runs
        wall = med([r.wall for r in runs])
        cpu = med([r.cpu for r in runs])
        rss = med([r.rss_kib for r in runs])
        out = med([r.out_bytes for r in runs])
        rate = med([r.rate for r in runs if r.rate is not None])
        # The relative spread of the compared figure: wall time, or throughput for a rate workload.
        figure = [r.rate for r in runs if r.rate is not None] if w.kind == "rate" else [r.wall for r in runs]
        spread = (max(figure) - min(figure)) / med(figure) if len(figure) > 1 and med(figure) else None
        sd = slowdown(cfg) if cfg.key != "none" else None
        vs_jfr = None
        if cfg.jfr and cfg.jfr in by_key and by_key[cfg.jfr].runs and sd is not None:
            vs_jfr = ratio(sd, slowdown(by_key[cfg.jfr]))
        status = cfg.problem or "ok"
        target = verdict = ""
        if cfg.mode:
            limit = cfg.mode.targets.get(w.name, cfg.mode.targets.get("*"))
            if limit is not None:
                target = f"≤{limit:g}x"
                if cfg.problem:
                    verdict = "n/a"
                else:
                    verdict = "pass" if sd is not None and sd <= limit else "FAIL"
                checks.append((cfg.mode, w.name, target, sd, verdict, status))
            elif cfg.mode.name == "monitor" and w.name in ("locks", "lockheavy"):
                checks.append((cfg.mode, w.name, "report ×JFR", vs_jfr, "—" if not cfg.problem else "n/a", status))
        time_cell = f"{fmt(rate, '.1f')} {w.rate_unit}" if w.kind == "rate" else fmt(wall)
        rows.append([w.name, cfg.label, time_cell, "" if cfg.key == "none" else fmt(sd, ".2f") + ("x" if sd is not None else ""),
                     fmt(cpu), "" if cfg.key == "none" else fmt(ratio(cpu, base["cpu"]), ".2f") + ("x" if cpu else ""),
                     fmt(rss / 1024 if rss else None, ".0f"),
                     "" if cfg.key == "none" else fmt(ratio(rss, base["rss_kib"]), ".2f") + ("x" if rss else ""),
                     "" if not cfg.mode else fmt(vs_jfr, ".2f") + ("x" if vs_jfr is not None else ""),
                     human_bytes(out) if cfg.key != "none" and out is not None else "",
                     fmt(spread * 100 if spread is not None else None, ".0f") + ("%" if spread is not None else ""),
                     str(len(runs)), target, verdict, status])
    return rows, checks


def human_bytes(n):
    if n is None:
        return "—"
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024


def md_table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    for r in rows:
        lines.append("| " + " | ".join(str(c).replace("|", "\\|") for c in r) + " |")
    return "\n".join(lines)


WORKLOAD_HEADER = ["workload", "configuration", "wall s", "slowdown", "CPU s", "CPU ×", "peak RSS MiB", "RSS ×",
                   "×JFR", "output", "spread", "runs", "target", "verdict", "status"]


def dump_tables(w, results, problems):
    """The heap table and the target checks of heap=dump."""
    labels = {"none": "no agent (no dump)", "hprof": "hprof heap=dump,format=b (SIGQUIT)",
              "hprof-gz": "hprof heap=dump,format=b,gz=y (SIGQUIT)", "jcmd": "jcmd GC.heap_dump",
              "jcmd-gz": "jcmd GC.heap_dump -gz=1"}

    def m(kind, key):
        return med([r[key] for r in results.get(kind, []) if key in r])

    rows, checks = [], []
    used = m("none", "used") or m("hprof", "used") or m("jcmd", "used")
    base_build = m("none", "build")
    for kind in ["none", "hprof", "hprof-gz", "jcmd", "jcmd-gz"]:
        runs = results.get(kind, [])
        dump = m(kind, "dump")
        ref = {"hprof": "jcmd", "hprof-gz": "jcmd-gz"}.get(kind)
        vs = ratio(dump, m(ref, "dump")) if ref else None
        extra = m(kind, "extra_kib")
        extra_pct = extra * 1024 / used * 100 if extra is not None and used else None
        status = problems.get(kind, "ok")
        rows.append([labels[kind], fmt(m(kind, "build"), ".1f"),
                     "" if not kind.startswith("hprof") else fmt(ratio(m(kind, "build"), base_build), ".2f") + ("x" if runs else ""),
                     fmt(dump), fmt(vs, ".2f") + ("x" if vs is not None else ""), fmt(m(kind, "command")),
                     fmt(m(kind, "dump_cpu")), human_bytes(m(kind, "file")) if kind != "none" else "",
                     (f"{extra / 1024:.0f} ({extra_pct:.0f}%)" if extra is not None else "—") if kind != "none" else "",
                     fmt((m(kind, "rss_kib") or 0) / 1024 if runs else None, ".0f"), str(len(runs)), status])
        if kind in ("hprof", "hprof-gz"):
            limit = DUMP_TIME_LIMIT if kind == "hprof" else DUMP_GZ_LIMIT
            ok = status == "ok" and results.get(ref) and vs is not None
            checks.append((kind, f"dump time ≤{limit:.1f}x {labels[ref]}", vs,
                           ("pass" if vs <= limit else "FAIL") if ok else "n/a", status))
            ok_mem = status == "ok" and extra_pct is not None
            checks.append((kind, f"extra memory ≤{DUMP_MEMORY_LIMIT * 100:.0f}% of the heap", extra_pct,
                           ("pass" if extra_pct <= DUMP_MEMORY_LIMIT * 100 else "FAIL") if ok_mem else "n/a", status))
    header = ["configuration", "heap build s", "build ×", "dump s", "×jcmd", "jcmd command s", "dump CPU s", "file",
              "extra RSS MiB (% heap)", "peak RSS MiB", "runs", "status"]
    info = (f"Live heap after a full GC: {human_bytes(used)}, about {int(m('none', 'objects') or m('hprof', 'objects') or 0):,}"
            f" objects.") if used else "No heap was built."
    return info + "\n\n" + md_table(header, rows), checks


# ---- the machine, the JDK, the agent ---------------------------------------------------------


def machine_info():
    model = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem = proc_meminfo_kib("MemTotal")
    return f"{os.cpu_count()} CPUs ({model}), {mem / 1024 / 1024:.1f} GiB memory, {platform.system()} {platform.release()}"


def proc_meminfo_kib(key):
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def jdk_version(jdk):
    r = subprocess.run([str(Path(jdk) / "bin" / "java"), "-version"], capture_output=True, text=True, env=child_env())
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    return lines


def jdk_major(jdk):
    for line in jdk_version(jdk):
        m = re.search(r'version "(\d+)', line)
        if m:
            return m.group(1)
    return "unknown"


def git_describe():
    try:
        rev = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True).stdout.strip()
        return rev + (" (with uncommitted changes)" if dirty else "")
    except OSError:
        return "unknown"


def resolve_jdk(spec):
    if spec is None:
        javac = shutil.which("javac")
        if javac:
            return str(Path(os.path.realpath(javac)).parent.parent)
        if os.environ.get("JAVA_HOME"):
            return os.environ["JAVA_HOME"]
        raise SystemExit("no JDK: give --jdk /path or put javac on the PATH")
    path = JDK_ALIASES.get(spec, spec)
    if not (Path(path) / "bin" / "java").exists():
        raise SystemExit(f"no JDK at {path} (--jdk {spec})")
    return path


def ensure_packages(workloads, allow_install):
    """Installs the Debian packages the workloads need (apt-get, as root or through sudo).
    Returns {workload name: problem} for those still missing."""
    missing = sorted({p for w in workloads for p in w.packages if not package_installed(p)})
    if missing and allow_install:
        sudo = [] if os.geteuid() == 0 else (["sudo"] if shutil.which("sudo") else None)
        if sudo is not None:
            print(f"installing {' '.join(missing)} with apt-get", flush=True)
            env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
            subprocess.run(sudo + ["apt-get", "update", "-qq"], env=env)
            subprocess.run(sudo + ["apt-get", "install", "-y", "-qq", "--no-install-recommends"] + missing, env=env)
    problems = {}
    for w in workloads:
        for p in w.packages:
            if not package_installed(p):
                problems[w.name] = f"unavailable: Debian package {p} is not installed"
        for j in w.jars:
            if w.name not in problems and not Path(j).exists():
                problems[w.name] = f"unavailable: {j} not found"
    return problems


def package_installed(p):
    r = subprocess.run(["dpkg-query", "-W", "-f=${Status}", p], capture_output=True, text=True)
    return r.returncode == 0 and "install ok installed" in r.stdout


def build_agent(build):
    build = Path(build)
    if not (build / "build.ninja").exists():
        subprocess.run(["meson", "setup", str(build), str(REPO)], check=True)
    subprocess.run(["ninja", "-C", str(build), "agent/libhprof.so"], check=True)
    return str(build / "agent" / "libhprof.so")


# ---- one JDK ------------------------------------------------------------------------------------


def run_jdk(args, jdk, agent, workloads, plan, unavailable):
    major = jdk_major(jdk)
    started = datetime.datetime.now(datetime.timezone.utc)
    load_start = os.getloadavg()
    reps = args.reps or (1 if args.quick else 5)
    print(f"== JDK {major} ({jdk}), {reps} runs per configuration{', quick' if args.quick else ''}", flush=True)
    sections, checks = [], []
    with tempfile.TemporaryDirectory(prefix="hprof-bench-") as scratch:
        bench = Bench(args, jdk, agent, scratch)
        runnable = [w for w in workloads if w.name not in unavailable]
        bench.compile(runnable)
        for w in workloads:
            if w.name in unavailable:
                sections.append((w, f"{w.what}: **{unavailable[w.name]}**"))
                continue
            print(f"-- {w.name}: {w.what}", flush=True)
            if w.kind == "dump":
                results, problems = bench.bench_dump(w, args.reps or min(reps, 3))
                table, dchecks = dump_tables(w, results, problems)
                sections.append((w, table))
                checks += [("heap=dump", "heap", t, v, verdict, st, k) for k, t, v, verdict, st in dchecks]
                continue
            configs, problem = bench.bench_workload(w, plan[w.name], reps)
            if problem:
                sections.append((w, f"{w.what}: **{problem}**"))
                continue
            rows, wchecks = summarize(w, configs)
            sections.append((w, rows))
            checks += [(m.opts, wl, t, v, verdict, st, m.note) for m, wl, t, v, verdict, st in wchecks]
    finished = datetime.datetime.now(datetime.timezone.utc)
    load_end = os.getloadavg()
    text = render(args, jdk, agent, major, reps, started, finished, load_start, load_end, sections, checks)
    print()
    print(text)
    RESULTS_DIR.mkdir(exist_ok=True)
    if args.out and len(args.jdk or [None]) == 1:
        out = Path(args.out)
    elif args.out:  # several JDKs: one file each, named after --out
        o = Path(args.out)
        out = o.with_name(f"{o.stem}-jdk{major}{o.suffix}")
    else:
        out = RESULTS_DIR / f"{started:%Y-%m-%d-%H%M}-jdk{major}{'-quick' if args.quick else ''}.md"
    out.write_text(text)
    print(f"results written to {out}")
    if args.update_doc:
        update_doc(major, text, out)
    return checks


def render(args, jdk, agent, major, reps, started, finished, load_start, load_end, sections, checks):
    lines = [f"# hprof benchmark: JDK {major}, {started:%Y-%m-%d %H:%M} UTC", ""]
    lines += [f"- Machine: {machine_info()}",
              f"- Load average (1 min): {load_start[0]:.1f} at the start, {load_end[0]:.1f} at the end "
              f"(above the CPU count means other work competed: numbers are noise then)",
              f"- JDK: `{jdk}`: " + "; ".join(jdk_version(jdk)),
              f"- Agent: `{agent}`, source {git_describe()}",
              f"- Command: `bench/run.py {' '.join(sys.argv[1:])}`",
              f"- {reps} measured run{'s' if reps != 1 else ''} per configuration, after one unmeasured warm-up run of each workload "
              f"without an agent; configurations alternate run by run (A B C, B C A, ...); medians shown."
              + (" **Quick mode: small workloads, few runs: a smoke test, not a measurement.**" if args.quick else ""),
              f"- Duration: {(finished - started).total_seconds() / 60:.1f} min", ""]
    lines += ["## Targets", "",
              "Slowdown = median wall time with the agent / without (for a throughput workload: throughput "
              "without / with). The heap=dump rows compare dump times and memory (see the heap table).", ""]
    trows = []
    for profile, wl, target, value, verdict, status, note in checks:
        if profile == "heap=dump":
            val = fmt(value, ".0f") + "%" if "memory" in target and value is not None else \
                fmt(value, ".2f") + ("x" if value is not None else "")
            trows.append([f"hprof {'heap=dump,format=b' + (',gz=y' if note == 'hprof-gz' else '')}", wl, target, val,
                          verdict, status])
        else:
            trows.append([f"hprof {profile}", wl, target, fmt(value, ".2f") + ("x" if value is not None else ""),
                          verdict, status + (f" ({note})" if note and "JFR" in target else "")])
    lines.append(md_table(["profile", "workload", "target", "measured", "verdict", "status"], trows) if trows
                 else "No targets were measured (filtered out).")
    lines.append("")
    tables = [(w, s) for w, s in sections if w.kind != "dump"]
    if tables:
        lines += ["## Workloads", ""]
    for w, s in tables:
        lines.append(f"- **{w.name}**: {w.what}" if isinstance(s, list) else f"- **{w.name}**: {s}")
    lines.append("")
    rows = [r for _, s in tables if isinstance(s, list) for r in s]
    if rows:
        lines.append(md_table(WORKLOAD_HEADER, rows))
        lines.append("")
        notes = [f"- {m.opts}: {m.note}" for m in MODES if m.note and any(r[1] == f"hprof {m.opts}" for r in rows)]
        lines += notes + ([""] if notes else [])
    for w, s in sections:
        if w.kind == "dump":
            lines += ["## Heap dump", "", f"{w.what}.", "", s, ""]
    return "\n".join(lines)


def update_doc(major, text, path):
    """Replaces the quoted results of this JDK in doc/bench.md (between markers)."""
    begin, end = f"<!-- bench-results jdk{major} begin -->", f"<!-- bench-results jdk{major} end -->"
    body = text.split("\n", 1)[1].strip()
    quoted = f"{begin}\n### JDK {major} (from `{path.relative_to(REPO) if path.is_relative_to(REPO) else path}`)\n\n" \
             f"{body}\n{end}"
    quoted = quoted.replace("\n## ", "\n#### ")
    doc = DOC.read_text() if DOC.exists() else "# Benchmarks\n"
    if begin in doc and end in doc:
        doc = doc[:doc.index(begin)] + quoted + doc[doc.index(end) + len(end):]
    else:
        doc = doc.rstrip("\n") + "\n\n" + quoted + "\n"
    DOC.write_text(doc)
    print(f"doc/bench.md updated (JDK {major})")


# ---- self-test --------------------------------------------------------------------------------


def self_test(args):
    """Seconds: one workload once without an agent, a refused agent option, a timeout, and
    the tables on made-up data. Prints a SUITE line for .ci/run."""
    passed = failed = 0

    def check(name, ok, detail=""):
        nonlocal passed, failed
        if ok:
            passed += 1
            print(f"ok   {name}")
        else:
            failed += 1
            print(f"FAIL {name} {detail}")

    jdk = resolve_jdk(args.jdk[0] if args.jdk else None)
    agent = args.agent
    args.quick = True
    cpu = next(w for w in WORKLOADS if w.name == "cpu")
    with tempfile.TemporaryDirectory(prefix="hprof-bench-selftest-") as scratch:
        bench = Bench(args, jdk, agent, scratch)
        bench.compile([cpu])
        tiny = Workload("cpu", "CpuBound", "tiny", ["1", "5"], ["1", "5"])
        none = Config("none", "no agent", [])
        run, problem, result = bench.run_once(tiny, none, None, 120)
        check("run without agent", not problem, problem)
        check("wall time measured", run.wall > 0.05, f"{run.wall}")
        check("CPU time measured", run.cpu > 0.05, f"{run.cpu}")
        check("peak RSS measured", run.rss_kib > 10 * 1024, f"{run.rss_kib} KiB")
        check("result line read", result is not None and result.startswith("result: threads=1 rounds=5"), f"{result}")
        run2, problem, _ = bench.run_once(tiny, none, "result: something else", 120)
        check("wrong result detected", problem.startswith("wrong result"), problem)
        if agent:
            bad = Config("bad", "hprof bogus", [f"-agentpath:{agent}=heap=bogus"],
                         mode=Mode("bad", "heap=bogus", "SITES BEGIN", None, {}))
            run3, problem, _ = bench.run_once(tiny, bad, result, 120)
            check("refused option reported", problem.startswith("refused") and "HPROF ERROR" in problem, problem)
        heap = next(w for w in WORKLOADS if w.name == "heap")
        bench.compile([cpu, heap])
        small = Workload("heap", "BigHeap", "small", ["16"], ["16"], xmx_quick="128m", kind="dump")
        try:
            r = bench.dump_once(small, "jcmd", 120)
            check("jcmd heap dump timed", r["dump"] > 0 and r["file"] > 16 << 20 and r["used"] > 16 << 20
                  and r["rss_kib"] > 16 * 1024, str(r))
        except RuntimeError as e:
            check("jcmd heap dump timed", False, str(e))
        slow = Workload("cpu", "CpuBound", "slow", ["1", "1000000"], ["1", "1000000"])
        t0 = time.monotonic()
        run4, problem, _ = bench.run_once(slow, none, None, 2)
        check("timeout kills the run", problem.startswith("timeout") and time.monotonic() - t0 < 30, problem)
    # Tables on made-up runs: a refused configuration must not break them.
    w = Workload("h2", "H2Jdbc", "made up", [], [])
    sites = next(m for m in MODES if m.name == "sites")
    cfgs = [Config("none", "no agent", [], runs=[Run(2.0, 3.0, 100000, 0), Run(2.2, 3.2, 110000, 0),
                                                  Run(2.1, 3.1, 105000, 0)]),
            Config("sites", "hprof heap=sites", [], mode=sites, jfr="jfr-profile",
                   runs=[Run(6.0, 9.0, 200000, 5000), Run(6.4, 9.2, 210000, 5000), Run(6.2, 9.1, 205000, 5000)]),
            Config("jfr-profile", "JFR settings=profile", [], runs=[Run(2.4, 3.5, 120000, 100)]),
            Config("samples", "hprof cpu=samples", [], mode=next(m for m in MODES if m.name == "samples"),
                   problem="refused (exit 1): HPROF ERROR: nope")]
    rows, checks = summarize(w, cfgs)
    check("slowdown is the median ratio", rows[1][3] == "2.95x", rows[1][3])
    check("×JFR is the ratio of slowdowns", rows[1][8] == "2.58x", rows[1][8])
    check("target verdict", rows[1][12] == "≤4x" and rows[1][13] == "pass", f"{rows[1][12]} {rows[1][13]}")
    check("refused config shown, not measured", rows[3][2] == "—" and rows[3][14].startswith("refused")
          and rows[3][13] == "n/a", str(rows[3]))
    check("checks list both", len(checks) == 2, str(checks))
    print(f"SUITE bench_selftest: {passed} passed, {failed} failed")
    return 1 if failed else 0


# ---- main -------------------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="Modes: " + ", ".join(f"{m.name} ({m.opts})" for m in MODES)
                                 + ".\nWorkloads: " + ", ".join(w.name for w in WORKLOADS) + ".")
    ap.add_argument("--jdk", action="append", help="JDK home or 17/21/25 (repeat for several; default: the javac "
                    "on the PATH)")
    ap.add_argument("--quick", action="store_true", help="small workloads, 1 run each: a few minutes")
    ap.add_argument("--reps", type=int, help="measured runs per configuration (default 5, 3 for the heap dump; quick 1)")
    ap.add_argument("--modes", help="comma-separated agent modes, each run on every selected workload (default: each workload its own list, see doc/bench.md)")
    ap.add_argument("--workloads", help="comma-separated workloads (default all)")
    ap.add_argument("--agent", help="a built libhprof.so (default: build it in --build)")
    ap.add_argument("--build", default=str(REPO / "build"), help="meson build directory (default build/)")
    ap.add_argument("--skip", help="comma-separated workload:mode pairs left out of the plan, e.g. "
                    "javac:sites,h2:samples-1ms (to fit a run into the time there is; the results say so)")
    ap.add_argument("--timeout", type=float, default=1800.0, help="upper limit of one run in seconds")
    ap.add_argument("--out", help="results file (default bench/results/<date>-jdk<N>[-quick].md)")
    ap.add_argument("--update-doc", action="store_true", help="quote the tables in doc/bench.md")
    ap.add_argument("--no-install", action="store_true", help="do not apt-get install missing packages")
    ap.add_argument("--self-test", action="store_true", help="check the harness in seconds and exit")
    args = ap.parse_args()

    if args.self_test:
        sys.exit(self_test(args))

    def pick(spec, items, what):
        if not spec:
            return list(items)
        names = [s.strip() for s in spec.split(",") if s.strip()]
        known = {i.name: i for i in items}
        bad = [n for n in names if n not in known]
        if bad:
            raise SystemExit(f"unknown {what}: {', '.join(bad)} (known: {', '.join(known)})")
        return [known[n] for n in names]

    modes = pick(args.modes, MODES, "mode")
    workloads = pick(args.workloads, WORKLOADS, "workload")
    # Without --modes each workload runs its own list of modes; with it, every selected mode
    # runs on every selected workload (heap=dump only ever on the heap workload).
    skips = [p.strip() for p in (args.skip or "").split(",") if p.strip()]
    for p in skips:
        wl, _, md = p.partition(":")
        if wl not in {w.name for w in WORKLOADS} or md not in {m.name for m in MODES}:
            raise SystemExit(f"--skip {p}: expected workload:mode (workloads: "
                             f"{', '.join(w.name for w in WORKLOADS)}; modes: {', '.join(m.name for m in MODES)})")
    plan = {}
    for w in workloads:
        if w.kind == "dump":
            wm = [m for m in modes if m.name == "dump"]
        else:
            wm = [m for m in modes if m.name != "dump" and (args.modes or m.name in w.modes)]
        skipped = {p.split(":", 1)[1] for p in skips if p.split(":", 1)[0] == w.name}
        wm = [m for m in wm if m.name not in skipped]
        if wm:
            plan[w.name] = wm
    workloads = [w for w in workloads if w.name in plan]
    if not workloads:
        raise SystemExit("nothing to run: none of these modes applies to these workloads "
                         "(heap=dump runs only on the heap workload)")
    unavailable = ensure_packages(workloads, not args.no_install)
    for w in workloads:
        if not (WORKLOAD_DIR / f"{w.main}.java").exists():
            unavailable[w.name] = f"unavailable: bench/workloads/{w.main}.java is not on this branch"
    agent = os.path.abspath(args.agent) if args.agent else build_agent(args.build)
    if not Path(agent).exists():
        raise SystemExit(f"no agent library at {agent}")
    jdks = [resolve_jdk(j) for j in (args.jdk or [None])]
    for jdk in jdks:
        run_jdk(args, jdk, agent, workloads, plan, unavailable)


if __name__ == "__main__":
    main()

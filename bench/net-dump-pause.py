#!/usr/bin/env python3
"""Application pause of a heap dump sent to a slow net= peer, against the same dump to a file
(doc/socket.md, "A dump to a slow peer").

    bench/net-dump-pause.py --agent build/agent/libhprof.so --slow-peer build/bench/slow-peer
                            [--java java] [--mb 4] [--rate 200000] [--runs 3] [--seconds 8]

Runs bench/net-dump/PauseProbe (a live heap of about MB megabytes and a ticker thread that
measures the longest time it was held up) with heap=dump,format=b,doe=n:
  file  file=..., one dump on SIGQUIT 3 s after "ready";
  net   net=127.0.0.1:PORT to slow-peer reading RATE bytes/s, one DUMP HEAP command 3 s after
        the connection.
Prints, per mode, the median over the runs of: the longest application stall during the run
(the pause), the longest a thread start took (its THREAD START/END records are written to
the same output), the dump's own time (the agent's verbose line), the bytes the dump made, the
process's CPU time and wall time (the net run's wall time includes the agent sending the dump
at the peer's pace before the VM ends), and for net the seconds the peer took to receive it all.
Loopback only. The figures depend on the machine: say whether it was shared.
"""
import argparse
import os
import re
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time

here = os.path.dirname(os.path.abspath(__file__))


def javac_of(java):
    real = os.path.realpath(subprocess.check_output(["sh", "-c", "command -v " + java]).decode().strip())
    return os.path.join(os.path.dirname(real), "javac")


def wait_line(proc, text, limit):
    deadline = time.time() + limit
    while time.time() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        if text in line:
            return True
    return False


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def parse(out, err):
    m = re.search(r"max stall ([0-9.]+) ms", out)
    t = re.search(r"max thread start ([0-9.]+) ms", out)
    d = re.search(r"heap dump: \d+ objects \([0-9.]+ MB of heap\), \d+ roots, ([0-9.]+) s", err)
    return (float(m.group(1)) if m else float("nan"), float(t.group(1)) if t else float("nan"),
            float(d.group(1)) if d else float("nan"))


def run_file(a, work, classes):
    out = os.path.join(work, "dump.hprof")
    if os.path.exists(out):
        os.unlink(out)
    cpu0, t0 = children_cpu(), time.time()
    p = subprocess.Popen([a.java, "-agentpath:%s=heap=dump,format=b,doe=n,file=%s" % (a.agent, out),
                          "-cp", classes, "PauseProbe", str(a.mb), str(a.seconds)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if not wait_line(p, "ready", 120):
        sys.exit("file run: no 'ready'")
    time.sleep(3)
    p.send_signal(signal.SIGQUIT)
    rest, err = p.communicate(timeout=600)
    wall, cpu = time.time() - t0, children_cpu() - cpu0
    stall, start_ms, dump_s = parse(rest, err)
    return {"stall_ms": stall, "start_ms": start_ms, "dump_s": dump_s, "bytes": os.path.getsize(out), "cpu_s": cpu,
            "wall_s": wall}


def run_net(a, work, classes):
    port_file = os.path.join(work, "port")
    saved = os.path.join(work, "net.hprof")
    for f in (port_file, saved):
        if os.path.exists(f):
            os.unlink(f)
    peer = subprocess.Popen([a.slow_peer, "--rate", str(a.rate), "--port-file", port_file,
                             "--out", saved, "--dump-at", "3"], stdout=subprocess.PIPE, text=True)
    while not os.path.exists(port_file):
        time.sleep(0.05)
    port = int(open(port_file).read())
    cpu0, t0 = children_cpu(), time.time()
    p = subprocess.Popen([a.java, "-agentpath:%s=heap=dump,format=b,doe=n,net=127.0.0.1:%d" % (a.agent, port),
                          "-cp", classes, "PauseProbe", str(a.mb), str(a.seconds)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    rest, err = p.communicate(timeout=900)
    wall = time.time() - t0
    peer_out, _ = peer.communicate(timeout=900)
    cpu = children_cpu() - cpu0  # the JVM and slow-peer
    stall, start_ms, dump_s = parse(rest, err)
    m = re.search(r"bytes (\d+) seconds ([0-9.]+) end (\S+)", peer_out)
    return {"stall_ms": stall, "start_ms": start_ms, "dump_s": dump_s, "bytes": os.path.getsize(saved), "cpu_s": cpu,
            "wall_s": wall, "peer_s": float(m.group(2)) if m else float("nan"),
            "peer_end": m.group(3) if m else "?", "errors": [l for l in err.splitlines() if "ERROR" in l]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--agent", required=True)
    ap.add_argument("--slow-peer", required=True)
    ap.add_argument("--java", default="java")
    ap.add_argument("--mb", type=int, default=4)
    ap.add_argument("--rate", type=int, default=200000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=8)
    ap.add_argument("--modes", default="file,net")
    a = ap.parse_args()
    a.agent = os.path.abspath(a.agent)
    a.slow_peer = os.path.abspath(a.slow_peer)
    work = tempfile.mkdtemp(prefix="hprof-net-pause-")
    classes = os.path.join(work, "classes")
    subprocess.check_call([javac_of(a.java), "--release", "17", "-d", classes,
                           os.path.join(here, "net-dump", "PauseProbe.java")])
    version = subprocess.run([a.java, "-version"], capture_output=True, text=True).stderr.splitlines()[0]
    print("java: %s; heap %d MB; peer rate %d B/s; %d runs each; agent %s" %
          (version, a.mb, a.rate, a.runs, a.agent))
    for mode in a.modes.split(","):
        rows = [(run_file if mode == "file" else run_net)(a, work, classes) for _ in range(a.runs)]
        for r in rows:
            print("  %s run: %s" % (mode, r))
        med = {k: statistics.median(r[k] for r in rows) for k in rows[0]
               if isinstance(rows[0][k], float) or isinstance(rows[0][k], int)}
        print("%-4s median: pause %.1f ms, longest thread start %.1f ms, dump %.2f s, %.2f MB, "
              "CPU %.2f s, wall %.1f s%s" %
              (mode, med["stall_ms"], med["start_ms"], med["dump_s"], med["bytes"] / 1e6, med["cpu_s"],
               med["wall_s"],
               ", peer received all in %.1f s" % med["peer_s"] if "peer_s" in med else ""))


if __name__ == "__main__":
    main()

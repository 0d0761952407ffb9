#!/usr/bin/env python3
"""Round-trip time of a socket command (doc/socket.md, "Costs").

Starts java-tests/programs/NetTarget with net=127.0.0.1:<port>,format=b, sends N CONTROL
"set depth 4" commands one after another, and times each from send to the arrival of its
CONTROL SETTINGS record (15 bytes); then EXIT THE VM. Also reports the CPU time and wakeups of
the idle "HPROF listener" thread over the idle period.

    bench/net_command_latency.py build/agent/libhprof.so [java] [N] [idle_seconds]
"""
import glob
import os
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time

here = os.path.dirname(os.path.abspath(__file__))
lib = os.path.abspath(sys.argv[1])
java = sys.argv[2] if len(sys.argv) > 2 else "java"
n = int(sys.argv[3]) if len(sys.argv) > 3 else 300
idle = float(sys.argv[4]) if len(sys.argv) > 4 else 5.0

work = tempfile.mkdtemp(prefix="hprof-net-bench-")
javac = os.path.join(os.path.dirname(os.path.realpath(subprocess.check_output(
    ["sh", "-c", "command -v " + java]).decode().strip())), "javac")
subprocess.check_call([javac, "--release", "17", "-d", work,
                       os.path.join(here, "..", "java-tests", "programs", "NetTarget.java")])

server = socket.socket()
server.bind(("127.0.0.1", 0))
server.listen(1)
port = server.getsockname()[1]
proc = subprocess.Popen([java, "-agentpath:%s=net=127.0.0.1:%d,format=b,verbose=n" % (lib, port),
                         "-cp", work, "NetTarget", os.path.join(work, "stop")],
                        stdout=subprocess.PIPE)
conn, _ = server.accept()
proc.stdout.readline()  # "target ready"
received = bytearray()


def drain(timeout):
    conn.settimeout(timeout)
    try:
        while True:
            d = conn.recv(65536)
            if not d:
                return False
            received.extend(d)
    except socket.timeout:
        return True


drain(0.5)
t0 = time.time()
drain(idle)
listener = None
for task in glob.glob("/proc/%d/task/*" % proc.pid):
    with open(task + "/comm") as f:
        if f.read().strip() == "HPROF listener":
            listener = task
if listener:
    with open(listener + "/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = int(fields[11]) + int(fields[12])
    with open(listener + "/status") as f:
        wakeups = [l.split()[1] for l in f if l.startswith("voluntary_ctxt_switches")][0]
    print("idle listener over %.1f s: %d CPU ticks (1/%d s), %s wakeups"
          % (time.time() - t0, ticks, os.sysconf("SC_CLK_TCK"), wakeups))

conn.settimeout(10)
lat = []
for i in range(n):
    want = len(received) + 15
    t = time.perf_counter()
    conn.sendall(struct.pack(">BIIHH", 0x08, i + 1, 4, 6, 4))
    while len(received) < want:
        received.extend(conn.recv(65536))
    lat.append((time.perf_counter() - t) * 1e6)
conn.sendall(struct.pack(">BII", 0x05, n + 1, 0))
while conn.recv(65536):
    pass
proc.wait()
lat.sort()
print("CONTROL round trip over %d commands: median %.0f us, p90 %.0f us, max %.0f us"
      % (n, statistics.median(lat), lat[int(n * 0.9)], lat[-1]))

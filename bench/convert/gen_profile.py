#!/usr/bin/env python3
"""gen_profile.py OUT [TRACES] [SAMPLES]: a synthetic HPROF binary CPU SAMPLES profile for the
hprof-convert bench: TRACES distinct stack traces (default 100,000, 8-32 frames, grown from
shared prefixes as real programs' stacks are) holding SAMPLES samples (default 1,000,000).
Seeded: the same file every time."""
import random
import struct
import sys

out = sys.argv[1]
ntraces = int(sys.argv[2]) if len(sys.argv) > 2 else 100_000
nsamples = int(sys.argv[3]) if len(sys.argv) > 3 else 1_000_000
rng = random.Random(17)
buf = bytearray(b"JAVA PROFILE 1.0.2\0" + struct.pack(">IQ", 8, 0))
ids = iter(range(1, 1 << 62))


def rec(tag, body):
    buf.extend(struct.pack(">BII", tag, 0, len(body)))
    buf.extend(body)


def string(s):
    i = next(ids)
    rec(0x01, struct.pack(">Q", i) + s.encode())
    return i


rec(0x05, struct.pack(">III", 1, 0, 0))  # trace 1: the empty trace
nclasses, nmethods = 400, 4000
pkgs = ["java.util", "java.lang", "com.example.app", "com.example.db", "org.acme.web"]
classes = []
for c in range(nclasses):
    name = string(f"{pkgs[c % len(pkgs)]}.Class{c}")
    rec(0x02, struct.pack(">IQIQ", c + 1, next(ids), 1, name))
    classes.append(c + 1)
sig, src = string("()V"), string("Source.java")
frames = []
for m in range(nmethods):
    fid = next(ids)
    rec(0x04, struct.pack(">QQQQIi", fid, string(f"method{m}"), sig, src, classes[m % nclasses],
                          rng.randint(1, 2000)))
    frames.append(fid)
# stacks grow from shared prefixes: each new trace copies a prefix of an earlier one
stacks = [[rng.choice(frames) for _ in range(8)]]
seen = set()
serial = 2
rows = []
while len(rows) < ntraces:
    base = rng.choice(stacks[-2000:])
    keep = rng.randint(min(4, len(base)), len(base))
    st = base[:keep] + [rng.choice(frames) for _ in range(rng.randint(1, 6))]
    st = st[:32]
    if len(st) < 8 or tuple(st) in seen:
        continue
    seen.add(tuple(st))
    stacks.append(st)
    # the frames are root first here; a STACK TRACE lists the top frame first
    rec(0x05, struct.pack(">III", serial, 0, len(st)) + struct.pack(f">{len(st)}Q", *reversed(st)))
    rows.append(serial)
    serial += 1
counts = [1] * ntraces
for _ in range(nsamples - ntraces):  # the rest skewed toward a few hot traces
    counts[min(int(rng.paretovariate(1.2)) - 1, ntraces - 1) if rng.random() < 0.5
           else rng.randrange(ntraces)] += 1
body = struct.pack(">II", nsamples, ntraces)
for c, s in sorted(zip(counts, rows), reverse=True):
    body += struct.pack(">II", c, s)
rec(0x0D, body)
open(out, "wb").write(buf)

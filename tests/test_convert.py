#!/usr/bin/env python3
"""test_convert.py MODE HPROF_CONVERT HPROF_READ JAVA_HOME AGENT

Runs tests/convert/Work.java (and javac) under the agent, one run per profile kind, and checks
hprof-convert's output against what the profile itself says:
  totals  collapsed stacks of every measure add up to the file's totals (the ascii header or
          columns, hprof-read --json for binary files); bad input gives one message, a non-zero
          exit and no output file;
  pprof   `go tool pprof` reads the pprof file back: -raw totals per sample type, -top's first
          entry and -traces equal ours (exit 77, "skipped", without go);
  html    headless chromium renders the page with no script error and lists the hottest frame
          (exit 77, "skipped", without chromium).
Ends with "SUITE convert-MODE: N passed, N failed".
"""
import collections
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import urllib.parse

mode, CONVERT, READ, JAVA_HOME, AGENT = [sys.argv[1]] + [os.path.abspath(a) for a in sys.argv[2:6]]
HERE = os.path.dirname(os.path.abspath(__file__))
java = os.path.join(JAVA_HOME, "bin", "java")
javac = os.path.join(JAVA_HOME, "bin", "javac")
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, HERE)
import pychecks  # noqa: E402
from pychecks import check, run  # noqa: E402


def finish():
    pychecks.finish(f"convert-{mode}")


def skip(why):
    print(f"skipped: {why}")
    sys.exit(77)


if mode == "pprof" and not shutil.which("go"):
    skip("go not found (Debian package golang-go): pprof not read back")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
if mode == "html" and not CHROMIUM:
    skip("chromium not found (Debian package chromium): HTML not rendered")

work = tempfile.mkdtemp(prefix="hprof-convert-")
os.chdir(work)
# go and chromium want a home for their caches; a CI shell may have none
os.environ.setdefault("HOME", work)
os.environ.setdefault("GOCACHE", os.path.join(work, "gocache"))
os.environ["PPROF_TMPDIR"] = work  # where pprof would save fetched profiles
r = run([javac, "-g", "-d", "classes", os.path.join(HERE, "convert", "Work.java")])
assert r.returncode == 0, r.stderr

MEASURES = {
    "samples": ["samples"],
    "times": ["time_ms", "calls"],
    "old": ["self_ms", "total_ms", "calls"],
    "sites": ["alloc_bytes", "alloc_objects", "live_bytes", "live_objects"],
    "monitor": ["time_ms", "entries"],
}
# (name, agent options, kind, program): a real run per kind and format; javac is the bigger one
RUNS = [
    ("samples-a", "cpu=samples,interval=1", "samples", "work"),
    ("samples-b", "cpu=samples,interval=1,format=b", "samples", "work"),
    ("samples-bgz", "cpu=samples,interval=1,format=b,gz=y", "samples", "work"),
    ("times-a", "cpu=times", "times", "work"),
    ("old-a", "cpu=old", "old", "work"),
    ("sites-a", "heap=sites", "sites", "work"),
    ("sites-b", "heap=sites,format=b", "sites", "work"),
    ("monitor-a", "monitor=y", "monitor", "work"),
    ("javac-samples-b", "cpu=samples,interval=1,format=b", "samples", "javac"),
    ("javac-sites-a", "heap=sites", "sites", "javac"),
]
if mode != "totals":
    RUNS = [x for x in RUNS if x[0] in ("samples-b", "times-a", "old-a", "sites-b", "monitor-a",
                                         "javac-samples-b")]


def profile(name, opts, prog):
    out = os.path.join(work, name + ".hprof")
    agent = f"-agentpath:{AGENT}={opts},cutoff=0,file={out}"
    if prog == "work":
        cmd = [java, agent, "-cp", "classes", "Work"]
    else:
        cmd = [java, agent, "-m", "jdk.compiler/com.sun.tools.javac.Main", "-d", "jc",
               os.path.join(HERE, "convert", "Work.java")]
    r = run(cmd)
    assert r.returncode == 0 and os.path.exists(out), (cmd, r.stderr)
    return out


def ascii_truth(path, kind):
    """per measure, the file's own total: the BEGIN line's total for measure 0 where it has
    one, else the sum of the rows' column"""
    text = open(path, encoding="utf-8", errors="replace").read()
    begin = {"samples": "CPU SAMPLES BEGIN", "times": "CPU TIME (ms) BEGIN",
             "old": "CPU TIME BY METHOD (ms) BEGIN", "sites": "SITES BEGIN",
             "monitor": "MONITOR TIME BEGIN"}[kind]
    sect = text[text.rindex(begin):]
    sect = sect[:sect.index(" END\n")]
    lines = sect.splitlines()
    header_total = re.search(r"\(total = (\d+)", lines[0])
    rows = [l.split() for l in lines[1:] if re.match(r"\s*\d+ ", l)]
    col = lambda i: sum(int(r[i]) for r in rows)
    if kind == "samples":
        return {"samples": int(header_total.group(1))}
    if kind == "times":
        return {"time_ms": int(header_total.group(1)), "calls": col(3)}
    if kind == "old":
        return {"self_ms": int(header_total.group(1)), "total_ms": col(5), "calls": col(3)}
    if kind == "monitor":
        return {"time_ms": int(header_total.group(1)), "entries": col(3)}
    return {"alloc_bytes": col(5), "alloc_objects": col(6), "live_bytes": col(3),
            "live_objects": col(4)}


def binary_truth(path, kind):
    d = json.loads(run([READ, "--json", path]).stdout)
    if kind == "samples":
        return {"samples": d["cpu_samples"]["total"]}
    s = d["alloc_sites"]
    return {"alloc_bytes": s["alloc_bytes"], "alloc_objects": s["alloc_instances"],
            "live_bytes": s["live_bytes"], "live_objects": s["live_instances"]}


def collapsed(path, kind, measure):
    r = run([CONVERT, "-k", kind, "-m", measure, path])
    assert r.returncode == 0, r.stderr
    stacks = []
    for line in r.stdout.splitlines():
        stack, _, n = line.rpartition(" ")
        stacks.append((stack.split(";"), int(n)))
    return stacks


def hottest(stacks):
    """the leaf frames with the largest self value (all of them when tied)"""
    self_by = collections.Counter()
    for frames, n in stacks:
        self_by[frames[-1]] += n
    best = max(self_by.values())
    return {k for k, v in self_by.items() if v == best}, best


profiles = [(name, kind, profile(name, opts, prog)) for name, opts, kind, prog in RUNS]

if mode == "totals":
    for name, kind, path in profiles:
        truth = ascii_truth(path, kind) if name.endswith("-a") else binary_truth(path, kind)
        for m in MEASURES[kind]:
            stacks = collapsed(path, kind, m)
            got = sum(n for _, n in stacks)
            check(got == truth[m], f"{name} {m}: collapsed total {got}, the file says {truth[m]}")
            check(all(f for frames, _ in stacks for f in frames), f"{name} {m}: empty frame")
        check(truth[MEASURES[kind][0]] > 0, f"{name}: the run recorded nothing")
        if kind in ("sites", "monitor"):  # the class is the leaf frame
            leaves = {frames[-1] for frames, _ in collapsed(path, kind, MEASURES[kind][0])}
            want = "int[]" if kind == "sites" else "java.lang.Object"
            check(want in leaves, f"{name}: no {want} leaf in {sorted(leaves)[:5]}")
        if name == "sites-a":  # root first: Work.main is a root, the int[] under Work.ints
            st = collapsed(path, kind, "alloc_objects")
            check(any(f[0] == "Work.main" and f[-2:] == ["Work.ints", "int[]"] for f, _ in st),
                  f"{name}: no Work.main;...;Work.ints;int[] stack")
            lines = run([CONVERT, "--lines", path]).stdout
            check(re.search(r"Work\.ints\(Work\.java:\d+\);int\[\]", lines) is not None,
                  f"{name}: --lines gives no Work.ints(Work.java:N)")

    # bad input: one message, exit status, no output file (and no temporary one) left behind
    good = dict((n, p) for n, _, p in profiles)["samples-b"]
    data = open(good, "rb").read()
    open("truncated.hprof", "wb").write(data[: len(data) * 2 // 3])
    open("garbage.hprof", "wb").write(b"this is not a profile\n" * 10)
    r = run([java, f"-agentpath:{AGENT}=heap=dump,format=b,file=dumponly.hprof", "-cp", "classes",
             "Work"])
    assert r.returncode == 0, r.stderr
    cases = [
        ("truncated", [CONVERT, "-o", "out.html", "truncated.hprof"], 1, "truncated"),
        ("corrupt", [CONVERT, "-o", "out.html", "garbage.hprof"], 1, "garbage.hprof"),
        ("heap dump only", [CONVERT, "-o", "out.html", "dumponly.hprof"], 1, "only a heap dump"),
        ("kind absent", [CONVERT, "-k", "monitor", "-o", "out.html", good], 1, "MONITOR TIME"),
        ("unknown option", [CONVERT, "--frobnicate", "-o", "out.html", good], 2,
         "unknown option '--frobnicate'"),
        ("unknown measure", [CONVERT, "-m", "bogus", "-o", "out.html", good], 2, "bogus"),
        ("unknown format", [CONVERT, "-t", "svg", "-o", "out.html", good], 2, "svg"),
        ("missing file", [CONVERT, "-o", "out.html", "nosuch.hprof"], 1, "nosuch.hprof"),
        ("unwritable output", [CONVERT, "-o", "/nonexistent-dir/out.html", good], 2,
         "/nonexistent-dir/out.html"),
    ]
    for what, cmd, code, words in cases:
        before = set(os.listdir(work))
        r = run(cmd)
        msg = r.stderr.strip().splitlines()
        check(r.returncode == code, f"{what}: exit {r.returncode}, want {code}")
        check(len(msg) == 1 and words in msg[0] and msg[0].startswith("hprof-convert: "),
              f"{what}: message {msg!r} should be one line naming {words!r}")
        check(r.stdout == "", f"{what}: wrote to stdout")
        check(set(os.listdir(work)) == before, f"{what}: left {set(os.listdir(work)) - before}")
    # an output that is not a regular file is written in place, never replaced by a rename
    # (a rename over /dev/null would put a plain file in its place)
    open("target.txt", "w").close()
    os.symlink("target.txt", "link.txt")
    r = run([CONVERT, "-o", "link.txt", good])
    check(r.returncode == 0 and os.path.islink("link.txt") and os.path.getsize("target.txt") > 0,
          f"symlink output: {r.stderr} islink={os.path.islink('link.txt')}")
    os.mkfifo("fifo")
    reader = subprocess.Popen(["cat", "fifo"], stdout=subprocess.PIPE)
    r = run([CONVERT, "-o", "fifo", good], timeout=60)
    got = reader.communicate(timeout=60)[0]
    import stat
    check(r.returncode == 0 and stat.S_ISFIFO(os.lstat("fifo").st_mode) and
          got.endswith(b"\n") and b";" in got, f"fifo output: {r.stderr} {got[:80]!r}")
    r = run([CONVERT, "-o", "ok.html", good])
    check(r.returncode == 0 and os.path.getsize("ok.html") > 0, "a good file converts")
    check([f for f in os.listdir(work) if ".tmp." in f] == [], "temporary file left behind")

elif mode == "pprof":
    for name, kind, path in profiles:
        out = os.path.join(work, name + ".pb.gz")
        r = run([CONVERT, "-o", out, path])
        if not check(r.returncode == 0, f"{name}: {r.stderr}"):
            continue
        check(gzip.open(out).read(2) != b"", f"{name}: not gzip")
        raw = run(["go", "tool", "pprof", "-raw", out])
        check(raw.returncode == 0, f"{name}: go tool pprof -raw: {raw.stderr}")
        # "Samples:" then the sample types line, then "v1 v2 ...: loc loc ..." per sample
        body = raw.stdout.split("Samples:\n", 1)[1].split("Locations", 1)[0].splitlines()
        types = [t.split("/")[0].replace("[dflt]", "") for t in body[0].split()]
        sums = [0] * len(types)
        nsamples = 0
        for line in body[1:]:
            m = re.match(r"\s*([\d ]+):", line)
            if m:
                nsamples += 1
                for i, v in enumerate(m.group(1).split()):
                    sums[i] += int(v)
        for i, measure in enumerate(MEASURES[kind]):
            want = sum(n for _, n in collapsed(path, kind, measure))
            check(sums[i] == want, f"{name} {measure} ({types[i]}): pprof total {sums[i]}, "
                                   f"collapsed {want}")
        # line numbers: Work.ints allocates on its own line of Work.java
        if name in ("sites-b", "samples-b"):
            src = open(os.path.join(HERE, "convert", "Work.java")).read().splitlines()
            want = 1 + next(i for i, l in enumerate(src) if "static int[] ints(" in l)
            locs = raw.stdout.split("Locations", 1)[1]
            if name == "sites-b":
                check(f"Work.ints Work.java:{want} " in locs, f"{name}: no Work.ints line {want}")
            check(re.search(r"Work\.\w+ Work\.java:\d+ ", locs) is not None,
                  f"{name}: no Work.java line in the locations")
        # -top's first entry (flat, measure 0) is our hottest leaf with its value
        top = run(["go", "tool", "pprof", "-top", "-nodecount=3", "-sample_index=0",
                   "-unit=minimum", out]).stdout
        rows = [l.split() for l in top.split("cum%\n", 1)[1].splitlines() if l.strip()]
        names, best = hottest(collapsed(path, kind, MEASURES[kind][0]))
        first = rows[0]
        flat = int(re.match(r"\d+", first[0]).group(0)) if re.match(r"\d+\D*$", first[0]) else None
        check(" ".join(first[5:]) in names, f"{name}: pprof -top first {first}, ours {names}")
        check(flat in (best, None) and (flat is not None or "ms" in first[0] or "B" in first[0]),
              f"{name}: pprof -top flat {first[0]}, ours {best}")
        # -traces: one block per sample, each ending with its stack's root
        traces = run(["go", "tool", "pprof", "-traces", out]).stdout
        blocks = traces.count("-----------+-------------------------------------------------------")
        check(blocks == nsamples + 1 or blocks == nsamples, f"{name}: -traces {blocks} blocks, "
                                                              f"{nsamples} samples")
        check(all(n in traces for n in names), f"{name}: {names} not in -traces")

elif mode == "html":
    prof = tempfile.mkdtemp(prefix="chromium-")
    for name, kind, path in profiles:
        out = os.path.join(work, name + ".html")
        r = run([CONVERT, "-o", out, path])
        if not check(r.returncode == 0, f"{name}: {r.stderr}"):
            continue
        page = open(out, encoding="utf-8").read()
        check("http://" not in page.replace("http://www.w3.org", "") and "src=" not in page,
              f"{name}: the page loads something")
        dom = run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                   f"--user-data-dir={prof}", "--virtual-time-budget=5000", "--dump-dom",
                   "file://" + out], timeout=120).stdout
        status = re.search(r'<div id="status"([^>]*)>', dom)
        check(status and 'data-state="rendered"' in status.group(1),
              f"{name}: not rendered: {status.group(0) if status else dom[-300:]}")
        errors = re.search(r'<pre id="errors">(.*?)</pre>', dom, re.S)
        check(errors and errors.group(1).strip() == "", f"{name}: script errors {errors}")
        names, best = hottest(collapsed(path, kind, MEASURES[kind][0]))
        first = re.search(r'<ol id="top"><li>(.*?) \u2014 ([\d,]+) ', dom)
        check(first and first.group(1).replace("&amp;", "&").replace("&lt;", "<")
              .replace("&gt;", ">") in names and int(first.group(2).replace(",", "")) == best,
              f"{name}: first hottest frame {first and first.groups()}, ours {names} {best}")
        total = sum(n for _, n in collapsed(path, kind, MEASURES[kind][0]))
        check(status and f'data-total="{total}"' in status.group(1),
              f"{name}: page total {status and status.group(1)}, ours {total}")
        title = re.search(r'<h1 id="title">(.*?)</h1>', dom)
        check(title and MEASURES[kind][0] in title.group(1), f"{name}: title {title}")
        if name in ("sites-b", "samples-b"):
            # search and zoom through the address (#search=RE&zoom=NAME): the matched share is
            # the stacks holding a matching frame, each once; the zoomed frame's value is that
            # of the first node of that name in the tree (siblings in name order)
            stacks = collapsed(path, kind, MEASURES[kind][0])
            pattern, zoom = r"Work\.(ints|spin)$", "Work.main"
            want_match = sum(n for f, n in stacks if any(re.search(pattern, x) for x in f))
            tree = {}
            for frames, n in stacks:
                node = tree
                for f in frames:
                    node = node.setdefault(f, [0, {}])
                    node[0] += n
                    node = node[1]

            def first(node):
                for f in sorted(node):
                    if f == zoom:
                        return node[f][0]
                    v = first(node[f][1])
                    if v is not None:
                        return v
            want_zoom = first(tree)
            url = "file://" + out + "#search=" + urllib.parse.quote(pattern) + "&zoom=" + zoom
            dom = run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                       f"--user-data-dir={prof}", "--virtual-time-budget=5000", "--dump-dom",
                       url], timeout=120).stdout
            m = re.search(r'<span id="matched" data-value="(\d+)">matched: ([\d.]+)%', dom)
            check(m and int(m.group(1)) == want_match and want_match > 0,
                  f"{name}: search matched {m and m.groups()}, ours {want_match}")
            v = re.search(r'<span id="view" data-value="(\d+)">zoomed on ([^ <]+)', dom)
            check(v and int(v.group(1)) == want_zoom and v.group(2) == zoom,
                  f"{name}: zoom {v and v.groups()}, ours {want_zoom}")
            errors = re.search(r'<pre id="errors">(.*?)</pre>', dom, re.S)
            check(errors and errors.group(1).strip() == "", f"{name}: script errors {errors}")
    shutil.rmtree(prof, ignore_errors=True)

shutil.rmtree(work, ignore_errors=True)
finish()

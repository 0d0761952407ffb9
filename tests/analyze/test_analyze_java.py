#!/usr/bin/env python3
"""test_analyze_java.py HPROF_ANALYZE HPROF_DIFF HPROF_READ JAVA_HOME AGENT

hprof-analyze and hprof-diff's retained sizes on real dumps of tests/analyze/LeakApp.java, run
with 1,000 and 11,000 leaked entries, dumped by the agent (heap=dump,format=b) and by HotSpot
(jcmd GC.heap_dump, plain and -gz=1):
  - object counts equal hprof-read's (instances + arrays + classes);
  - retained sizes equal those of VisualVM's heap library (tests/analyze/RetainedCheck.java)
    for its 100 biggest retainers (the known gap: class objects, doc/heap-analysis.md);
  - the shortest path to an Entry goes through class LeakApp$Registry's static ENTRIES;
  - the entries' zeroed byte[16] payloads are one group of identical arrays; collections listed;
  - per thread: main's frames keep its long[4096] (jcmd: the agent dumps at exit, after
    main), leak-worker's its int[8192];
  - hprof-diff of the agent's two dumps: one leak verdict, held by LeakApp$Registry.ENTRIES,
    growing by 10,000 entries (10,000 x 56 bytes and the array), exit 1; same dump twice: 0;
  - allocation sites with heap=all: 11,000 entries at the line of LeakApp.java that makes them,
    the suspect's accumulated site; hprof-diff's verdict names the holder and that line, and
    only the entries and their payloads grow by thousands per site (text and JSON);
  - the 2nd dump of a file holding two; bad input: one line with an offset, exit 2;
  - a PHD dump (format=phd) of the same program: objects, bytes and references as phd-read
    counts them, everything reached from the inferred roots, the Entry class's retained size
    and the leak's accumulation point (an Object[] under class LeakApp$Registry) as in the
    HPROF analysis; a cut PHD file: one line with an offset, exit 2;
  - --format=html in headless chromium: one level shown, seven opened by "#open=7".
Ends with "SUITE analyze-java: N passed, N failed".
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

ANALYZE, DIFF, READ, JAVA_HOME, AGENT = [os.path.abspath(a) for a in sys.argv[1:6]]
HERE = os.path.dirname(os.path.abspath(__file__))
java = os.path.join(JAVA_HOME, "bin", "java")
javac = os.path.join(JAVA_HOME, "bin", "javac")
jcmd = os.path.join(JAVA_HOME, "bin", "jcmd")
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(HERE))
from pychecks import check, finish, run  # noqa: E402


def analyze(path, *opts):
    r = run([ANALYZE, "-q", "--format=json", *opts, path])
    if not check(r.returncode == 0, f"hprof-analyze {path}: exit {r.returncode} {r.stderr}"):
        return None
    return json.loads(r.stdout)


work = tempfile.mkdtemp(prefix="test_analyze_java.")
try:
    r = run([javac, "-d", work, os.path.join(HERE, "LeakApp.java")])
    assert r.returncode == 0, r.stderr
    dumps = {}
    for n in (1000, 11000):
        out = os.path.join(work, f"agent{n}.hprof")
        r = run([java, f"-agentpath:{AGENT}=heap=dump,format=b,file={out}", "-cp", work,
                 "LeakApp", str(n), "500"])
        check(r.returncode == 0 and os.path.exists(out), f"agent run {n}: {r.stderr[-500:]}")
        dumps[f"agent{n}"] = out
        # HotSpot's dumper on a live run of the same program
        p = subprocess.Popen([java, "-cp", work, "LeakApp", str(n), "120000"],
                             stdout=subprocess.PIPE, text=True)
        line = p.stdout.readline()
        pid = line.split()[1]
        for gz in ("", ".gz"):
            hs = os.path.join(work, f"hs{n}.hprof{gz}")
            r = run([jcmd, pid, "GC.heap_dump"] + (["-gz=1"] if gz else []) + [hs])
            check(r.returncode == 0 and os.path.exists(hs), f"jcmd dump {hs}: {r.stdout}")
            dumps[f"hs{n}{gz}"] = hs
        p.kill()
        p.wait()

    jar = glob.glob("/usr/share/visualvm/**/org-graalvm-visualvm-lib-jfluid-heap.jar",
                    recursive=True)
    if jar:
        r = run([javac, "-cp", jar[0], "-d", work, os.path.join(HERE, "RetainedCheck.java")])
        assert r.returncode == 0, r.stderr

    for name, path in sorted(dumps.items()):
        rep = analyze(path, "--top=1000", "--depth=2", "--path=LeakApp$Entry")
        if not rep:
            continue
        s = rep["summary"]
        if not path.endswith(".gz"):
            rd = run([READ, "--json", "--allow-dangling", "1000000", path])
            try:
                d = json.loads(rd.stdout)["heap_dumps"][0]
                want = d["instances"] + d["object_arrays"] + d["primitive_arrays"] + d["classes"]
                check(s["objects"] == want, f"{name}: {s['objects']} objects, hprof-read {want}")
            except (ValueError, KeyError, IndexError) as e:
                check(False, f"{name}: hprof-read --json: {e} {rd.stderr[:300]}")
        check(s["reachable_objects"] + s["unreachable_objects"] == s["objects"],
              f"{name}: reachable + unreachable != objects")
        via = [st["via"] for st in rep.get("path", [])]
        check("static ENTRIES" in via and rep["path"][-1]["object"].startswith("LeakApp$Entry"),
              f"{name}: path to an Entry: {via}")
        threads = {t["name"]: t for t in rep["threads"]}
        if name.startswith("hs"):  # the agent dumps at VM exit, when main has returned
            check(threads.get("main", {}).get("frames_retained_bytes", 0) >= 16 + 8 * 4096,
                  f"{name}: main's frames: {threads.get('main')}")
        check(threads.get("leak-worker", {}).get("frames_retained_bytes", 0) >= 16 + 4 * 8192,
              f"{name}: leak-worker's frames: {threads.get('leak-worker')}")
        # the 11,000 (or 1,000) zeroed byte[16] payloads are one group of identical arrays
        n = 11000 if "11000" in name else 1000
        big = max(rep["duplicates"], key=lambda r: r["copies"], default=None)
        check(big and big["type"] == "byte[]" and n <= big["copies"] <= n + 50 and
              big["wasted_bytes"] == (big["copies"] - 1) * 32, f"{name}: duplicates: {big}")
        colls = {c["class"]: c for c in rep["collections"]}
        check(colls.get("java.util.ArrayList", {}).get("instances", 0) >= 1 and
              "java.util.HashMap" in colls, f"{name}: collections: {colls}")
        if jar and not path.endswith(".gz"):
            cp = f"{jar[0]}:{work}"
            r = run([java, "-Xmx2g", "-cp", cp, "RetainedCheck", path, "100"])
            if not check(r.returncode == 0, f"{name}: RetainedCheck: {r.stderr[-300:]}"):
                continue
            mine = {o["id"]: o for o in rep["objects"]}
            equal, gaps = 0, []
            for line in r.stdout.splitlines():
                oid, shallow, retained, cls = line.split()[:4]
                o = mine.get("0x" + oid)
                if o and o["retained_bytes"] == int(retained):
                    equal += 1
                else:
                    gaps.append((cls, retained, o and o["retained_bytes"]))
            # the known gap: how the library counts around class objects (doc/heap-analysis.md)
            print(f"{name}: {equal} of 100 VisualVM retained sizes equal; others: {gaps}")
            check(equal >= 90, f"{name}: only {equal} of VisualVM's 100 biggest retainers equal")
            check(all(g[2] is not None and abs(int(g[1]) - g[2]) <= 0.02 * int(g[1]) + 16384
                      for g in gaps), f"{name}: retained sizes far from VisualVM's: {gaps}")

    # PHD (format=phd) of the same program: roots inferred, no field names (doc/heap-analysis.md,
    # "PHD dumps"); object counts against phd-read, the leak against the HPROF analysis
    phd = os.path.join(work, "leak11000.phd")
    r = run([java, f"-agentpath:{AGENT}=format=phd,file={phd}", "-cp", work, "LeakApp", "11000",
             "500"])
    check(r.returncode == 0 and os.path.exists(phd), f"agent run phd: {r.stderr[-500:]}")
    rep = analyze(phd, "--top=1000", "--path=LeakApp$Entry")
    hrep = analyze(dumps["agent11000"], "--top=1000", "--no-waste", "--no-sites")
    if rep and hrep:
        s = rep["summary"]
        rd = run([os.path.join(os.path.dirname(READ), "phd-read"), "--json", phd])
        try:
            d = json.loads(rd.stdout)
            check(s["objects"] == d["records"] and s["reachable_bytes"] == d["heap_bytes"] and
                  s["references"] == d["references"],
                  f"phd: {s['objects']} objects, {s['reachable_bytes']} bytes, "
                  f"{s['references']} references; phd-read {d['records']}, {d['heap_bytes']}, "
                  f"{d['references']}")
        except (ValueError, KeyError) as e:
            check(False, f"phd: phd-read --json: {e} {rd.stderr[:300]}")
        check(s["unreachable_objects"] == 0 and s["threads"] == 0 and s["gc_roots"] > 0,
              f"phd: every object reached from inferred roots: {s}")
        pc = {c["class"]: c for c in rep["classes"]}
        hc = {c["class"]: c for c in hrep["classes"]}
        e_p, e_h = pc.get("LeakApp$Entry", {}), hc.get("LeakApp$Entry", {})
        check(e_p.get("instances") == 11000 == e_h.get("instances") and
              e_p.get("retained_bytes") == e_h.get("retained_bytes") == 11000 * 56,
              f"phd: LeakApp$Entry {e_p}, hprof {e_h}")
        # the leak: HPROF's suspect whose path holds Registry.ENTRIES; PHD's held by the class
        hs = [x for x in hrep["suspects"] if x["kind"] == "object" and "static ENTRIES" in x["path"]]
        ps = [x for x in rep["suspects"] if x["kind"] == "object" and
              x["suspect"] == "class LeakApp$Registry"]
        check(len(hs) == 1 and len(ps) == 1 and
              ps[0]["accumulation_point"].startswith("java.lang.Object[]@") and
              hs[0]["accumulation_point"].startswith("java.lang.Object[]@") and
              ps[0]["accumulated_bytes"] == hs[0]["accumulated_bytes"] >= 11000 * 60,
              f"phd: suspects {ps}, hprof {hs}")
        steps = [(st["via"], st["object"].split("@")[0]) for st in rep.get("path", [])]
        check(steps == [("inferred root", "class LeakApp$Registry"),
                        ("reference", "java.util.ArrayList"), ("reference", "java.lang.Object[]"),
                        ("reference", "LeakApp$Entry")], f"phd: path to an Entry: {steps}")
    cut = os.path.join(work, "cut.phd")
    with open(phd, "rb") as f_in, open(cut, "wb") as f_out:
        f_out.write(f_in.read(os.path.getsize(phd) // 2))
    r = run([ANALYZE, "-q", cut])
    check(r.returncode == 2 and r.stdout == "" and len(r.stderr.splitlines()) == 1 and
          "offset" in r.stderr, f"truncated phd: exit {r.returncode}, {r.stderr!r}")

    # the HTML page: self-contained, its tree opens level by level (headless chromium)
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    page = os.path.join(work, "leak.html")
    r = run([ANALYZE, "-q", "--format=html", "--depth=8", "--fanout=10", dumps["agent11000"]])
    check(r.returncode == 0 and "<script src" not in r.stdout and "http" not in r.stdout,
          f"--format=html: exit {r.returncode}, self-contained")
    open(page, "w").write(r.stdout)
    if chromium:
        def dom(hash_):
            return run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom",
                        "file://" + page + hash_], timeout=120).stdout
        closed, opened = dom(""), dom("#open=7")
        check('data-depth="1"' in closed and 'data-depth="2"' not in closed,
              "html: only the first level before anything is opened")
        check("LeakApp$Entry@" in opened and "class LeakApp$Registry" in opened and
              'data-depth="7"' in opened, "html: seven levels opened reach the entries")
    else:
        print("chromium not found: the HTML page is not rendered")

    # the leak verdict (issue 25)
    r = run([DIFF, dumps["agent1000"], dumps["agent11000"]])
    leaks = [l for l in r.stdout.splitlines() if l.strip().startswith("LEAK")]
    check(r.returncode == 1, f"hprof-diff leak: exit {r.returncode}: {r.stderr}")
    check(len(leaks) == 1, f"hprof-diff: one leak verdict expected: {leaks}")
    if leaks:
        m = re.search(r"LEAK \+(\d+) bytes .* held by class LeakApp\$Registry\.ENTRIES", leaks[0])
        # 10,000 entries of 24 + 32 bytes, and the ArrayList's array grown by at most 1.5x
        check(m and 10000 * 56 <= int(m.group(1)) <= 10000 * 56 + 4 * (11000 * 3 // 2) + 16,
              f"hprof-diff verdict: {leaks[0]}")
        check("accumulates: LeakApp$Entry (1000 -> 11000 objects)" in r.stdout,
              f"hprof-diff: what accumulates: {r.stdout[-800:]}")
    # the same verdict in the JSON output (issue 25), no allocation sites in these dumps
    r = run([DIFF, "--json", "-", dumps["agent1000"], dumps["agent11000"]])
    try:
        held = json.loads(r.stdout)["retained"]
        v = held["verdicts"]
        check(r.returncode == 1 and len(v) == 1 and
              v[0]["holder"] == "class LeakApp$Registry.ENTRIES" and
              leaks and f"LEAK +{v[0]['growth_bytes']} bytes" in leaks[0] and
              v[0]["accumulates_new_objects"] == 11000 and v[0]["allocated_at"] == "" and
              not held["sites"]["base_has_sites"] and held["sites"]["grown"] == [],
              f"hprof-diff --json retained: {held}")
    except (ValueError, KeyError) as e:
        check(False, f"hprof-diff --json: {e}: {r.stdout[-600:]}")
    r = run([DIFF, dumps["agent11000"], dumps["agent11000"]])
    check(r.returncode == 0 and "0 leak verdict" in r.stdout,
          f"hprof-diff same dump: exit {r.returncode} {r.stdout[-300:]}")

    # allocation sites (issue 30): the same two runs with heap=all; the leak suspect and the
    # hprof-diff verdict name the holder and the line of LeakApp.java that made the entries
    with open(os.path.join(HERE, "LeakApp.java")) as f:
        line = next(i for i, t in enumerate(f, 1) if "new Entry(i)" in t)
    site = f"LeakApp$Entry at LeakApp.main(LeakApp.java:{line})"
    for n in (1000, 11000):
        out = os.path.join(work, f"sites{n}.hprof")
        r = run([java, f"-agentpath:{AGENT}=heap=all,format=b,file={out}", "-cp", work,
                 "LeakApp", str(n), "500"])
        check(r.returncode == 0 and os.path.exists(out), f"heap=all run {n}: {r.stderr[-500:]}")
        dumps[f"sites{n}"] = out
    rep = analyze(dumps["sites11000"], "--no-waste", "--top=50")
    if rep:
        rows = [s for s in rep.get("sites", []) if s["class"] == "LeakApp$Entry"]
        check(len(rows) == 1 and rows[0]["objects"] == 11000 and
              rows[0]["stack"] == site.split(" at ", 1)[1],
              f"sites: one LeakApp$Entry site of 11000 objects at line {line}: {rows}")
        sus = [s for s in rep["suspects"] if s["accumulated_site"] == site]
        check(sus and "static ENTRIES" in sus[0]["path"] and
              sus[0]["allocated_at"].startswith("java.lang.Object[] at "),
              f"suspect with the entries' site: {rep['suspects']}")
    r = run([DIFF, "--json", "-", dumps["sites1000"], dumps["sites11000"]])
    try:
        held = json.loads(r.stdout)["retained"]
        v = held["verdicts"]
        check(r.returncode == 1 and len(v) == 1 and
              v[0]["holder"] == "class LeakApp$Registry.ENTRIES" and v[0]["allocated_at"] == site
              and v[0]["site_base_objects"] == 1000 and v[0]["site_new_objects"] == 11000,
              f"hprof-diff heap=all verdict: {v}")
        grown = {g["site"]: g["new_objects"] - g["base_objects"] for g in held["sites"]["grown"]}
        # the entries and their payloads grew by 10,000; nothing else by more than a few
        check(grown.get(site) == 10000 and
              sum(1 for k, d in grown.items() if d >= 100) == 2, f"sites grown: {grown}")
    except (ValueError, KeyError, IndexError) as e:
        check(False, f"hprof-diff --json heap=all: {e}: {r.stdout[-600:]}")
    r = run([DIFF, dumps["sites1000"], dumps["sites11000"]])
    check("held by class LeakApp$Registry.ENTRIES" in r.stdout and
          f"allocated at: {site} (1000 -> 11000 objects)" in r.stdout,
          f"hprof-diff heap=all text: {r.stdout[-1500:]}")

    # the 2nd dump of a file that holds two: records of the second file after the first
    two = os.path.join(work, "two.hprof")
    with open(dumps["agent1000"], "rb") as a, open(dumps["agent11000"], "rb") as b, \
            open(two, "wb") as o:
        o.write(a.read())
        body = b.read()
        o.write(body[body.index(b"\0") + 13:])
    one, second = analyze(two, "--dump=1"), analyze(two, "--dump=2")
    ref1, ref2 = analyze(dumps["agent1000"]), analyze(dumps["agent11000"])
    if one and second and ref1 and ref2:
        check(one["summary"]["objects"] == ref1["summary"]["objects"] and
              second["summary"]["objects"] == ref2["summary"]["objects"] and
              second["summary"]["dumps_in_file"] == 2, "--dump=N on a file of two dumps")

    # bad input: one line with an offset, exit 2
    data = open(dumps["agent1000"], "rb").read()
    cases = {"truncated": data[: len(data) // 2], "garbage": b"hello world\n" * 10,
             "empty": b"", "corrupt-gzip": open(dumps["hs1000.gz"], "rb").read()[:5000]}
    for what, content in cases.items():
        p = os.path.join(work, what)
        open(p, "wb").write(content)
        r = run([ANALYZE, p], timeout=60)
        lines = r.stderr.strip().splitlines()
        check(r.returncode == 2 and len(lines) == 1 and "offset" in lines[0] and not r.stdout,
              f"bad input {what}: exit {r.returncode}, {r.stderr!r}")
    r = run([ANALYZE, os.path.join(work, "no-such-file")])
    check(r.returncode == 1, f"missing file: exit {r.returncode}")
finally:
    shutil.rmtree(work, ignore_errors=True)

finish("analyze-java")

"""One line about an hprof-diff JSON (bench/diff/*.sh): regressions, samples, the uniform
estimate, the largest |z| of a judged stack and what each flagged entry is.

    python3 summary.py DIFF.json PREFIX
"""
import json
import sys

d = json.load(open(sys.argv[1]))
c = d["comparisons"][0]
u = c["uniform"][0] if c.get("uniform") else None
stacks = [e for e in c["entries"] if e["group"] == "stack" and e["verdict"] != "not judged"]
zmax = max((abs(e["z_count"][0]) for e in stacks if e["z_count"][0] is not None), default=0)
flag = [e["key"].split(";")[-2] if e["group"] == "stack" else e["key"]
        for e in c["entries"] if e["verdict"] == "regression" and e["group"] == "stack"]
line = "%s, %d regressions, samples %d/%d, max |z| %.1f" % (
    sys.argv[2], d["regressions"], c["base_total"][0], c["new_total"][0], zmax)
if u:
    line += ", uniform %s x%.3f (%d of %d, scatter %.0f)" % (
        "FINDING" if u["finding"] else "accepted" if u["accepted"] else "none",
        u["factor"], u["agreeing"], u["informative"], u["scatter"])
if flag:
    line += ", flagged stacks through: " + " ".join(flag)
print(line)

#!/usr/bin/env python3
"""embed.py IN OUT NAME: writes OUT, a C header holding IN as `static const char NAME[]`."""
import sys

src, out, name = sys.argv[1:4]
data = open(src, encoding="utf-8").read()
with open(out, "w", encoding="utf-8") as f:
    f.write(f"/* generated from {src.rsplit('/', 1)[-1]} by embed.py: do not edit */\n")
    f.write(f"static const char {name}[] =\n")
    for line in data.splitlines(keepends=True):
        esc = line.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
        f.write(f'    "{esc}"\n')
    f.write(";\n")

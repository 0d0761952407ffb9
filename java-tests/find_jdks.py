#!/usr/bin/env python3
"""Prints "<feature-version> <home>" for each JDK (with javac and a runtime image) found in the
given directories or named directly, one per line, one per feature version, skipping the JDK at
--except. Used by meson to run the Java tests on every JDK the agent supports that is installed.

usage: find_jdks.py [--except HOME] PATH...   (PATH: a JDK home, or a directory of JDK homes)
"""
import os
import sys


def version(home):
    try:
        with open(os.path.join(home, 'release')) as f:
            for line in f:
                if line.startswith('JAVA_VERSION='):
                    v = line.split('=', 1)[1].strip().strip('"')
                    return int(v.split('.')[0].split('-')[0].split('+')[0])
    except (OSError, ValueError):
        pass
    return None


def is_jdk(home):
    return (os.path.isfile(os.path.join(home, 'bin', 'javac')) and
            os.path.isfile(os.path.join(home, 'lib', 'modules')) and version(home) is not None)


def main():
    args = sys.argv[1:]
    skip = None
    if len(args) >= 2 and args[0] == '--except':
        skip = os.path.realpath(args[1]) if args[1] else None
        args = args[2:]
    found = {}
    for p in args:
        cands = [p] if is_jdk(p) else (
            [os.path.join(p, d) for d in sorted(os.listdir(p))] if os.path.isdir(p) else [])
        for c in cands:
            r = os.path.realpath(c)
            if r == skip or not is_jdk(r):
                continue
            found.setdefault(version(r), r)
    for v in sorted(found):
        print(v, found[v])


if __name__ == '__main__':
    main()
